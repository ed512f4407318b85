// ClusterClient::Scan: one Scan stream per shard, the first message of
// each read (it names the version the stream answers from), the streams
// agreed on one version by the same algorithm as MultiGet's
// (read_one_version.h), then merged in key order until `limit`.
//
// The streams use gRPC's synchronous API from the calling thread: a
// stream starts when it is created, so every shard works at once while
// this thread reads whichever head it needs next; gRPC's flow control
// holds the rest.

#include <algorithm>
#include <numeric>
#include <optional>
#include <thread>

#include "client/cluster_client.h"
#include "client/read_one_version.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// One shard's stream.
struct ShardStream {
  uint32_t shard = 0;
  v1::ScanRequest request;
  size_t first_replica = 0;
  size_t tries = 0;
  std::string target;  // of the replica the stream is open to
  std::unique_ptr<grpc::ClientContext> context;
  std::unique_ptr<grpc::ClientReader<v1::ScanResponse>> reader;
  bool open = false;  // reader not finished yet
  v1::ScanResponse message;
  int next = 0;       // the next entry of `message` to merge
  bool more = false;  // the last message's `more`
  std::string version;
  std::string withdrawn_through;  // what the first message named
  // The index in the result of the last entry taken from this stream (to
  // check the order without copying keys), or npos.
  size_t last_entry = std::string::npos;
};

class ScanRun {
 public:
  ScanRun(const Shards& shards, const CallPolicy& policy)
      : shards_(shards), policy_(policy) {}
  ~ScanRun() {
    for (ShardStream& s : streams_) Close(&s);
  }

  std::vector<ShardStream>& streams() { return streams_; }

  // Opens the streams `which` (pinned to `pin`) and reads their first
  // messages, retrying on other replicas until each has one.
  absl::Status Send(std::span<const size_t> which, const std::string& pin,
                    VersionConsensus* consensus) {
    for (size_t i : which) {
      ShardStream& s = streams_[i];
      Close(&s);
      s.request.set_version(pin);
      s.tries = 0;
      s.first_replica = shards_.PickReplica(s.shard);
      Start(&s);
    }
    // Every stream re-opened is read, even after one failed, so that the
    // consensus knows what each one answers; a failed one is lost.
    absl::Status first_error;
    for (size_t i : which) {
      const absl::Status status = First(&streams_[i]);
      if (status.ok()) {
        consensus->Answered(i, streams_[i].version, streams_[i].shard,
                            streams_[i].withdrawn_through);
      } else {
        consensus->Lost(i);
        if (first_error.ok()) first_error = status;
      }
    }
    return first_error;
  }

  // The next entry of `s` in key order, or nullptr when it has none left.
  absl::StatusOr<v1::KeyValue*> Head(ShardStream* s) {
    while (s->next >= s->message.entries_size()) {
      if (!s->open) return nullptr;
      v1::ScanResponse message;
      if (!s->reader->Read(&message)) {
        const grpc::Status status = s->reader->Finish();
        s->open = false;
        if (!status.ok()) return ShardError(s->shard, s->target, status);
        s->message.Clear();
        s->next = 0;
        return nullptr;
      }
      if (!SameVersion(message.version(), s->version)) {
        return absl::InternalError(StrCat("shard ", s->shard, " (", s->target,
                                          ") answered from ", s->version,
                                          ", then from ", message.version()));
      }
      s->message.Swap(&message);
      s->next = 0;
      s->more = s->message.more();
    }
    return s->message.mutable_entries(s->next);
  }

 private:
  void Start(ShardStream* s) {
    const std::vector<Replica>& replicas = shards_.replicas(s->shard);
    const Replica& replica =
        replicas[(s->first_replica + s->tries) % replicas.size()];
    ++s->tries;
    s->target = replica.target;
    s->context = std::make_unique<grpc::ClientContext>();
    s->context->set_deadline(
        std::chrono::system_clock::now() +
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            policy_.deadline - Clock::now()));
    if (!policy_.token.empty()) {
      s->context->AddMetadata("authorization",
                              StrCat("Bearer ", policy_.token));
    }
    s->reader = replica.stub->Scan(s->context.get(), s->request);
    s->open = true;
    s->message.Clear();
    s->next = 0;
    s->more = false;
    s->version.clear();
  }

  void Close(ShardStream* s) {
    if (!s->open) return;
    s->context->TryCancel();
    (void)s->reader->Finish();
    s->open = false;
  }

  // Reads the first message of `s`, moving to another replica while the
  // stream fails retryably before one.
  absl::Status First(ShardStream* s) {
    const size_t n = shards_.replicas(s->shard).size();
    Clock::duration backoff = policy_.backoff;
    while (true) {
      if (s->reader->Read(&s->message)) {
        s->version = s->message.version();
        s->withdrawn_through = s->message.withdrawn_through();
        s->more = s->message.more();
        return absl::OkStatus();
      }
      const grpc::Status status = s->reader->Finish();
      s->open = false;
      s->message.Clear();
      if (status.ok()) return absl::OkStatus();  // no entries, no version
      if (!IsRetryable(status.error_code()) ||
          Clock::now() >= policy_.deadline) {
        return ShardError(s->shard, s->target, status);
      }
      if (s->tries % n == 0) {
        if (Clock::now() + backoff >= policy_.deadline) {
          return ShardError(s->shard, s->target, status);
        }
        std::this_thread::sleep_for(backoff);
        backoff = std::min(backoff * 2, policy_.max_backoff);
      }
      Start(s);
    }
  }

  const Shards& shards_;
  const CallPolicy& policy_;
  std::vector<ShardStream> streams_;
};

}  // namespace

