#include "server/version_loader.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "server/request_codec.h"
#include "storage/partition.h"
#include "storage/version/data_dir.h"
#include "util/str_cat.h"

namespace roost {

std::optional<ServingVersion::OtherShard>
ServingVersion::FirstKeyOfAnotherShard(
    std::span<const std::string_view> keys) const {
  if (!opened.shard) return std::nullopt;
  const uint32_t shards = opened.manifest.shards;
  for (size_t i = 0; i < keys.size(); ++i) {
    const uint32_t shard = PartitionOf(keys[i], shards);
    if (shard != *opened.shard) [[unlikely]] {
      return OtherShard{i, shard};
    }
  }
  return std::nullopt;
}

std::string ServingVersion::WithdrawnField(int number) const {
  const uint64_t w = withdrawn_through.load(std::memory_order_relaxed);
  return w == 0 ? std::string() : EncodeVersionField(number, VersionDirName(w));
}

LoadOutcome LoadVersion(const std::string& dir, uint64_t version,
                        const LoadOptions& options) {
  LoadOutcome out;
  auto sv = std::make_shared<ServingVersion>();
  sv->version = version;
  sv->version_name = VersionDirName(version);
  sv->get_version_field = EncodeVersionField(3, sv->version_name);
  sv->batch_version_field = EncodeVersionField(2, sv->version_name);
  sv->generation = options.generation;
  // The file served: table.sst, or this server's shard's file of a sharded
  // version (OpenVersion checks the MANIFEST this reads, again, below).
  std::string file_name(kTableFileName);
  if (options.open.shard) {
    auto m = ReadManifest(StrCat(dir, "/", kManifestName));
    if (m.ok() && m->shards > 0 && *options.open.shard < m->shards) {
      file_name = ShardFileName(*options.open.shard, m->shards);
    }
  }
  const std::string table_path = StrCat(dir, "/", file_name);
  // The lease comes first, so that the bytes verified below are the bytes
  // served: no writer can open the file from here on without the registry
  // hearing of it.
  std::string lease_problem;
  if (options.lease) {
    auto lease = FileLease::Take(table_path);
    if (lease.ok()) {
      sv->lease = std::move(*lease);
    } else if (lease.status().code() == absl::StatusCode::kUnavailable) {
      out.version = absl::AbortedError(lease.status().message());
      return out;
    } else {
      lease_problem = std::string(lease.status().message());
    }
  }
  // After the lease: from here on no writer goes unnoticed, and before it
  // the file's change time would show one.
  VersionOpenOptions open = options.open;
  if (open.read.verify_checksums && !open.check_file_checksum &&
      options.verified && options.verified->Matches(table_path)) {
    open.read.verify_checksums = false;
    sv->verified_when_pulled = true;
  }
  auto opened = OpenVersion(dir, open);
  if (!opened.ok()) {
    // A missing or odd table file is what is wrong, not the lease.
    out.version = opened.status();
    return out;
  }
  out.lease_problem = std::move(lease_problem);
  sv->opened = std::move(*opened);
  if (sv->lease && !sv->lease->SameFile(table_path)) {
    out.version = absl::AbortedError(
        StrCat(table_path, " was replaced while it was being opened"));
    return out;
  }
  const Table& table = *sv->opened.file;
  sv->key_width = table.key_width();
  sv->max_key_length = table.max_key_length();
  sv->file_size = table.file_data().size();
  out.version = std::move(sv);
  return out;
}

struct LoadWorkers::State {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> jobs;
  bool stopping = false;
  int running = 0;
  int alive = 0;  // threads not yet exited
  std::vector<std::chrono::steady_clock::time_point> started;  // running jobs
  std::condition_variable exited;
};

LoadWorkers::LoadWorkers(int threads) : state_(std::make_shared<State>()) {
  for (int i = 0; i < threads; ++i) {
    state_->alive++;
    std::thread([state = state_] {
      std::unique_lock lock(state->mu);
      for (;;) {
        state->cv.wait(lock,
                       [&] { return state->stopping || !state->jobs.empty(); });
        if (state->stopping) break;
        std::function<void()> job = std::move(state->jobs.front());
        state->jobs.pop_front();
        const auto started = std::chrono::steady_clock::now();
        state->running++;
        state->started.push_back(started);
        lock.unlock();
        job();
        job = nullptr;
        lock.lock();
        state->running--;
        state->started.erase(
            std::find(state->started.begin(), state->started.end(), started));
      }
      state->alive--;
      state->exited.notify_all();
    }).detach();
  }
}

LoadWorkers::~LoadWorkers() { Stop(std::chrono::milliseconds(0)); }

void LoadWorkers::Submit(std::function<void()> job) {
  {
    std::lock_guard lock(state_->mu);
    if (state_->stopping) return;
    state_->jobs.push_back(std::move(job));
  }
  state_->cv.notify_one();
}

bool LoadWorkers::Stop(std::chrono::milliseconds timeout) {
  std::unique_lock lock(state_->mu);
  state_->stopping = true;
  state_->jobs.clear();
  state_->cv.notify_all();
  return state_->exited.wait_for(lock, timeout,
                                 [&] { return state_->alive == 0; });
}

std::chrono::steady_clock::duration LoadWorkers::OldestRunning() const {
  std::lock_guard lock(state_->mu);
  if (state_->started.empty()) return {};
  return std::chrono::steady_clock::now() -
         *std::min_element(state_->started.begin(), state_->started.end());
}

}  // namespace roost
