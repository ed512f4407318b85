// The client consistency algorithm, as state: which version each part of
// a batch answered, and what to send next so that the whole batch is read
// from one table version. The same algorithm runs in the Python client
// (docs/operations/cluster.md, "Routing client (C++)"):
//
//   1. Send every part with no version.
//   2. If every part names the same version, done.
//   3. Otherwise re-send the parts that answered a newer version, pinned
//      to the oldest one answered (servers keep the version they replaced
//      for --version-grace).
//   4. If a pinned part is refused (FAILED_PRECONDITION: that version is
//      gone there), re-send instead the parts that answered older, pinned
//      to the newest, after a short backoff, until the caller's deadline;
//      then the batch fails ABORTED naming the versions seen.
//
// A part that answered an empty version (a server too old to say) is
// accepted as it is: it is never compared nor re-sent.
//
// With monotonic reads (a MonotonicReads given), step 3 pins to its target
// for the table instead of the oldest version answered, the parts agree
// only on that version (once moved forward: on one not older), a version
// withdrawn never agrees, and Settle() raises the floor
// (client/README.md, "Monotonic reads").
//
// Not thread-safe: one per batch, used by the thread that runs it.
//
// Example:
//   VersionConsensus consensus(parts.size());
//   for (size_t i...) consensus.Answered(i, response[i].version());
//   while (!consensus.Agreed()) {
//     const VersionConsensus::Round round = consensus.Next();
//     ... re-send round.parts pinned to round.pin; on a refused pin:
//     consensus.PinRefused(); sleep; continue;
//   }
//   result.version = consensus.version();
#ifndef ROOST_CLIENT_VERSION_CONSENSUS_H_
#define ROOST_CLIENT_VERSION_CONSENSUS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/monotonic_reads.h"

namespace roost {

// The number of a version as the server names it: "v000007" and "7" are
// both 7. nullopt for "" and for anything else.
std::optional<uint64_t> VersionNumber(std::string_view version);

// Whether `a` and `b` name the same version ("v000007" and "7" do).
bool SameVersion(std::string_view a, std::string_view b);

class VersionConsensus {
 public:
  explicit VersionConsensus(size_t parts)
      : answers_(parts), lost_(parts, false) {}
  // With monotonic reads of `table` (`monotonic` null: without), which
  // must outlive the consensus.
  VersionConsensus(size_t parts, MonotonicReads* monotonic,
                   std::string_view table)
      : answers_(parts),
        lost_(parts, false),
        monotonic_(monotonic),
        table_(table) {}

  // Part `part` answered from `version` ("" from a server too old to say).
  void Answered(size_t part, std::string version);
  // The same, from shard `shard`, naming `withdrawn_through`: monotonic
  // reads learn of it.
  void Answered(size_t part, std::string version, uint32_t shard,
                std::string_view withdrawn_through);
  // Part `part` has no usable answer any more (its Scan stream was
  // re-opened, then failed): it is sent again in every round until it
  // answers.
  void Lost(size_t part) { lost_[part] = true; }
  // Part `part` is left out of the batch (its shard could not answer, and
  // the caller takes partial answers): never compared nor re-sent.
  void Dropped(size_t part) {
    answers_[part].clear();
    lost_[part] = false;
  }

  // Whether every part has an answer, and every one that named a version
  // named the same one.
  bool Agreed() const;
  // The version the batch was read from, once Agreed(): "" when no part
  // named one.
  std::string version() const;

  // One round of re-sends: these parts, pinned to `pin`.
  struct Round {
    std::string pin;
    std::vector<size_t> parts;
  };
  // What to send next (only when !Agreed()): before any refusal, the parts
  // newer than the oldest, pinned to the oldest; after one, the parts
  // older than the newest, pinned to the newest; and the lost parts.
  Round Next() const;
  // A part pinned by Next() was refused: from now on the batch moves
  // forward to the newest version instead.
  void PinRefused() { forward_ = true; }

  // Every version answered so far, oldest first, comma-separated, for the
  // ABORTED message: "v000001, v000002".
  std::string Seen() const;

  // Once Agreed(), with monotonic reads: the table's floor rises to the
  // version read. Nothing without.
  void Settle() const;

 private:
  // The oldest (newest when `newest`) version the parts name now.
  std::string Extreme(bool newest) const;
  // With monotonic reads: the one version every part that named one
  // named, or "" when they differ (or none named one).
  std::string Common() const;
  // With monotonic reads: the version to pin to now.
  uint64_t MonotonicPin() const;

  std::vector<std::string> answers_;
  std::vector<bool> lost_;
  std::vector<std::string> seen_;  // distinct, in the order answered
  bool forward_ = false;
  MonotonicReads* monotonic_ = nullptr;
  std::string table_;
};

}  // namespace roost

#endif  // ROOST_CLIENT_VERSION_CONSENSUS_H_
