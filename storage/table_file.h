// Opening a table file of either format for roost-load's inspect, verify
// and get, and resolving the paths those commands accept.
#ifndef ROOST_STORAGE_TABLE_FILE_H_
#define ROOST_STORAGE_TABLE_FILE_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "storage/block_table.h"
#include "storage/cuckoo_table.h"

namespace roost {

enum class TableFormat { kCuckoo, kBlock };

std::string_view TableFormatName(TableFormat format);
absl::StatusOr<TableFormat> ParseTableFormat(std::string_view name);

// Which format `path` holds, from its magic number. DataLoss when neither.
absl::StatusOr<TableFormat> DetectFormat(const std::string& path);

struct TableReadOptions {
  // Verify every checksum at Open(). The default value is true.
  bool verify_checksums = true;
  // How the file is brought into memory. The default value is
  // LoadMode::kMmap.
  LoadMode load_mode = LoadMode::kMmap;
};

// A table file of either format.
class TableFile {
 public:
  static absl::StatusOr<std::unique_ptr<TableFile>> Open(
      const std::string& path, bool verify_checksums);
  static absl::StatusOr<std::unique_ptr<TableFile>> Open(
      const std::string& path, const TableReadOptions& options);

  TableFormat format() const { return format_; }
  // The table, when it has that format; null otherwise.
  const CuckooTable* cuckoo() const { return cuckoo_.get(); }
  const BlockTable* block() const { return block_.get(); }
  uint64_t num_keys() const;
  // The longest key the table holds.
  uint32_t max_key_length() const;
  // The bytes in memory (mapped or copied), for residency accounting.
  std::string_view file_data() const;
  // Copies the value of `key` into *value when found.
  absl::StatusOr<bool> Get(std::string_view key, std::string* value) const;
  // The header or footer and statistics, one "name  value" line each.
  std::string Describe() const;

 private:
  TableFile() = default;
  TableFormat format_ = TableFormat::kCuckoo;
  std::unique_ptr<CuckooTable> cuckoo_;
  std::unique_ptr<BlockTable> block_;
};

// What an inspect/verify/get argument names: a table file; a version
// directory (with a MANIFEST); or a table directory, meaning its newest
// complete version.
struct ResolvedTable {
  std::string file;                        // the table file
  std::optional<std::string> version_dir;  // when given a directory
};
absl::StatusOr<ResolvedTable> ResolveTablePath(const std::string& path);

}  // namespace roost

#endif  // ROOST_STORAGE_TABLE_FILE_H_
