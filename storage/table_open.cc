// Table::Open and DetectFormat: the one place in storage/ outside the format
// folders that knows both formats, picking the reader a file's magic number
// names (storage/cuckoo/, storage/block/).
#include <memory>
#include <string>

#include "storage/block/block_format.h"
#include "storage/block/block_table.h"
#include "storage/cuckoo/cuckoo_format.h"
#include "storage/cuckoo/cuckoo_table.h"
#include "storage/file.h"
#include "storage/table.h"
#include "util/str_cat.h"

namespace roost {

absl::StatusOr<TableFormat> DetectFormat(const std::string& path) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  const std::string_view data = (*file)->data();
  if (data.substr(0, kCuckooMagic.size()) == kCuckooMagic) {
    return TableFormat::kCuckoo;
  }
  if (data.size() >= kBlockTableFooterSize &&
      data.substr(data.size() - kBlockTableFooterSize,
                  kBlockTableMagic.size()) == kBlockTableMagic) {
    return TableFormat::kBlock;
  }
  return absl::DataLossError(
      StrCat("corrupt table ", path, ": not a roost table (no magic number)"));
}

absl::StatusOr<std::unique_ptr<Table>> Table::Open(
    const std::string& path, const TableReadOptions& options) {
  auto format = DetectFormat(path);
  if (!format.ok()) return format.status();
  if (*format == TableFormat::kCuckoo) {
    auto table = CuckooTable::Open(path, options);
    if (!table.ok()) return table.status();
    return std::unique_ptr<Table>(std::move(*table));
  }
  auto table = BlockTable::Open(path, options);
  if (!table.ok()) return table.status();
  return std::unique_ptr<Table>(std::move(*table));
}

}  // namespace roost
