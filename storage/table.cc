#include "storage/table.h"

#include "storage/block_format.h"
#include "storage/block_table.h"
#include "storage/cuckoo_format.h"
#include "storage/cuckoo_table.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {

std::string_view TableFormatName(TableFormat format) {
  return format == TableFormat::kCuckoo ? "cuckoo" : "block";
}

absl::StatusOr<TableFormat> ParseTableFormat(std::string_view name) {
  if (name == "cuckoo") return TableFormat::kCuckoo;
  if (name == "block") return TableFormat::kBlock;
  return absl::InvalidArgumentError(
      StrCat("unknown format \"", name, "\" (expected cuckoo or block)"));
}

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

namespace {

class UnorderedIterator final : public TableIterator {
 public:
  explicit UnorderedIterator(TableFormat format)
      : status_(absl::UnimplementedError(
            StrCat(TableFormatName(format),
                   " tables keep no key order: there is nothing to scan"))) {}
  void SeekToFirst() override {}
  void Seek(std::string_view) override {}
  void Next() override {}
  bool Valid() const override { return false; }
  absl::Status status() const override { return status_; }
  std::string_view key() const override { return {}; }
  std::string_view value() const override { return {}; }

 private:
  const absl::Status status_;
};

}  // namespace

std::unique_ptr<TableIterator> Table::NewIterator() const {
  return std::make_unique<UnorderedIterator>(format());
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

absl::StatusOr<bool> Table::Get(std::string_view key,
                                std::string* value) const {
  LookupResult result;
  ValuePins pins;
  ROOST_RETURN_IF_ERROR(
      MultiGet(std::span(&key, 1), std::span(&result, 1), &pins));
  if (result.found) value->assign(result.value);
  return result.found;
}

}  // namespace roost
