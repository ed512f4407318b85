#include "client/get_coalescer.h"

#include <optional>
#include <utility>

#include "client/multiget_answer.h"
#include "client/version_consensus.h"
#include "util/str_cat.h"

namespace roost {

// One MultiGet: the Gets it carries and its call.
struct GetCoalescer::Batch {
  std::string table;
  std::vector<Done> dones;  // one per key of `request`, in order
  Clock::time_point deadline;
  size_t tries = 0;  // calls started; the next goes to first_replica + tries
  size_t first_replica = 0;
  size_t replica = 0;  // of the call in flight
  // The call in flight.
  std::unique_ptr<grpc::ClientContext> context;
  std::unique_ptr<grpc::ClientAsyncResponseReader<v1::MultiGetResponse>> reader;
  grpc::Status status;
  v1::MultiGetRequest request;
  v1::MultiGetResponse response;
};

GetCoalescer::GetCoalescer(std::span<const Replica> replicas, uint32_t shard,
                           CoalescerOptions options)
    : replicas_(replicas), shard_(shard), options_(std::move(options)) {}

GetCoalescer::~GetCoalescer() {
  {
    std::unique_lock lock(mu_);
    idle_.wait(lock, [&] { return in_flight_ == 0; });
  }
  queue_.Shutdown();
  if (poller_.joinable()) poller_.join();
}

void GetCoalescer::Poll() {
  void* tag;
  bool ok;
  while (queue_.Next(&tag, &ok)) {
    auto* batch = static_cast<Batch*>(tag);
    Answered(batch, batch->status);
  }
}

void GetCoalescer::Get(std::string_view table, std::string_view key,
                       Done done) {
  gets_.fetch_add(1, std::memory_order_relaxed);
  Batch* batch = nullptr;
  {
    std::lock_guard lock(mu_);
    auto it = queues_.find(table);
    if (it == queues_.end()) {
      it = queues_.emplace(std::string(table), Queue{}).first;
    }
    Queue& queue = it->second;
    if (queue.keys.empty()) queue.oldest = Clock::now();
    queue.keys.emplace_back(key);
    queue.dones.push_back(std::move(done));
    if (queue.in_flight < options_.max_in_flight) {
      batch = TakeBatch(it->first, queue);
    }
    if (!poller_.joinable()) poller_ = std::thread([this] { Poll(); });
  }
  if (batch != nullptr) Send(batch);
}

absl::StatusOr<GetResult> GetCoalescer::Get(std::string_view table,
                                            std::string_view key) {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<absl::StatusOr<GetResult>> result;
  Get(table, key, [&](absl::StatusOr<GetResult> r) {
    std::lock_guard lock(mu);
    result = std::move(r);
    cv.notify_one();
  });
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return result.has_value(); });
  return *std::move(result);
}

GetCoalescer::Batch* GetCoalescer::TakeBatch(const std::string& table,
                                             Queue& queue) {
  if (queue.keys.empty()) return nullptr;
  auto* batch = new Batch;
  batch->table = table;
  batch->deadline =
      queue.oldest +
      std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(options_.timeout_seconds));
  const size_t n = std::min<size_t>(queue.keys.size(), options_.max_batch);
  batch->request.set_table(table);
  batch->request.set_packed(true);
  batch->request.mutable_keys()->Reserve(static_cast<int>(n));
  for (size_t i = 0; i < n; ++i) {
    batch->request.add_keys(std::move(queue.keys[i]));
  }
  batch->dones.reserve(n);
  std::move(queue.dones.begin(), queue.dones.begin() + n,
            std::back_inserter(batch->dones));
  queue.keys.erase(queue.keys.begin(), queue.keys.begin() + n);
  queue.dones.erase(queue.dones.begin(), queue.dones.begin() + n);
  if (!queue.keys.empty()) queue.oldest = Clock::now();
  ++queue.in_flight;
  ++in_flight_;
  batch->first_replica =
      next_replica_.fetch_add(1, std::memory_order_relaxed) % replicas_.size();
  return batch;
}

