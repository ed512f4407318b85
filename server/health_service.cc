#include "server/health_service.h"

#include <chrono>

#include "server/call_context.h"
#include "util/str_cat.h"

namespace roost {
namespace {
using grpc::health::v1::HealthCheckResponse;
using Clock = std::chrono::steady_clock;
}  // namespace

HealthService::ServingStatus HealthService::StatusOf(
    std::string_view service) const {
  return status_(service).value_or(HealthCheckResponse::SERVICE_UNKNOWN);
}

grpc::ServerUnaryReactor* HealthService::Check(
    grpc::CallbackServerContext* context,
    const grpc::health::v1::HealthCheckRequest* request,
    HealthCheckResponse* response) {
  const Clock::time_point start = Clock::now();
  metrics_->Started(Method::kHealthCheck);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  grpc::Status status;
  if (auto s = status_(request->service())) {
    response->set_status(*s);
  } else {
    status = grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown service");
  }
  metrics_->Handled(Method::kHealthCheck, status.error_code(),
                    Clock::now() - start);
  if (CallContext* call = CallContext::Of(context)) call->SendStarted();
  reactor->Finish(status);
  return reactor;
}

// One Watch call: writes the status when it starts and whenever it changes,
// one write at a time (a change during a write is written after it).
class HealthService::Watcher final
    : public grpc::ServerWriteReactor<HealthCheckResponse> {
 public:
  Watcher(HealthService* service, std::string name)
      : service_(service), name_(std::move(name)), start_(Clock::now()) {
    service_->metrics_->Started(Method::kHealthWatch);
    service_->metrics_->MessageReceived(Method::kHealthWatch);
    std::lock_guard lock(service_->mu_);
    if (service_->open_ >= service_->max_watches_) {
      ++service_->refused_;
      FinishLocked(grpc::Status(
          grpc::StatusCode::RESOURCE_EXHAUSTED,
          StrCat("too many health Watch calls open (--max-health-watches ",
                 service_->max_watches_, "); retry later")));
      return;
    }
    ++service_->open_;
    watching_ = true;
    service_->watchers_[name_].insert(this);
    UpdateLocked();
  }

  // REQUIRES: service_->mu_ held.
  void UpdateLocked() {
    if (finished_) return;
    const ServingStatus now = service_->StatusOf(name_);
    if (writing_ || (sent_ && now == last_)) return;
    last_ = now;
    sent_ = true;
    writing_ = true;
    response_.set_status(now);
    StartWrite(&response_);
  }

  void OnWriteDone(bool ok) override {
    std::lock_guard lock(service_->mu_);
    writing_ = false;
    if (!ok) {
      FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "closed"));
      return;
    }
    service_->metrics_->MessageSent(Method::kHealthWatch);
    UpdateLocked();
  }

  void OnCancel() override {
    std::lock_guard lock(service_->mu_);
    FinishLocked(grpc::Status::CANCELLED);
  }

  void OnDone() override {
    if (watching_) {
      std::lock_guard lock(service_->mu_);
      auto it = service_->watchers_.find(name_);
      it->second.erase(this);
      if (it->second.empty()) service_->watchers_.erase(it);
      --service_->open_;
    }
    delete this;
  }

 private:
  void FinishLocked(const grpc::Status& status) {
    if (finished_) return;
    finished_ = true;
    service_->metrics_->Handled(Method::kHealthWatch, status.error_code(),
                                Clock::now() - start_);
    Finish(status);
  }

  HealthService* service_;
  const std::string name_;
  const Clock::time_point start_;
  HealthCheckResponse response_;
  ServingStatus last_ = HealthCheckResponse::UNKNOWN;
  bool sent_ = false;
  bool writing_ = false;
  bool finished_ = false;
  bool watching_ = false;  // counted in open_, in watchers_
};

grpc::ServerWriteReactor<HealthCheckResponse>* HealthService::Watch(
    grpc::CallbackServerContext* /*context*/,
    const grpc::health::v1::HealthCheckRequest* request) {
  return new Watcher(this, request->service());
}

void HealthService::Changed(const std::string& service) {
  std::lock_guard lock(mu_);
  auto it = watchers_.find(service);
  if (it == watchers_.end()) return;
  for (Watcher* w : it->second) w->UpdateLocked();
}

void HealthService::ChangedAll() {
  std::lock_guard lock(mu_);
  for (auto& [name, set] : watchers_) {
    for (Watcher* w : set) w->UpdateLocked();
  }
}

void HealthService::CollectMetrics(
    std::vector<prometheus::MetricFamily>* out) const {
  AddScalar(out, "roost_health_watches_open",
            "Health Watch calls open (at most --max-health-watches).",
            prometheus::MetricType::Gauge, static_cast<double>(watches_open()));
  AddScalar(out, "roost_health_watches_refused_total",
            "Health Watch calls refused because "
            "--max-health-watches were open.",
            prometheus::MetricType::Counter,
            static_cast<double>(watches_refused()));
}

}  // namespace roost
