#include "storage/table.h"

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

absl::Status Table::ForEachPair(const PairVisitor& visit) const {
  std::unique_ptr<TableIterator> it = NewIterator();
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ROOST_RETURN_IF_ERROR(visit(it->key(), it->value()));
  }
  return it->status();
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
