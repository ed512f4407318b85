// The replicas of each shard and the parallel MultiGet calls a routing
// client makes to them: parts of one batch sent at once with gRPC's async
// API on a completion queue the calling thread drains, each retried on another
// replica when it fails with a retryable status, optionally hedged, all within
// one deadline.
//
// Replicas: one channel per target listed in the layout, and a part's
// first call goes to the next one in round-robin order (an atomic counter
// per shard). A channel per listed target, rather than one channel with
// gRPC's round_robin policy over all of them, lets a retry or a hedge go
// to a *different* replica than the call that failed or lags: a
// round_robin channel picks for itself, and can pick the same one again. A
// "dns:///NAME:PORT" target (a Kubernetes headless Service: every address
// is a replica) is one channel with the round_robin policy, which spreads
// calls over every address the name resolves to and follows the name as
// pods come and go; a retry on it goes to the next address in its
// rotation.
//
// Retryable: UNAVAILABLE (the replica is down, unreachable, shutting down,
// or serves no version of the table yet) and RESOURCE_EXHAUSTED (its
// --max-in-flight is full: "retry later"). Each retry goes to the next
// replica; after every replica of the shard failed once, the next round
// waits a backoff (doubling from `backoff` up to `max_backoff`). Anything
// else, DEADLINE_EXCEEDED included, is final: the deadline is the caller's
// for the whole call. A part that the deadline cuts short after a
// retryable failure ends with that failure ("... (last of 3 attempts; no
// replica answered before the deadline)"), not with the DEADLINE_EXCEEDED
// of an attempt still connecting when the time ran out: every replica
// down is UNAVAILABLE on a busy machine as on an idle one, as in the
// Python client.
//
// Thread-safe: Shards is shared by every call of a client.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(Shards shards, Shards::Connect(layout));
//   std::vector<Part> parts = ...;  // one per shard with keys
//   absl::Status s = shards.Run(std::span(parts), all, options);
#ifndef ROOST_CLIENT_SHARD_CALLS_H_
#define ROOST_CLIENT_SHARD_CALLS_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/cluster_layout.h"
#include "roost/v1/lookup.grpc.pb.h"

namespace roost {

using Clock = std::chrono::steady_clock;

// What the attempts of one client call were, for its CallRecord.
struct AttemptCounts {
  uint32_t hedges = 0;
  uint32_t retries = 0;
};

// How the calls of one client call are made.
struct CallPolicy {
  // Every attempt ends by then.
  Clock::time_point deadline;
  // A second call to another replica when a part has not answered after
  // this long; zero turns hedging off.
  Clock::duration hedge_delay{};
  // The wait before retrying a shard all of whose replicas failed,
  // doubling each round up to max_backoff.
  Clock::duration backoff = std::chrono::milliseconds(20);
  Clock::duration max_backoff = std::chrono::milliseconds(500);
  // Sent as "authorization: Bearer TOKEN" when not empty.
  std::string token;
  // Partial answers: a part whose shard cannot answer (every replica
  // UNAVAILABLE or RESOURCE_EXHAUSTED until the deadline, or the deadline
  // itself) ends with its Part::failure and the others go on; any other
  // failure still ends the whole Run.
  bool partial = false;
  // When not null, Run counts its hedges and retries here.
  AttemptCounts* counts = nullptr;
};

// `t` on the clock gRPC deadlines are set in.
std::chrono::system_clock::time_point SystemDeadline(Clock::time_point t);

// Whether a call that failed with `code` is tried again on another replica.
bool IsRetryable(grpc::StatusCode code);

// `status` as an absl::Status (the codes map one to one), its message
// prefixed with the shard and the replica that gave it; a stale layout
// (FAILED_PRECONDITION "... belongs to shard ...") says so.
absl::Status ShardError(uint32_t shard, const std::string& target,
                        const grpc::Status& status);

// One shard's part of a batch: the keys of the batch that belong to it.
struct Part {
  uint32_t shard = 0;
  std::vector<uint32_t> indices;  // indices[j]: batch position of keys(j)
  v1::MultiGetRequest request;
  v1::MultiGetResponse response;  // its answer (kept when a Run fails)
  bool answered = false;          // Run got it a new answer
  // With CallPolicy::partial: why its shard could not answer in the last
  // Run that sent it (ShardError); OK otherwise.
  absl::Status failure;
};

struct Replica {
  std::string target;
  std::unique_ptr<v1::Lookup::Stub> stub;
};

class Shards {
 public:
  // Channels to every target of `layout` (which CheckClusterLayout passed).
  // An error names a TLS file that cannot be read.
  static absl::StatusOr<Shards> Connect(const ClusterLayout& layout);

  size_t size() const { return shards_.size(); }
  const std::vector<Replica>& replicas(uint32_t shard) const {
    return shards_[shard]->replicas;
  }
  // The replica a call to `shard` goes to first: round-robin.
  size_t PickReplica(uint32_t shard) const {
    const ShardState& s = *shards_[shard];
    return s.next.fetch_add(1, std::memory_order_relaxed) % s.replicas.size();
  }

  // Sends parts[i] for each i in `which` at once, each to a replica of its
  // shard, retrying and hedging as `policy` says, and returns when every
  // one has answered (its response replaced, `answered` set) or one has
  // failed for good: then the others are cancelled (keeping the response
  // they had, `answered` false) and its error (ShardError) returned. With
  // policy.partial, a part whose shard cannot answer ends with its
  // `failure` instead, and the others go on.
  absl::Status Run(std::span<Part> parts, std::span<const size_t> which,
                   const CallPolicy& policy) const;

 private:
  struct ShardState {
    std::vector<Replica> replicas;
    mutable std::atomic<size_t> next{0};
  };
  std::vector<std::unique_ptr<ShardState>> shards_;
};

}  // namespace roost

#endif  // ROOST_CLIENT_SHARD_CALLS_H_
