// The driver of the client consistency algorithm (version_consensus.h)
// over the parts of one call, shared by MultiGet and Scan: what is sent is
// theirs, when to re-send what, and when to give up, is this.
//
// Example:
//   VersionConsensus consensus(parts.size());
//   ROOST_RETURN_IF_ERROR(ReadOneVersion(
//       table, parts.size(), call.version, policy,
//       [&](std::span<const size_t> which, const std::string& pin) {
//         ... send parts `which` pinned to `pin`, consensus.Answered(...)
//       },
//       &consensus));
#ifndef ROOST_CLIENT_READ_ONE_VERSION_H_
#define ROOST_CLIENT_READ_ONE_VERSION_H_

#include <span>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "client/shard_calls.h"
#include "client/version_consensus.h"

namespace roost {

// What ReadOneVersion sends: parts `which`, pinned to `pin` ("" for the
// serving version), each answer recorded in the consensus. Returns the
// first failure (ShardError), or OK when every one answered.
using SendParts = absl::FunctionRef<absl::Status(std::span<const size_t>,
                                                 const std::string& pin)>;

// Sends every one of `parts` parts (pinned to `caller_pin` when the caller
// names a version: then once, and no more), then re-sends as `consensus`
// says until the parts agree. A pinned part refused with
// FAILED_PRECONDITION (not a stale layout) moves the batch forward after a
// backoff; past the deadline the call fails ABORTED naming the versions
// seen. Any other failure is returned as it is.
absl::Status ReadOneVersion(std::string_view table, size_t parts,
                            const std::string& caller_pin,
                            const CallPolicy& policy, SendParts send,
                            VersionConsensus* consensus);

}  // namespace roost

#endif  // ROOST_CLIENT_READ_ONE_VERSION_H_
