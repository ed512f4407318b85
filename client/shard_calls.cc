#include "client/shard_calls.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>

#include "util/str_cat.h"

namespace roost {

bool IsRetryable(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAVAILABLE ||
         code == grpc::StatusCode::RESOURCE_EXHAUSTED;
}

absl::Status ShardError(uint32_t shard, const std::string& target,
                        const grpc::Status& status) {
  const std::string& message = status.error_message();
  const bool stale =
      status.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
      message.find("belongs to shard") != std::string::npos;
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      StrCat(stale ? "stale cluster layout: " : "", "shard ",
                             shard, " (", target, "): ", message));
}

std::chrono::system_clock::time_point SystemDeadline(Clock::time_point t) {
  return std::chrono::system_clock::now() +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(
             t - Clock::now());
}

absl::StatusOr<Shards> Shards::Connect(const ClusterLayout& layout) {
  Shards out;
  for (const std::vector<std::string>& targets : layout.shards) {
    auto state = std::make_unique<ShardState>();
    for (const std::string& target : targets) {
      const bool dns = target.starts_with("dns:");
      absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = MakeChannel(
          target, layout.security, dns ? "round_robin" : std::string());
      if (!channel.ok()) return channel.status();
      state->replicas.push_back({target, v1::Lookup::NewStub(*channel)});
    }
    out.shards_.push_back(std::move(state));
  }
  return out;
}

namespace {

// One call to one replica.
struct Attempt {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientAsyncResponseReader<v1::MultiGetResponse>> reader;
  v1::MultiGetResponse response;
  grpc::Status status;
  size_t part = 0;  // index into `which`
  size_t replica = 0;
};

// Where one part stands.
struct PartState {
  size_t first_replica = 0;
  size_t tries = 0;  // calls started; the next goes to first + tries
  int in_flight = 0;
  bool done = false;
  bool hedged = false;
  Clock::time_point last_start;
  Clock::time_point retry_at = Clock::time_point::max();
  std::vector<Attempt*> attempts;
  // The last retryable failure, and the replica that gave it: what the part
  // ends with when the deadline cuts its retries short.
  grpc::Status last_failure;
  size_t last_failure_replica = 0;
};

// The status a part that no replica answered ends with: the last retryable
// failure (UNAVAILABLE, say), not the DEADLINE_EXCEEDED of an attempt the
// deadline caught still connecting, so that all replicas down reads the
// same on an idle machine and a busy one; with how many attempts were made.
grpc::Status GaveUp(const PartState& s) {
  return grpc::Status(s.last_failure.error_code(),
                      StrCat(s.last_failure.error_message(), " (last of ",
                             s.tries, s.tries == 1 ? " attempt" : " attempts",
                             "; no replica answered before the deadline)"));
}

}  // namespace

