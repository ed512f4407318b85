// The data directory's layout, shared by the loader that publishes into it
// and the server that serves from it:
//
//   DATA_DIR/<table>/v000001/{table.sst, MANIFEST}
//   DATA_DIR/<table>/v000002/...
//
// A version directory is complete, and exists for readers, once its MANIFEST
// does; the loader writes the MANIFEST last and renames the directory into
// place whole.
#ifndef ROOST_STORAGE_VERSION_DATA_DIR_H_
#define ROOST_STORAGE_VERSION_DATA_DIR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace roost {

inline constexpr std::string_view kManifestName = "MANIFEST";
inline constexpr std::string_view kTableFileName = "table.sst";

// Letters, digits, '.', '_' and '-', not starting with '.', 1 to 128 bytes.
absl::Status ValidateTableName(std::string_view name);

// "v000042" for 42. ParseVersionDirName inverts it, and only it: "v42",
// "v0000042" and "v000000" name no version, so that one number has one
// directory.
std::string VersionDirName(uint64_t version);
std::optional<uint64_t> ParseVersionDirName(std::string_view name);
// A version as people and requests name it: "v000007" (its directory's
// name) or "7"; std::nullopt for anything else (0, "v7", "", signs,
// spaces).
std::optional<uint64_t> ParseVersionText(std::string_view text);

struct TableVersion {
  uint64_t version;
  std::string path;
  // Has a MANIFEST (a regular file, or a link to one).
  bool complete = false;
  // Why the directory could not be examined ("cannot search DIR:
  // Permission denied"); empty when it could. Such a version is neither
  // complete nor to be ignored: it holds its number.
  std::string problem;
};
// The version directories of a table directory, oldest first. Never throws;
// NotFound or PermissionDenied when the table directory cannot be listed.
absl::StatusOr<std::vector<TableVersion>> ListVersions(
    const std::string& table_dir);

// The number after the newest of `versions` (1 for none).
// FailedPrecondition when the newest is already the largest number there is.
absl::StatusOr<uint64_t> NextVersion(const std::vector<TableVersion>& versions);

// What a version directory's files look like now, as one string that
// changes when the directory, its MANIFEST or its table file (a sharded
// version: any of its shard-* files) is written,
// replaced, renamed in or out, or has its permissions changed (inode, size,
// mode, mtime and ctime of each; the errno of one that cannot be stat'ed).
std::string VersionFingerprint(const std::string& version_dir);

// What an inspect/verify/get argument names: a table file; a version
// directory (with a MANIFEST); or a table directory, meaning its newest
// complete version.
struct ResolvedTable {
  std::string file;                        // the table file
  std::optional<std::string> version_dir;  // when given a directory
};
absl::StatusOr<ResolvedTable> ResolveTablePath(const std::string& path);

}  // namespace roost

#endif  // ROOST_STORAGE_VERSION_DATA_DIR_H_
