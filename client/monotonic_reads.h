// MonotonicReads: what a client with monotonic reads remembers of each
// table, and the version a call of it must settle on (client/README.md,
// "Monotonic reads", has the rules; every client runs the same ones):
//
//   - the floor F: the newest version a call of the table was answered
//     from;
//   - the withdrawn range (L, W]: versions after L up to W were withdrawn
//     (a rollback: an answer from L named W in withdrawn_through) and are
//     not read;
//   - newest[s]: the newest version, not withdrawn, a replica of shard s
//     answered from.
//
// A call settles on the target R = max(F, the oldest newest[s] over the
// shards heard from): a new version is read only once every shard heard
// from has shown it, and never a version older than F.
//
// Thread-safe: one per client, shared by its calls.
//
// Example:
//   MonotonicReads monotonic;
//   monotonic.Answered("users", 2, "v000007", "");  // each answer
//   uint64_t target = monotonic.Target("users");    // 7 once all shards say
//   monotonic.Settled("users", 7);                  // a call answered
#ifndef ROOST_CLIENT_MONOTONIC_READS_H_
#define ROOST_CLIENT_MONOTONIC_READS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace roost {

class MonotonicReads {
 public:
  // Shard `shard` answered a call of `table` from `version` ("v000007"),
  // naming `withdrawn_through` ("" for none). Versions that are not
  // numbers (a server too old to say: "") change nothing.
  void Answered(std::string_view table, uint32_t shard,
                std::string_view version, std::string_view withdrawn_through);
  // The version a call of `table` settles on: R above; 0 when nothing is
  // known of the table yet.
  uint64_t Target(std::string_view table) const;
  // Whether `version` may answer a call of `table`: not in (L, W].
  bool Readable(std::string_view table, uint64_t version) const;
  // A call of `table` was answered from `version`: the floor rises to it.
  void Settled(std::string_view table, uint64_t version);

  // The floor of `table`, 0 for none (for tests and the CallRecord).
  uint64_t Floor(std::string_view table) const;

 private:
  struct Table {
    uint64_t floor = 0;
    uint64_t withdrawn_after = 0;         // L
    uint64_t withdrawn = 0;               // W
    std::map<uint32_t, uint64_t> newest;  // by shard
  };
  static bool Withdrawn(const Table& t, uint64_t version) {
    return version > t.withdrawn_after && version <= t.withdrawn;
  }

  mutable std::mutex mu_;
  std::map<std::string, Table, std::less<>> tables_;
};

}  // namespace roost

#endif  // ROOST_CLIENT_MONOTONIC_READS_H_
