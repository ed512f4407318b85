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
//      size it gives;
//   4. table.sst opens (header or footer valid; every region checksum when
//      read.verify_checksums) and agrees with the MANIFEST on format, format
//      version, key count, key width, key and value bytes (where the format
//      records them) and the longest key and value;
//   5. with check_file_checksum, the XXH3-64 of the whole file is the
//      MANIFEST's.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(OpenedVersion v,
//                          OpenVersion("/data/users/v000003", {}));
//   v.file->Get(key, &value);
#ifndef ROOST_STORAGE_VERSION_CHECK_H_
#define ROOST_STORAGE_VERSION_CHECK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "storage/manifest.h"
#include "storage/table.h"

namespace roost {

struct VersionOpenOptions {
  // How table.sst is opened. The default value verifies every checksum of
  // a mapped file.
  TableReadOptions read;
  // Also recompute the whole file's XXH3-64 against the MANIFEST (one more
  // pass over the file). The default value is false.
  bool check_file_checksum = false;
};

struct OpenedVersion {
  std::string table;
  uint64_t version = 0;
  Manifest manifest;
  std::unique_ptr<Table> file;
};

// Opens and checks the version directory `dir` as above. Errors:
//   InvalidArgument: a bad directory name, or a MANIFEST that is malformed
//     or disagrees with the directory or the table file;
//   Unavailable: the version is not all there yet (table.sst missing, or
//     shorter than the MANIFEST says), so it may pass once its files have
//     arrived;
//   DataLoss: a corrupt table file or whole-file checksum;
//   FailedPrecondition: an unsupported format version, or a MANIFEST or
//     table file that is not a regular file;
//   NotFound, PermissionDenied, ResourceExhausted: the files could not be
//     read (ResourceExhausted: an oversized MANIFEST, or no memory to lock).
absl::StatusOr<OpenedVersion> OpenVersion(const std::string& dir,
                                          const VersionOpenOptions& options);

}  // namespace roost

#endif  // ROOST_STORAGE_VERSION_CHECK_H_
