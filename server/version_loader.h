// Loading a table version for serving, off the registry's thread.
//
// LoadVersion() takes a read lease on the version's table file (in the mmap
// load modes; see file_lease.h), then opens and checks the version
// (OpenVersion: MANIFEST, file, checksums). LoadWorkers runs such loads on a
// few threads of their own, so that a slow one (a large table's checksums,
// a hung disk) holds up neither the registry's thread (other tables' swaps,
// admin commands, lease breaks, shutdown) nor, up to the number of threads,
// other tables' loads.
//
// Example:
//   LoadWorkers workers(2);
//   workers.Submit([=] { Post(LoadVersion(dir, options)); });
//   ...
//   if (!workers.Stop(std::chrono::seconds(10))) Log("abandoned a load");
#ifndef ROOST_SERVER_VERSION_LOADER_H_
#define ROOST_SERVER_VERSION_LOADER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/file_lease.h"
#include "server/verified_files.h"
#include "storage/version/open_version.h"

namespace roost {

// One opened, checked version of a table. Immutable once loaded.
struct ServingVersion {
  uint64_t version = 0;
  std::string version_name;  // "v000003"
  // The response field that names it, encoded once (request_codec.h): in
  // a GetResponse (field 3), and in a MultiGetResponse or ScanResponse
  // (field 2).
  std::string get_version_field;
  std::string batch_version_field;
  // The newest version withdrawn (rolled back from, or after a POINTER
  // moved back) that this one serves in place of, 0 for none: answers name
  // it in `withdrawn_through` (lookup.proto). The one field written after
  // loading: by the registry's thread before each Publish of this version.
  mutable std::atomic<uint64_t> withdrawn_through{0};
  // Whether a batch asks the kernel for its keys' pages before looking
  // them up (Table::RequestPages): set by the registry's thread each
  // --resident-refresh, while less of the mapped table than
  // --page-requests-below says is resident in memory.
  mutable std::atomic<bool> request_pages{false};
  // Declared before `opened`, so destroyed after it: the lease is released
  // only once the file is unmapped.
  std::unique_ptr<FileLease> lease;
  OpenedVersion opened;
  // A fixed-width table's key width (the cuckoo inline layout), 0 otherwise.
  uint32_t key_width = 0;
  // No key is longer.
  uint32_t max_key_length = 0;
  uint64_t file_size = 0;
  // Its file was one LoadOptions::verified vouched for, so its region
  // checksums were not read again.
  bool verified_when_pulled = false;
  // LoadOptions::generation: which copy of its version number this is.
  uint64_t generation = 0;

  const Table& table() const { return *opened.file; }
  // The table's MultiGet, preceded by its RequestPages while request_pages
  // says so (and the batch has more than one key).
  absl::Status MultiGet(std::span<const std::string_view> keys,
                        std::span<LookupResult> results,
                        ValuePins* pins) const {
    if (keys.size() > 1 && request_pages.load(std::memory_order_relaxed)) {
      table().RequestPages(keys);
    }
    return table().MultiGet(keys, results, pins);
  }
  // The response field `number` naming withdrawn_through, encoded; "" (no
  // allocation) when it is 0, as nearly always.
  std::string WithdrawnField(int number) const;

  // A version served as one shard of a sharded version answers only for
  // that shard's keys: the index of the first of `keys` that belongs to
  // another shard, and that shard; std::nullopt when all are this
  // version's (always, for an unsharded one). One XXH3 per key.
  struct OtherShard {
    size_t index;
    uint32_t shard;
  };
  std::optional<OtherShard> FirstKeyOfAnotherShard(
      std::span<const std::string_view> keys) const;
};

struct LoadOptions {
  VersionOpenOptions open;
  // Take a read lease on the table file (the mmap load modes). The default
  // value is true.
  bool lease = true;
  // Files verified whole as they were written (verified_files.h): one that
  // is still as it was then opens without the pass over every region
  // checksum that open.read.verify_checksums asks for. The default value
  // is nullptr (none).
  std::shared_ptr<const VerifiedFiles> verified;
  // Copied into ServingVersion::generation: with --repository, the
  // RepositoryPointer::generation of the copy on disk when the load began,
  // so that a copy put in place later under the same number is loaded
  // again. The default value is 0.
  uint64_t generation = 0;
};

struct LoadOutcome {
  // Errors as OpenVersion's, and Aborted when the table file is open for
  // writing (a copy in progress): try again on the next scan.
  absl::StatusOr<std::shared_ptr<const ServingVersion>> version;
  // Why no lease could be had (the version is served without one), or "".
  std::string lease_problem;
};

// Loads the version directory `dir`, whose number is `version`.
LoadOutcome LoadVersion(const std::string& dir, uint64_t version,
                        const LoadOptions& options);

class LoadWorkers {
 public:
  explicit LoadWorkers(int threads);
  // Stop()s with no wait.
  ~LoadWorkers();
  LoadWorkers(const LoadWorkers&) = delete;
  LoadWorkers& operator=(const LoadWorkers&) = delete;

  // Runs `job` on a worker. A job must own (or share) everything it
  // touches: one still running at Stop() may outlive this object.
  void Submit(std::function<void()> job);
  // Drops jobs not started and waits up to `timeout` for the running ones.
  // False when some still run; their threads are then left to finish alone.
  bool Stop(std::chrono::milliseconds timeout);
  // How long the oldest running job has run; zero when none runs.
  std::chrono::steady_clock::duration OldestRunning() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace roost

#endif  // ROOST_SERVER_VERSION_LOADER_H_
