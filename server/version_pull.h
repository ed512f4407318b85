// PullVersion: one table version brought from a table repository into the
// data directory, the way roost-load publishes one:
//
//   1. its MANIFEST is read and checked: it parses, names this version,
//      and (sharded) has the server's shard, or (unsharded) is one file;
//   2. the file system must keep --min-free-bytes free after the file;
//   3. the file (shard I's, or table.sst) is downloaded into a staging
//      directory DATA_DIR/T/.staging-<pid>-XXXXXX (never a version: a
//      killed server's is removed by the next server or roost-load),
//      checked against the MANIFEST's size and XXH3-64, and fsynced;
//   4. the MANIFEST is written last, the directory made read-only and
//      renamed to DATA_DIR/T/v<N>: never over an existing one, unless
//      `replace` says the one there is not the repository's version; then
//      the two directories are exchanged in one rename (RENAME_EXCHANGE),
//      so that v<N> is the old one or the new one whole at every moment,
//      and the old one is removed.
// On any failure nothing is left behind but the versions there were.
//
// Downloads are paced to `rate` bytes per second (0: unpaced) by reading
// the object in ranges and waiting between them. A pull stops (Cancelled,
// nothing left behind) when `stop` turns true: a paced one in its waits, and
// any one as soon as the store's request ends, which a store opened with
// ObjectStoreOptions::stop makes within about a second.
//
// Example:
//   PullJob job{.store = store, .table = "users", .version = 7,
//               .data_dir = "/var/lib/roost", .shard = 2};
//   PullOutcome out = PullVersion(job);
//   if (!out.status.ok()) Log(out.reason, ": ", out.status.message());
#ifndef ROOST_SERVER_VERSION_PULL_H_
#define ROOST_SERVER_VERSION_PULL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "repository/object_store.h"
#include "server/verified_files.h"

namespace roost {

struct PullJob {
  ObjectStore* store = nullptr;  // not owned
  std::string table;
  uint64_t version = 0;
  std::string data_dir;
  // The server's --shard; std::nullopt refuses sharded versions.
  std::optional<uint32_t> shard;
  // Bytes per second; 0 is unlimited.
  uint64_t rate = 0;
  // Bytes the file system must keep free after the download.
  uint64_t min_free_bytes = 0;
  // Checked between ranges: a pull stops (Cancelled) when it turns true.
  const std::atomic<bool>* stop = nullptr;
  // Called with each piece's size as it arrives.
  std::function<void(uint64_t bytes)> on_bytes;
  // When set, the file pulled is noted here (verified_files.h) before the
  // version appears if every region checksum of it was checked as it
  // arrived (a cuckoo table: storage/cuckoo/region_stream_check.h). Not owned.
  VerifiedFiles* verified = nullptr;
  // DATA_DIR/T/v<N> is there but is not the repository's version (its
  // MANIFEST differs, or it lacks this server's file): the version pulled
  // replaces it. Without it an existing directory fails the pull (reason
  // local).
  bool replace = false;
};

struct PullOutcome {
  absl::Status status;
  // When it failed, the roost_repository_pull_failures_total reason:
  // unreachable, denied, missing, corrupt, manifest (one that does not
  // parse, does not fit this server, or is larger than kMaxManifestSize),
  // shard, no_space (too little free space before the download, or the
  // disk or a quota full during it: ENOSPC, EDQUOT) or local (the data
  // directory could not be written otherwise).
  std::string reason;
};

PullOutcome PullVersion(const PullJob& job);

// The reason of a failed object-store call (unreachable, denied, missing,
// corrupt), or "local" for anything else.
std::string StoreFailureReason(const absl::Status& status);

// The reason of a failed write to the data directory: "no_space" for a
// full disk or quota (ResourceExhausted: util/file.h's ErrnoError), else
// "local".
std::string LocalFailureReason(const absl::Status& status);

}  // namespace roost

#endif  // ROOST_SERVER_VERSION_PULL_H_
