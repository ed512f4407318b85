// What every handler of roost.v1.Lookup and roost.v1.Admin does the same
// way (lookup_service.cc, scan_reactor.cc, admin_service.cc): reading the
// request's bytes, refusing one that does not parse (INVALID_ARGUMENT,
// logged at a bounded rate), checking the caller against the access policy,
// turning a status into what a client is shown, and finishing a unary call
// with its RPC metrics.
//
// Example:
//   grpc::Slice holder;
//   std::string_view bytes = RequestBytes(*request, &holder);
//   if (absl::Status s = Parse(bytes); !s.ok())
//     return Malformed(s, context, "Scan");
//   if (grpc::Status s = Authorize(access, *context, &table); !s.ok())
//     return s;
#ifndef ROOST_SERVER_CALL_HELPERS_H_
#define ROOST_SERVER_CALL_HELPERS_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <string_view>

#include "absl/status/status.h"
#include "server/access_policy.h"
#include "server/metrics.h"
#include "util/str_cat.h"

namespace roost {

// `status` as a client sees it: no absolute server paths (a path under
// `data_dir` is shown relative to it, "t/v000001/table.sst").
grpc::Status ToClient(const absl::Status& status, std::string_view data_dir);

// Whether the call's deadline passed before its work began, and the status
// that says so (DEADLINE_EXCEEDED).
bool DeadlinePassed(const grpc::CallbackServerContext* context);
grpc::Status DeadlinePassedError();

// The bytes of a request as one view, valid while `holder` lives (a copy
// only when gRPC received the request in pieces).
std::string_view RequestBytes(const grpc::ByteBuffer& buffer,
                              grpc::Slice* holder);

// A request that does not parse: INVALID_ARGUMENT with `status`'s message,
// logged at a bounded rate with `method` and the peer.
grpc::Status Malformed(const absl::Status& status,
                       const grpc::CallbackServerContext* context,
                       std::string_view method);

// Whether the caller of `context` may read `table` (or, with no table, use
// the admin service) under `access`'s policy (null: everyone may): OK,
// UNAUTHENTICATED or PERMISSION_DENIED. Refusals are counted.
grpc::Status Authorize(AccessControl* access,
                       const grpc::CallbackServerContext& context,
                       const std::string_view* table);

// Finishes `reactor` with `status` and records the RPC, started at `start`.
void Finish(grpc::ServerUnaryReactor* reactor, RpcMetrics* metrics,
            Method method, std::chrono::steady_clock::time_point start,
            const grpc::Status& status);

// Parses `request` into a protobuf message (the methods that are not on
// the lookup path: ListTables, the admin service); INVALID_ARGUMENT, as
// Malformed(), when it does not parse.
template <typename Message>
grpc::Status ParseMessage(const grpc::ByteBuffer& request,
                          const grpc::CallbackServerContext* context,
                          std::string_view method, Message* message) {
  grpc::Slice holder;
  const std::string_view bytes = RequestBytes(request, &holder);
  if (message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return grpc::Status::OK;
  }
  return Malformed(
      absl::InvalidArgumentError(StrCat("malformed request: not a ",
                                        Message::descriptor()->full_name())),
      context, method);
}

// `message`'s bytes, for a raw method's response.
template <typename Message>
grpc::ByteBuffer Serialize(const Message& message) {
  grpc::Slice slice(message.SerializeAsString());
  return grpc::ByteBuffer(&slice, 1);
}

}  // namespace roost

#endif  // ROOST_SERVER_CALL_HELPERS_H_