absl::StatusOr<ScanResult> ClusterClient::Scan(std::string_view table,
                                               const ScanOptions& scan,
                                               const CallOptions& call) const {
  if (!options_.on_call) return ScanShards(table, scan, call);
  const Clock::time_point start = Clock::now();
  absl::StatusOr<ScanResult> r = ScanShards(table, scan, call);
  Record("scan", table, 0, AttemptCounts(), 0, start, r.status(),
         r.ok() ? r->version : "");
  return r;
}

absl::StatusOr<ScanResult> ClusterClient::ScanShards(
    std::string_view table, const ScanOptions& scan,
    const CallOptions& call) const {
  const CallPolicy policy = Policy(call);
  ScanRun run(shards_, policy);
  std::vector<ShardStream>& streams = run.streams();
  streams.resize(shards_.size());
  for (uint32_t s = 0; s < streams.size(); ++s) {
    streams[s].shard = s;
    v1::ScanRequest& request = streams[s].request;
    request.set_table(std::string(table));
    request.set_start(scan.start);
    request.set_end(scan.end);
    request.set_prefix(scan.prefix);
    // Each shard may hold every one of the first `limit` keys.
    request.set_limit(scan.limit);
  }

  VersionConsensus consensus(streams.size(), MonotonicFor(call), table);
  ROOST_RETURN_IF_ERROR(ReadOneVersion(
      table, streams.size(), call.version, policy,
      [&](std::span<const size_t> which, const std::string& pin) {
        return run.Send(which, pin, &consensus);
      },
      &consensus));

  // The merge: the smallest head of all streams, each time. A linear scan
  // of the heads: a table has few shards, and it keeps no heap in step.
  ScanResult out;
  out.version = consensus.version();
  consensus.Settle();
  std::vector<v1::KeyValue*> heads(streams.size());
  for (size_t i = 0; i < streams.size(); ++i) {
    ROOST_ASSIGN_OR_RETURN(heads[i], run.Head(&streams[i]));
  }
  while (scan.limit == 0 || out.entries.size() < scan.limit) {
    size_t best = streams.size();
    for (size_t i = 0; i < streams.size(); ++i) {
      if (heads[i] != nullptr &&
          (best == streams.size() || heads[i]->key() < heads[best]->key())) {
        best = i;
      }
    }
    if (best == streams.size()) break;
    ShardStream& s = streams[best];
    if (s.last_entry != std::string::npos &&
        !(out.entries[s.last_entry].key < heads[best]->key())) {
      return absl::InternalError(StrCat("shard ", s.shard, " (", s.target,
                                        ") answered keys out of order"));
    }
    s.last_entry = out.entries.size();
    out.entries.push_back({std::move(*heads[best]->mutable_key()),
                           std::move(*heads[best]->mutable_value())});
    ++s.next;
    ROOST_ASSIGN_OR_RETURN(heads[best], run.Head(&s));
  }
  // More: an entry not taken, or a shard that stopped at its limit with
  // keys left. Looking at a head may read one more message; the streams
  // still open are cancelled when `run` goes.
  for (size_t i = 0; i < streams.size() && !out.more; ++i) {
    out.more = heads[i] != nullptr || streams[i].more;
  }
  if (scan.limit == 0) {
    // Each server stopped at its own --max-scan-keys: the merge holds
    // every key only up to the smallest last key of a shard that stopped.
    std::optional<std::string> cut;
    for (const ShardStream& s : streams) {
      if (!s.more || s.last_entry == std::string::npos) continue;
      const std::string& key = out.entries[s.last_entry].key;
      if (!cut.has_value() || key < *cut) cut = key;
    }
    if (cut.has_value()) {
      out.entries.erase(
          std::upper_bound(out.entries.begin(), out.entries.end(), *cut,
                           [](const std::string& k, const ScanEntry& e) {
                             return k < e.key;
                           }),
          out.entries.end());
    }
  }
  return out;
}

}  // namespace roost