absl::Status Shards::Run(std::span<Part> parts, std::span<const size_t> which,
                         const CallPolicy& policy) const {
  // The calls complete on a queue of this call's own, which this thread
  // drains, as a blocking stub's call does: no callback thread hands a
  // result over (with gRPC's callback API that hand-over kept a one-shard
  // router at 0.85-0.90x of a blocking stub on loopback; now 0.94-0.99x).
  grpc::CompletionQueue queue;
  std::vector<std::unique_ptr<Attempt>> owned;
  std::vector<PartState> state(which.size());
  int in_flight = 0;
  const auto system_deadline = SystemDeadline(policy.deadline);
  absl::Status failure;

  auto start = [&](size_t i) {
    Part& part = parts[which[i]];
    const ShardState& shard = *shards_[part.shard];
    PartState& s = state[i];
    if (s.tries == 0) s.first_replica = PickReplica(part.shard);
    auto attempt = std::make_unique<Attempt>();
    attempt->part = i;
    attempt->replica = (s.first_replica + s.tries) % shard.replicas.size();
    attempt->context.set_deadline(system_deadline);
    if (!policy.token.empty()) {
      attempt->context.AddMetadata("authorization",
                                   StrCat("Bearer ", policy.token));
    }
    ++s.tries;
    ++s.in_flight;
    ++in_flight;
    s.last_start = Clock::now();
    Attempt* a = attempt.get();
    owned.push_back(std::move(attempt));
    s.attempts.push_back(a);
    a->reader = shard.replicas[a->replica].stub->PrepareAsyncMultiGet(
        &a->context, part.request, &queue);
    a->reader->StartCall();
    a->reader->Finish(&a->response, &a->status, a);
  };
  auto cancel_all = [&] {
    for (PartState& s : state) {
      s.done = true;
      for (Attempt* a : s.attempts) a->context.TryCancel();
    }
  };
  // One finished call: done, retried, left to its hedge, or the end.
  auto finish = [&](Attempt* a) {
    --in_flight;
    PartState& s = state[a->part];
    --s.in_flight;
    if (s.done) return;  // lost a race, or cancelled
    Part& part = parts[which[a->part]];
    const ShardState& shard = *shards_[part.shard];
    if (a->status.ok()) {
      part.response.Swap(&a->response);
      part.answered = true;
      s.done = true;
      for (Attempt* other : s.attempts) {
        if (other != a) other->context.TryCancel();
      }
      return;
    }
    if (s.in_flight > 0) return;  // its hedge may still answer
    const size_t n = shard.replicas.size();
    const Clock::time_point now = Clock::now();
    const bool retryable = IsRetryable(a->status.error_code());
    if (retryable) {
      s.last_failure = a->status;
      s.last_failure_replica = a->replica;
    }
    if (retryable && now < policy.deadline) {
      if (s.tries % n != 0) {
        if (policy.counts != nullptr) ++policy.counts->retries;
        start(a->part);  // the next replica, at once
        return;
      }
      Clock::duration wait = policy.backoff;
      for (size_t round = 1; round < s.tries / n && wait < policy.max_backoff;
           ++round) {
        wait *= 2;
      }
      wait = std::min(wait, policy.max_backoff);
      if (now + wait < policy.deadline) {
        s.retry_at = now + wait;
        return;
      }
    }
    const bool cut_short =
        retryable ||
        (a->status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED &&
         !s.last_failure.ok());
    absl::Status error =
        cut_short ? ShardError(part.shard,
                               shard.replicas[s.last_failure_replica].target,
                               GaveUp(s))
                  : ShardError(part.shard, shard.replicas[a->replica].target,
                               a->status);
    if (policy.partial &&
        (cut_short ||
         a->status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED)) {
      part.failure = std::move(error);
      s.done = true;
      for (Attempt* other : s.attempts) other->context.TryCancel();
      return;
    }
    failure = std::move(error);
    cancel_all();
  };

  for (size_t i : which) {
    parts[i].answered = false;
    parts[i].failure = absl::OkStatus();
  }
  for (size_t i = 0; i < which.size(); ++i) start(i);
  while (true) {
    // The next timer: a retry after its backoff, or a hedge.
    Clock::time_point wake = Clock::time_point::max();
    bool waiting = false;
    for (const PartState& s : state) {
      if (s.done) continue;
      if (s.retry_at != Clock::time_point::max()) {
        waiting = true;
        wake = std::min(wake, s.retry_at);
      } else if (policy.hedge_delay > Clock::duration::zero() && !s.hedged &&
                 s.in_flight == 1) {
        wake = std::min(wake, s.last_start + policy.hedge_delay);
      }
    }
    if (in_flight == 0 && !waiting) break;
    void* tag = nullptr;
    bool ok = false;
    if (wake == Clock::time_point::max()) {
      if (queue.Next(&tag, &ok)) finish(static_cast<Attempt*>(tag));
    } else if (queue.AsyncNext(&tag, &ok, SystemDeadline(wake)) ==
               grpc::CompletionQueue::GOT_EVENT) {
      finish(static_cast<Attempt*>(tag));
    }
    const Clock::time_point now = Clock::now();
    for (size_t i = 0; i < state.size(); ++i) {
      PartState& s = state[i];
      if (s.done) continue;
      if (s.retry_at <= now) {
        s.retry_at = Clock::time_point::max();
        if (policy.counts != nullptr) ++policy.counts->retries;
        start(i);
      } else if (policy.hedge_delay > Clock::duration::zero() && !s.hedged &&
                 s.in_flight == 1 && s.retry_at == Clock::time_point::max() &&
                 now >= s.last_start + policy.hedge_delay) {
        s.hedged = true;
        if (policy.counts != nullptr) ++policy.counts->hedges;
        start(i);
      }
    }
  }
  // Every call has finished: the queue is empty, and shuts down at once.
  queue.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (queue.Next(&tag, &ok)) {
  }
  return failure;
}

}  // namespace roost
