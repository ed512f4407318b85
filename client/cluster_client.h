// ClusterClient: the C++ routing client of a sharded roost cluster. It
// routes each key to its shard by the partition function
// (storage/partition.h, the public contract every client checks against
// docs/format/partition_vectors.tsv), splits a MultiGet per shard and
// sends the parts at once, spreads calls over each shard's replicas,
// retries a part on another replica, optionally hedges, and reads every
// batch from one table version (version_consensus.h). Replicas, retries
// and hedging are shard_calls.h's.
//
// The guarantee: every result of one call (MultiGet, Scan) comes from the
// one table version the result names, on every shard, or the call fails
// (ABORTED when no version could be agreed on before the deadline). A
// shard whose server is too old to name its version is taken as it
// answered; the result then names the version of the shards that did. A
// layout that does not match the table (shards listed in another order, or
// another count) fails FAILED_PRECONDITION "stale cluster layout: shard I
// (TARGET): key J belongs to shard K of N; ...", never a silent miss.
//
// Thread-safe: one client for every thread; calls block their own thread
// only.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(ClusterLayout layout,
//                          ReadClusterLayout("cluster.json"));
//   ROOST_ASSIGN_OR_RETURN(std::unique_ptr<ClusterClient> client,
//                          ClusterClient::Create(std::move(layout)));
//   ROOST_ASSIGN_OR_RETURN(MultiGetResult r,
//                          client->MultiGet("users", keys));
//   for (size_t i = 0; i < keys.size(); ++i)
//     if (r.results[i].found) Use(keys[i], r.results[i].value);
//   // r.version: "v000007", the version every shard answered from
#ifndef ROOST_CLIENT_CLUSTER_CLIENT_H_
#define ROOST_CLIENT_CLUSTER_CLIENT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "client/call_record.h"
#include "client/cluster_layout.h"
#include "client/get_coalescer.h"
#include "client/lookup_result.h"
#include "client/monotonic_reads.h"
#include "client/shard_calls.h"
#include "storage/row/row_schema.h"

namespace roost {

struct ClusterClientOptions {
  // The deadline of a call that names none: every attempt, retry and
  // version round of it. The default value is 10 seconds.
  double timeout_seconds = 10;
  // Hedging: when a shard's part has not answered after this many seconds,
  // a second call goes to another replica and the first answer wins. 0
  // turns hedging off. The default value is 0.
  double hedge_delay_seconds = 0;
  // The wait before a shard all of whose replicas failed is tried again,
  // doubling each round up to max_backoff_seconds; also the first wait
  // before a batch re-reads a newer version. The default values are 0.02
  // and 0.5 seconds.
  double backoff_seconds = 0.02;
  double max_backoff_seconds = 0.5;
  // The most keys one MultiGet call carries: the servers' --max-batch. A
  // shard's part of a batch with more keys goes as several calls, sent at
  // once with the rest and read from the same version. The default value
  // is 10000 (the servers' default).
  uint32_t max_batch = 10000;
  // Get sends single keys as MultiGets, many callers' keys together
  // (get_coalescer.h), unless the call names a version or a timeout of its
  // own. GetAsync always does. The default value is false.
  bool coalesce_gets = false;
  // GetCoalescer's max_in_flight, per shard and table. The default value
  // is 4.
  uint32_t coalesce_max_in_flight = 4;
  // GetCoalescer's max_batch. The default value is 1000.
  uint32_t coalesce_max_batch = 1000;
  // Partial answers: a MultiGet whose shard cannot answer (every replica
  // UNAVAILABLE or RESOURCE_EXHAUSTED until the deadline, or the deadline
  // itself) answers the keys of the other shards, from one version, and
  // marks each key of that shard with its error (LookupResult::error);
  // the call fails only when no shard answered. Any other failure (a stale
  // layout, no such table, a bad request) fails the call as without it.
  // Scan and MultiGetRows are not partial. The default value is false.
  bool partial_answers = false;
  // Monotonic reads (client/README.md, "Monotonic reads"): no call of a
  // table answers from a version older than one this client answered a
  // call of it from before, unless that one was withdrawn (a rollback); a
  // new version is read once every shard heard from has shown it. Calls
  // that name a version (CallOptions::version, MultiGetRows) are outside
  // it. The default value is false.
  bool monotonic = false;
  // Called with a CallRecord after each Get, GetAsync, MultiGet (and
  // MultiGetRows' MultiGet) and Scan: the client metrics of
  // tests/conformance/README.md, for the program to count in the metrics
  // library it uses. Empty: nothing is recorded (and nothing costs).
  CallObserver on_call;
};

// Per call.
struct CallOptions {
  // The deadline of this call; 0: ClusterClientOptions::timeout_seconds.
  double timeout_seconds = 0;
  // Read this version ("v000007" or "7") on every shard, as the servers
  // take it (the serving one or the one it replaced within
  // --version-grace); empty: the consistency algorithm chooses.
  std::string version;
  // On a table of rows: answer only these fields, in this order (values
  // are then rows of the projected schema; lookup.proto's Rows). Empty:
  // whole values.
  std::vector<std::string> fields;
};

// A MultiGetRows' answer: typed rows.
struct RowsResult {
  // The rows' schema: the version's, or its projection onto the fields
  // asked for.
  RowSchema schema;
  // One per key, in request order; nullopt for a key not found. Each is a
  // row of `schema` that CheckRow passed: read its fields with
  // RowReader(&schema, *rows[i]) (storage/row/row_codec.h).
  std::vector<std::optional<std::string>> rows;
  std::string version;  // as MultiGetResult::version
};

struct MultiGetResult {
  std::vector<LookupResult> results;  // one per key, in request order
  // The one version every shard answered from (every shard that answered,
  // with partial answers).
  std::string version;
  // With partial answers: how many keys' shards could not answer (each
  // such result holds its error).
  size_t failed_keys = 0;
};

struct ScanOptions {
  std::string start;   // the first key, inclusive; empty: the first
  std::string end;     // the bound, exclusive; empty: none
  std::string prefix;  // only keys that begin with it; empty: any
  // At most this many entries over all shards; 0: each server's
  // --max-scan-keys (then the result holds up to that many per shard).
  uint32_t limit = 0;
};

struct ScanEntry {
  std::string key;
  std::string value;
};

struct ScanResult {
  std::vector<ScanEntry> entries;  // in key order over all shards
  // Keys are left in the range after the last entry (resume after it).
  bool more = false;
  std::string version;  // as MultiGetResult::version
};

class ClusterClient {
 public:
  // A client of the cluster `layout` describes (CheckClusterLayout's
  // errors; a TLS file that cannot be read).
  static absl::StatusOr<std::unique_ptr<ClusterClient>> Create(
      ClusterLayout layout, ClusterClientOptions options = {});