void GetCoalescer::Send(Batch* batch) {
  batches_.fetch_add(1, std::memory_order_relaxed);
  batch->replica = (batch->first_replica + batch->tries++) % replicas_.size();
  batch->context = std::make_unique<grpc::ClientContext>();
  batch->context->set_deadline(SystemDeadline(batch->deadline));
  if (!options_.token.empty()) {
    batch->context->AddMetadata("authorization",
                                StrCat("Bearer ", options_.token));
  }
  batch->response.Clear();
  batch->reader = replicas_[batch->replica].stub->PrepareAsyncMultiGet(
      batch->context.get(), batch->request, &queue_);
  batch->reader->StartCall();
  batch->reader->Finish(&batch->response, &batch->status, batch);
}

bool GetCoalescer::Settled(Batch* batch) {
  const v1::MultiGetResponse& r = batch->response;
  MonotonicReads& monotonic = *options_.monotonic;
  monotonic.Answered(batch->table, shard_, r.version(), r.withdrawn_through());
  const std::optional<uint64_t> v = VersionNumber(r.version());
  if (!v.has_value()) return true;  // a server too old to say
  if (*v == monotonic.Target(batch->table) &&
      monotonic.Readable(batch->table, *v)) {
    monotonic.Settled(batch->table, *v);
    return true;
  }
  // Another version than the target (a rollout or rollback under way):
  // the routing client's MultiGet settles it, off the completion thread,
  // which must not wait for its rounds and backoffs.
  std::thread([this, batch] {
    const std::vector<std::string> keys(batch->request.keys().begin(),
                                        batch->request.keys().end());
    std::vector<absl::StatusOr<GetResult>> results =
        options_.reread(batch->table, keys);
    for (size_t i = 0; i < batch->dones.size(); ++i) {
      batch->dones[i](std::move(results[i]));
    }
    Finish(batch);
  }).detach();
  return false;
}

void GetCoalescer::Answered(Batch* batch, const grpc::Status& status) {
  if (!status.ok() && IsRetryable(status.error_code()) &&
      batch->tries < replicas_.size() && Clock::now() < batch->deadline) {
    Send(batch);
    return;
  }
  if (status.ok() && options_.monotonic != nullptr && !Settled(batch)) return;
  // The results go out before the batch stops counting as in flight, so
  // that Gets the callbacks make queue up and leave together below.
  const size_t n = batch->dones.size();
  if (!status.ok()) {
    const absl::Status error =
        ShardError(shard_, replicas_[batch->replica].target, status);
    for (Done& done : batch->dones) done(error);
  } else {
    std::vector<GetResult> results(n);
    const absl::Status read = ReadMultiGetAnswer(
        batch->response, n, [&](size_t i, bool found, std::string_view value) {
          results[i].found = found;
          results[i].value.assign(value);
        });
    for (size_t i = 0; i < n; ++i) {
      if (!read.ok()) {
        batch->dones[i](absl::Status(
            read.code(),
            StrCat("shard ", shard_, " (", replicas_[batch->replica].target,
                   "): ", read.message())));
        continue;
      }
      results[i].version = batch->response.version();
      batch->dones[i](std::move(results[i]));
    }
  }
  Finish(batch);
}

void GetCoalescer::Finish(Batch* batch) {
  std::vector<Batch*> next;
  {
    std::lock_guard lock(mu_);
    Queue& queue = queues_.find(batch->table)->second;
    --queue.in_flight;
    --in_flight_;
    while (queue.in_flight < options_.max_in_flight && !queue.keys.empty()) {
      next.push_back(TakeBatch(batch->table, queue));
    }
    if (in_flight_ == 0) idle_.notify_all();
  }
  delete batch;
  for (Batch* b : next) Send(b);
}

}  // namespace roost
