// GetCoalescer: single-key lookups from many concurrent callers, sent to
// one shard as MultiGets.
//
// A gRPC call costs the server about as much as looking a thousand keys up
// (docs/benchmarks.md), so a client doing many concurrent Gets is bounded
// by the per-call cost, not by lookups. The coalescer sends a Get at once
// while fewer than `max_in_flight` MultiGets of its table are on the wire;
// otherwise the Get waits in the table's queue, and when one of those
// MultiGets answers, everything queued (up to `max_batch` keys) goes out
// as the next one. No timer: under light load a Get is a MultiGet of one
// key sent at once, and under load a Get waits at most for the answer of a
// call already in flight (one round trip) before it is sent, in a batch as
// large as the load makes it. The answers come in the packed form
// (multiget_answer.h).
//
// Replicas and retries: each MultiGet goes to the next replica in
// round-robin order; one that fails with a retryable status (IsRetryable:
// UNAVAILABLE, RESOURCE_EXHAUSTED) is sent again to the next replica,
// once per replica, within its deadline (its first Get's arrival plus
// timeout_seconds); after that every Get of it fails with the error
// (ShardError: the shard and replica named).
//
// Callbacks run on the coalescer's one completion thread (with monotonic
// reads, a batch read again runs its callbacks on its own thread), and may
// call Get again; they must not block for long, nor destroy the coalescer. The
// destructor waits for every MultiGet in flight to answer and its
// callbacks to return.
//
// Thread-safe.
//
// Example:
//   GetCoalescer coalescer(shards.replicas(0), 0, {});
//   coalescer.Get("users", key, [](absl::StatusOr<GetResult> r) { ... });
//   absl::StatusOr<GetResult> r = coalescer.Get("users", key);  // blocking
#ifndef ROOST_CLIENT_GET_COALESCER_H_
#define ROOST_CLIENT_GET_COALESCER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "client/lookup_result.h"
#include "client/monotonic_reads.h"
#include "client/shard_calls.h"

namespace roost {

struct CoalescerOptions {
  // MultiGets of one table on the wire at once; Gets that come while this
  // many are out wait for one of them to answer and go out together. The
  // default value is 4.
  uint32_t max_in_flight = 4;
  // The most keys in one MultiGet: at most the servers' --max-batch.
  // The default value is 1000.
  uint32_t max_batch = 1000;
  // A MultiGet's deadline, from when its first Get came. The default value
  // is 10 seconds.
  double timeout_seconds = 10;
  // Sent as "authorization: Bearer TOKEN" when not empty.
  std::string token;
  // Monotonic reads (monotonic_reads.h), null for none: each answer is told
  // to it, and a MultiGet answered from another version than the table's
  // target is not handed out but read again, on a thread of its own, by
  // `reread` (the routing client's MultiGet of those keys, which settles
  // on the target as any batch does), whose results the Gets get. Both
  // must outlive the coalescer. The default value is null.
  MonotonicReads* monotonic = nullptr;
  using Reread = std::function<std::vector<absl::StatusOr<GetResult>>(
      const std::string& table, std::span<const std::string> keys)>;
  Reread reread;
};

class GetCoalescer {
 public:
  using Done = absl::AnyInvocable<void(absl::StatusOr<GetResult>)>;

  // Sends to `replicas` (not empty), which must outlive the coalescer;
  // `shard` names them in errors. REQUIRES: max_in_flight and max_batch
  // more than 0, timeout_seconds more than 0.
  GetCoalescer(std::span<const Replica> replicas, uint32_t shard,
               CoalescerOptions options);
  ~GetCoalescer();
  GetCoalescer(const GetCoalescer&) = delete;
  GetCoalescer& operator=(const GetCoalescer&) = delete;

  // Looks `key` up in `table`; `done` gets the result exactly once.
  void Get(std::string_view table, std::string_view key, Done done);
  // The same, waiting for the result in this thread.
  absl::StatusOr<GetResult> Get(std::string_view table, std::string_view key);

  // MultiGets sent so far (retries included), and Gets asked for.
  uint64_t batches() const { return batches_.load(std::memory_order_relaxed); }
  uint64_t gets() const { return gets_.load(std::memory_order_relaxed); }

 private:
  struct Batch;
  // The Gets of one table waiting to be sent, and its MultiGets out.
  struct Queue {
    uint32_t in_flight = 0;
    std::vector<std::string> keys;
    std::vector<Done> dones;
    Clock::time_point oldest;  // when the first queued Get came
  };

  // Starts `batch` (or its retry) on the next replica.
  void Send(Batch* batch);
  // A MultiGet answered: hands out its results, then sends what queued.
  void Answered(Batch* batch, const grpc::Status& status);
  // With monotonic reads: whether `batch`'s answer may be handed out; if
  // not, it is read again (CoalescerOptions::reread) and finished then.
  bool Settled(Batch* batch);
  // `batch` has handed its results out: it stops counting as in flight,
  // and what queued is sent.
  void Finish(Batch* batch);
  // Runs in poller_: hands each answer to Answered.
  void Poll();
  // Takes up to max_batch Gets of `queue` into a new batch, or nullptr.
  // REQUIRES: mu_ held.
  Batch* TakeBatch(const std::string& table, Queue& queue);

  std::span<const Replica> replicas_;
  uint32_t shard_;
  CoalescerOptions options_;
  std::atomic<size_t> next_replica_{0};
  std::atomic<uint64_t> batches_{0};
  std::atomic<uint64_t> gets_{0};

  std::mutex mu_;
  std::condition_variable idle_;  // in_flight_ fell to 0
  std::map<std::string, Queue, std::less<>> queues_;
  uint64_t in_flight_ = 0;  // over every table
  // The calls complete on a queue of the coalescer's own, drained by one
  // thread started with the first Get: unlike gRPC's callback API, whose
  // threads may still be inside a call's completion when its callback has
  // returned, the destructor then knows when gRPC is done with every call.
  grpc::CompletionQueue queue_;
  std::thread poller_;
};

}  // namespace roost

#endif  // ROOST_CLIENT_GET_COALESCER_H_
