// The schema of a table of rows: its fields, in order, each with a name, a
// type and whether it may be null (docs/format/rows.md). A version built
// with `roost-load build --rows` records it in its MANIFEST ("schema"), and
// every value of the version is a row of it (storage/row/row_codec.h).
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(RowSchema schema, RowSchema::Make({
//       {"ltv", FieldType::kFloat64, /*nullable=*/true},
//       {"segments", FieldType::kStringList, false}}));
//   schema.header_size();  // 1 (null bitmap) + 8 + 4
//   std::string json = DumpJson(schema.ToJson(), false);
//   ROOST_ASSIGN_OR_RETURN(RowSchema same, RowSchema::FromJson(*parsed));
#ifndef ROOST_STORAGE_ROW_ROW_SCHEMA_H_
#define ROOST_STORAGE_ROW_ROW_SCHEMA_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "util/json.h"

namespace roost {

// The encoding's name, in the schema's JSON ("encoding").
inline constexpr std::string_view kRowEncoding = "roost-row-1";

// The types of fields. The numbers are not on disk (the MANIFEST names
// types), but they are stable.
enum class FieldType : uint8_t {
  kBool = 1,
  kInt32 = 2,
  kInt64 = 3,
  kFloat32 = 4,
  kFloat64 = 5,
  kString = 6,
  kBytes = 7,
  kFloat32List = 8,
  kInt64List = 9,
  kStringList = 10,
};

// "bool", "int32", ..., "string_list": the names of docs/format/rows.md.
std::string_view FieldTypeName(FieldType type);
std::optional<FieldType> FieldTypeFromName(std::string_view name);

// Whether a field's bytes live in the row's variable area (its slot then
// holds their end offset), and the size of its slot.
bool IsVariable(FieldType type);
size_t SlotSize(FieldType type);

struct Field {
  std::string name;
  FieldType type = FieldType::kBytes;
  bool nullable = false;
  // The field's default (a JSON value of its type), used where the input
  // has no value for it; null when it has none.
  Json default_value = nullptr;
};

// The most fields a schema may have, and the longest name (bytes).
inline constexpr size_t kMaxFields = 4096;
inline constexpr size_t kMaxFieldNameSize = 256;

class RowSchema {
 public:
  RowSchema() = default;

  // InvalidArgument when a name is empty, too long or repeated, there are
  // no fields or too many, or a default is not of its field's type.
  static absl::StatusOr<RowSchema> Make(std::vector<Field> fields);
  // The schema's JSON as docs/format/rows.md gives it; InvalidArgument
  // naming what is wrong.
  static absl::StatusOr<RowSchema> FromJson(const Json& json);
  OrderedJson ToJson() const;

  size_t size() const { return fields_.size(); }
  const Field& field(size_t i) const { return fields_[i]; }
  const std::vector<Field>& fields() const { return fields_; }
  // The index of the field named `name`, if there is one.
  std::optional<size_t> Find(std::string_view name) const;

  // Layout: the null bitmap's size (0 when no field is nullable), each
  // field's slot offset from the row's start, the bytes before the
  // variable area, and for a variable field the index of the variable
  // field before it (its bytes start where that one's end), or -1.
  size_t bitmap_size() const { return bitmap_size_; }
  size_t slot_offset(size_t i) const { return layout_[i].slot; }
  int32_t previous_variable(size_t i) const {
    return layout_[i].previous_variable;
  }
  size_t header_size() const { return header_size_; }
  // The last variable field, whose end is the variable area's size; -1
  // when the schema has none (then every row is header_size() bytes).
  int32_t last_variable() const { return last_variable_; }

  // The schema of the fields named, in that order (a projection), and
  // their indexes in this schema. InvalidArgument naming the first name
  // that is not a field, or one named twice.
  absl::StatusOr<RowSchema> Project(std::span<const std::string> names,
                                    std::vector<uint32_t>* indexes) const;

  bool operator==(const RowSchema& other) const;

 private:
  struct Slot {
    uint32_t slot = 0;
    int32_t previous_variable = -1;
  };
  void Lay();

  std::vector<Field> fields_;
  std::vector<Slot> layout_;
  size_t bitmap_size_ = 0;
  size_t header_size_ = 0;
  int32_t last_variable_ = -1;
};

// Whether `next` may follow `previous` as the schema of a table's next
// version: every field of `previous` is in `next` under its name with the
// same type and nullability, and every field `next` adds is nullable or has
// a default. OK, or FailedPrecondition naming each field that breaks it
// (dropped or renamed, retyped, newly required), one per line.
absl::Status CheckSchemaEvolution(const RowSchema& previous,
                                  const RowSchema& next);

}  // namespace roost

#endif  // ROOST_STORAGE_ROW_ROW_SCHEMA_H_
