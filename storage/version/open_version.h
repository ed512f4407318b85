// Opening a published version of a table: the one check of a version
// directory that roost-server (before serving it) and `roost-load verify`
// (before passing it) share, so that verify never passes a version the
// server refuses.
//
// DATA_DIR/<table>/v<N>/ is accepted when:
//   1. its name is VersionDirName(N) ("v000002", not "v2") and <table> is a
//      valid table name;
//   2. MANIFEST is a regular file of at most kMaxManifestSize bytes that
//      parses, and names this table and version N;
//   3. MANIFEST lists exactly one file, table.sst, a regular file of the
//      size it gives; or, for a sharded version (docs/format/manifest.md),
//      one file per shard, named and numbered in shard order, whose key
//      counts and bytes add up to the version's, with the partition
//      function this build knows; then options.shard chooses the one file
//      opened, which must be there whole;
//   4. table.sst (or the shard's file) opens (header or footer valid; every
//   region checksum when
//      read.verify_checksums) and agrees with the MANIFEST on format, format
//      version, key count, key width, key and value bytes (where the format
//      records them) and the longest key and value;
//   5. with check_file_checksum, the XXH3-64 of the whole file is the
//      MANIFEST's.
// Every error about a shard names it.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(OpenedVersion v,
//                          OpenVersion("/data/users/v000003", {}));
//   v.file->Get(key, &value);
#ifndef ROOST_STORAGE_VERSION_OPEN_VERSION_H_
#define ROOST_STORAGE_VERSION_OPEN_VERSION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "storage/table.h"
#include "storage/version/manifest.h"

namespace roost {

struct VersionOpenOptions {
  // How table.sst is opened. The default value verifies every checksum of
  // a mapped file.
  TableReadOptions read;
  // Also recompute the whole file's XXH3-64 against the MANIFEST (one more
  // pass over the file). The default value is false.
  bool check_file_checksum = false;
  // Which shard of a sharded version to open. A sharded version opened
  // without one is refused (FailedPrecondition); an unsharded version is
  // opened whatever this says. The default value is std::nullopt.
  std::optional<uint32_t> shard;
};

struct OpenedVersion {
  std::string table;
  uint64_t version = 0;
  Manifest manifest;
  // The shard opened, of a sharded version.
  std::optional<uint32_t> shard;
  std::string file_name;  // "table.sst", or the shard's file
  std::unique_ptr<Table> file;
};

// Opens and checks the version directory `dir` as above. Errors:
//   InvalidArgument: a bad directory name, or a MANIFEST that is malformed
//     or disagrees with the directory or the table file;
//   Unavailable: the version is not all there yet (table.sst missing, or
//     shorter than the MANIFEST says), so it may pass once its files have
//     arrived;
//   DataLoss: a corrupt table file or whole-file checksum;
//   FailedPrecondition: an unsupported format version or partition
//     function, a MANIFEST or table file that is not a regular file, or a
//     sharded version opened without a shard (or with one it lacks);
//   NotFound, PermissionDenied, ResourceExhausted: the files could not be
//     read (ResourceExhausted: an oversized MANIFEST, or no memory to lock).
absl::StatusOr<OpenedVersion> OpenVersion(const std::string& dir,
                                          const VersionOpenOptions& options);

}  // namespace roost

#endif  // ROOST_STORAGE_VERSION_OPEN_VERSION_H_
