// What every handler of roost.v1.Lookup does the same way (lookup_service.cc,
// scan_reactor.cc): reading the request's bytes, refusing one that does not
// parse (INVALID_ARGUMENT, logged at a bounded rate), checking the caller
// against the access policy, and turning a status into what a client is
// shown.
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

#include <string_view>

#include "absl/status/status.h"
#include "server/access_policy.h"

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

}  // namespace roost

#endif  // ROOST_SERVER_CALL_HELPERS_H_