  // Looks `key` up in its shard.
  absl::StatusOr<GetResult> Get(std::string_view table, std::string_view key,
                                const CallOptions& call = {}) const;
  // Looks `key` up through its shard's GetCoalescer, which sends it with
  // the other Gets waiting for that shard (get_coalescer.h); `done` gets
  // the result on that coalescer's thread. The version is the one that answered
  // the key, not agreed on over shards. Within timeout_seconds.
  void GetAsync(std::string_view table, std::string_view key,
                GetCoalescer::Done done) const;
  // Looks `keys` up: one part per shard, sent at once, the results put back
  // in request order (duplicates and an empty batch included).
  absl::StatusOr<MultiGetResult> MultiGet(std::string_view table,
                                          std::span<const std::string> keys,
                                          const CallOptions& call = {}) const;
  // MultiGet of a table of rows, decoded: its schema comes from ListTables
  // (a replica of shard 0) with the version it serves, and the batch is
  // read from that version (pinned, so that the rows and the schema agree
  // during a rollout; read again once if it has gone since). With
  // call.version, that version must be the one ListTables names.
  // FailedPrecondition for a table of opaque values; DataLoss naming the
  // key for a row that is not one of the schema.
  absl::StatusOr<RowsResult> MultiGetRows(std::string_view table,
                                          std::span<const std::string> keys,
                                          const CallOptions& call = {}) const;
  // Reads a block table in key order over every shard: one stream per
  // shard, merged; `limit` applies to the merged entries. A stream that
  // fails before its first message is retried on another replica; one that
  // fails later fails the call.
  absl::StatusOr<ScanResult> Scan(std::string_view table,
                                  const ScanOptions& scan,
                                  const CallOptions& call = {}) const;

  // The shard `key` belongs to (PartitionOf over the layout's count).
  uint32_t ShardOf(std::string_view key) const;
  const ClusterLayout& layout() const { return layout_; }

 private:
  ClusterClient(ClusterLayout layout, ClusterClientOptions options,
                Shards shards);
  CallPolicy Policy(const CallOptions& call) const;
  // MultiGet's work, its attempts counted in `counts` (when not null).
  absl::StatusOr<MultiGetResult> ReadBatch(std::string_view table,
                                           std::span<const std::string> keys,
                                           const CallOptions& call,
                                           AttemptCounts* counts) const;
  absl::StatusOr<ScanResult> ScanShards(std::string_view table,
                                        const ScanOptions& scan,
                                        const CallOptions& call) const;
  // The monotonic reads a call takes part in: null without
  // options_.monotonic, or when the call names its version.
  MonotonicReads* MonotonicFor(const CallOptions& call) const {
    return options_.monotonic && call.version.empty() ? &monotonic_ : nullptr;
  }
  // Hands the CallRecord of a call that began at `start` to
  // options_.on_call, with its version switch.
  void Record(std::string_view method, std::string_view table, size_t keys,
              const AttemptCounts& counts, size_t partial_keys,
              Clock::time_point start, const absl::Status& status,
              std::string_view version) const;
  // The schema of `table` and the version it is of, from ListTables.
  absl::StatusOr<std::pair<RowSchema, std::string>> ServedSchema(
      std::string_view table, const CallPolicy& policy) const;

  ClusterLayout layout_;
  ClusterClientOptions options_;
  Shards shards_;
  // One per shard, over shards_'s replicas (so declared after them).
  std::vector<std::unique_ptr<GetCoalescer>> coalescers_;
  // The version of each table's last answer, for CallRecord's
  // version_switched (only with options_.on_call).
  mutable std::mutex versions_mu_;
  mutable std::map<std::string, std::string, std::less<>> last_versions_;
  // With options_.monotonic: what each table was read at (thread-safe).
  mutable MonotonicReads monotonic_;
};

}  // namespace roost

#endif  // ROOST_CLIENT_CLUSTER_CLIENT_H_
