// HealthService: the standard grpc.health.v1.Health service (Check and
// Watch), with roost's service names:
//
//   ""                         the server: SERVING once ready, NOT_SERVING
//   "roost.v1.Lookup"          before that and from a drain on
//   "roost.v1.Lookup/<table>"  SERVING while the table serves a version,
//                              NOT_SERVING while it has none (or the server
//                              drains); an unknown table is NOT_FOUND
//   "roost.v1.Registry"        NOT_SERVING while the registry is stalled
//
// gRPC's default health service keeps every name it was ever given; this one
// asks a function for the status when asked, so tables that come and go
// leave nothing behind.
//
// Watch streams stay open for as long as their clients like, each holding a
// call's memory, and need no credentials: at most `max_watches` are open at
// once (--max-health-watches); past that a Watch is refused with
// RESOURCE_EXHAUSTED. Check is not limited (it holds nothing).
//
// Example:
//   HealthService health([&](std::string_view service) { ... }, &metrics,
//                        /*max_watches=*/100);
//   builder.RegisterService(&health);
//   health.Changed("roost.v1.Lookup/users");  // after a swap
#ifndef ROOST_SERVER_HEALTH_SERVICE_H_
#define ROOST_SERVER_HEALTH_SERVICE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "grpc/health/v1/health.grpc.pb.h"
#include "server/metrics.h"

namespace roost {

class HealthService final : public grpc::health::v1::Health::CallbackService {
 public:
  using ServingStatus = grpc::health::v1::HealthCheckResponse::ServingStatus;
  // The status of `service` now; nullopt for a service it does not know.
  // Called from gRPC's threads and from Changed(): must be thread-safe.
  using StatusFunction =
      std::function<std::optional<ServingStatus>(std::string_view service)>;

  HealthService(StatusFunction status, RpcMetrics* metrics,
                size_t max_watches = SIZE_MAX)
      : status_(std::move(status)),
        metrics_(metrics),
        max_watches_(max_watches) {}

  grpc::ServerUnaryReactor* Check(
      grpc::CallbackServerContext* context,
      const grpc::health::v1::HealthCheckRequest* request,
      grpc::health::v1::HealthCheckResponse* response) override;
  grpc::ServerWriteReactor<grpc::health::v1::HealthCheckResponse>* Watch(
      grpc::CallbackServerContext* context,
      const grpc::health::v1::HealthCheckRequest* request) override;

  // Any thread: the status of `service` may have changed; its watchers get
  // the new one if it did.
  void Changed(const std::string& service);
  // The same, for every service watched.
  void ChangedAll();

  // Watch calls open now, and refused so far.
  size_t watches_open() const {
    std::lock_guard lock(mu_);
    return open_;
  }
  uint64_t watches_refused() const {
    std::lock_guard lock(mu_);
    return refused_;
  }
  // roost_health_watches_open and roost_health_watches_refused_total.
  void CollectMetrics(std::vector<prometheus::MetricFamily>* out) const;

 private:
  class Watcher;
  ServingStatus StatusOf(std::string_view service) const;

  const StatusFunction status_;
  RpcMetrics* const metrics_;
  const size_t max_watches_;
  mutable std::mutex mu_;
  std::map<std::string, std::set<Watcher*>, std::less<>> watchers_;
  size_t open_ = 0;       // guarded by mu_
  uint64_t refused_ = 0;  // guarded by mu_
};

}  // namespace roost

#endif  // ROOST_SERVER_HEALTH_SERVICE_H_
