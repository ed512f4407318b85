#include "server/admin_service.h"

#include <chrono>
#include <utility>

#include "server/call_helpers.h"

namespace roost {
namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

grpc::ServerUnaryReactor* AdminService::Rollback(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  const Clock::time_point start = Clock::now();
  metrics_->Started(Method::kRollback);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  roost::v1::RollbackRequest parsed;
  grpc::Status s = Authorize(access_, *context, nullptr);
  if (s.ok()) s = ParseMessage(*request, context, "Rollback", &parsed);
  if (!s.ok()) {
    Finish(reactor, metrics_, Method::kRollback, start, s);
    return reactor;
  }
  registry_->Rollback(
      parsed.table(), parsed.version(),
      [reactor, response, start, metrics = metrics_, data_dir = data_dir_](
          absl::StatusOr<std::pair<std::string, std::string>> result) {
        if (result.ok()) {
          roost::v1::RollbackResponse out;
          out.set_serving_version(result->first);
          out.set_previous_version(result->second);
          *response = Serialize(out);
        }
        Finish(reactor, metrics, Method::kRollback, start,
               ToClient(result.status(), data_dir));
      });
  return reactor;
}

grpc::ServerUnaryReactor* AdminService::Unpin(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  const Clock::time_point start = Clock::now();
  metrics_->Started(Method::kUnpin);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  roost::v1::UnpinRequest parsed;
  grpc::Status s = Authorize(access_, *context, nullptr);
  if (s.ok()) s = ParseMessage(*request, context, "Unpin", &parsed);
  if (!s.ok()) {
    Finish(reactor, metrics_, Method::kUnpin, start, s);
    return reactor;
  }
  registry_->Unpin(parsed.table(),
                   [reactor, response, start, metrics = metrics_,
                    data_dir = data_dir_](absl::StatusOr<std::string> result) {
                     if (result.ok()) {
                       roost::v1::UnpinResponse out;
                       out.set_serving_version(*result);
                       *response = Serialize(out);
                     }
                     Finish(reactor, metrics, Method::kUnpin, start,
                            ToClient(result.status(), data_dir));
                   });
  return reactor;
}

}  // namespace roost
