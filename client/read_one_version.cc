#include "client/read_one_version.h"

#include <algorithm>
#include <numeric>
#include <thread>
#include <vector>

#include "util/str_cat.h"

namespace roost {
namespace {

// A pinned part refused because its server no longer (or not yet) has
// the version: FAILED_PRECONDITION that is not a stale layout's.
bool PinRefused(const absl::Status& status) {
  return status.code() == absl::StatusCode::kFailedPrecondition &&
         status.message().find("stale cluster layout") ==
             std::string_view::npos;
}

}  // namespace

absl::Status ReadOneVersion(std::string_view table, size_t parts,
                            const std::string& caller_pin,
                            const CallPolicy& policy, SendParts send,
                            VersionConsensus* consensus) {
  std::vector<size_t> all(parts);
  std::iota(all.begin(), all.end(), size_t{0});
  absl::Status status = send(all, caller_pin);
  if (!status.ok() || !caller_pin.empty()) return status;
  Clock::duration backoff = policy.backoff;
  auto aborted = [&](std::string_view why) {
    return absl::AbortedError(
        StrCat("table ", table,
               ": no version answered by every shard before the deadline; "
               "versions seen: ",
               consensus->Seen(), why));
  };
  while (!consensus->Agreed()) {
    // A server that answers another version than the one asked for would
    // keep this loop going: the deadline ends it too.
    if (Clock::now() >= policy.deadline) return aborted("");
    const VersionConsensus::Round round = consensus->Next();
    status = send(round.parts, round.pin);
    if (status.ok()) continue;
    if (!PinRefused(status)) return status;
    consensus->PinRefused();
    if (Clock::now() + backoff >= policy.deadline) {
      return aborted(StrCat("; last refusal: ", std::string(status.message())));
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, policy.max_backoff);
  }
  return absl::OkStatus();
}

}  // namespace roost
