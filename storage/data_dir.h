// The data directory's layout, shared by the loader that publishes into it
// and the server that serves from it:
//
//   DATA_DIR/<table>/v000001/{table.sst, MANIFEST}
//   DATA_DIR/<table>/v000002/...
//
// A version directory is complete, and exists for readers, once its MANIFEST
// does; the loader writes the MANIFEST last and renames the directory into
// place whole.
#ifndef ROOST_STORAGE_DATA_DIR_H_
#define ROOST_STORAGE_DATA_DIR_H_

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

// "v000042" for 42; ParseVersionDirName inverts it (nullopt for other names).
std::string VersionDirName(uint64_t version);
std::optional<uint64_t> ParseVersionDirName(std::string_view name);

struct TableVersion {
  uint64_t version;
  std::string path;
  bool complete;  // has a MANIFEST
};
// The version directories of a table directory, oldest first.
absl::StatusOr<std::vector<TableVersion>> ListVersions(
    const std::string& table_dir);

}  // namespace roost

#endif  // ROOST_STORAGE_DATA_DIR_H_
