// The pieces every lookup handler shares (call_helpers.h).
#include "server/call_helpers.h"

#include <chrono>

#include "server/log.h"
#include "util/escape.h"
#include "util/str_cat.h"

namespace roost {

// Messages sent to clients carry no absolute server paths: a path under
// the data directory is shown relative to it ("t/v000001/table.sst").
grpc::Status ToClient(const absl::Status& status, std::string_view data_dir) {
  std::string message(status.message());
  const std::string prefix = StrCat(data_dir, "/");
  for (size_t at; (at = message.find(prefix)) != std::string::npos;) {
    message.erase(at, prefix.size());
  }
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), message);
}

bool DeadlinePassed(const grpc::CallbackServerContext* context) {
  return context->deadline() <= std::chrono::system_clock::now();
}

grpc::Status DeadlinePassedError() {
  return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                      "deadline passed before the request was worked on");
}

// The bytes of a request as one view, valid while `holder` lives (a copy
// only when gRPC received the request in pieces).
std::string_view RequestBytes(const grpc::ByteBuffer& buffer,
                              grpc::Slice* holder) {
  if (buffer.Length() == 0) return {};
  if (!buffer.TrySingleSlice(holder).ok() &&
      !buffer.DumpToSingleSlice(holder).ok()) {
    return {};
  }
  return {reinterpret_cast<const char*>(holder->begin()), holder->size()};
}

// A request that does not parse: INVALID_ARGUMENT, logged at a bounded
// rate (any client can send them).
grpc::Status Malformed(const absl::Status& status,
                       const grpc::CallbackServerContext* context,
                       std::string_view method) {
  static LogLimiter limiter;
  if (uint64_t dropped = 0; limiter.Allow(&dropped)) {
    Log(method, " from ", context->peer(), ": ", status.message(),
        LogLimiter::Suppressed(dropped));
  }
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                      std::string(status.message()));
}

// Whether the caller of `context` may read `table` (or, with no table, use
// the admin service) under `access`'s policy: OK, UNAUTHENTICATED (a token
// no entry holds, or a malformed authorization header) or
// PERMISSION_DENIED. Refusals are counted, without who asked.
grpc::Status Authorize(AccessControl* access,
                       const grpc::CallbackServerContext& context,
                       const std::string_view* table) {
  if (access == nullptr) return grpc::Status::OK;
  absl::StatusOr<Caller> caller = CallerOf(context);
  if (!caller.ok()) {
    access->Refused(AccessControl::Refusal::kBadCredentials);
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        std::string(caller.status().message()));
  }
  const std::shared_ptr<const AccessPolicy> policy = access->policy();
  const AccessPolicy::Verdict verdict = table != nullptr
                                            ? policy->ForTable(*caller, *table)
                                            : policy->ForAdmin(*caller);
  switch (verdict) {
    case AccessPolicy::Verdict::kAllowed:
      return grpc::Status::OK;
    case AccessPolicy::Verdict::kUnknownToken:
      access->Refused(AccessControl::Refusal::kUnknownToken);
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          "the bearer token is not in the access policy");
    case AccessPolicy::Verdict::kDenied:
      break;
  }
  if (table == nullptr) {
    access->Refused(AccessControl::Refusal::kNotAdmin);
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        "this client may not use the admin service");
  }
  access->Refused(AccessControl::Refusal::kDenied);
  return grpc::Status(
      grpc::StatusCode::PERMISSION_DENIED,
      StrCat("this client may not read table ", PrintableKey(*table, 128)));
}

void Finish(grpc::ServerUnaryReactor* reactor, RpcMetrics* metrics,
            Method method, std::chrono::steady_clock::time_point start,
            const grpc::Status& status) {
  metrics->Handled(method, status.error_code(),
                   std::chrono::steady_clock::now() - start);
  reactor->Finish(status);
}

}  // namespace roost
