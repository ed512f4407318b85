#include "loader/column_rows.h"

#include <cstring>
#include <limits>

#include "loader/column_json.h"
#include "util/escape.h"
#include "util/str_cat.h"

namespace roost {
namespace {

bool IsStringColumn(ColumnTypeId id) {
  return id == ColumnTypeId::kString || id == ColumnTypeId::kLargeString;
}

bool IsListColumn(ColumnTypeId id) {
  return id == ColumnTypeId::kList || id == ColumnTypeId::kLargeList ||
         id == ColumnTypeId::kFixedSizeList;
}

absl::Status NotUtf8(std::string_view s, size_t valid) {
  return absl::InvalidArgumentError(StrCat(
      "invalid UTF-8 at byte ", valid, " of a string of ", s.size(), " bytes"));
}

// Integer value `i` of an integer array, as int64; false for a uint64 past
// INT64_MAX.
bool IntegerAt(const ArrayView& a, uint64_t i, int64_t* v) {
  switch (a.type->id) {
    case ColumnTypeId::kInt8:
      *v = a.Fixed<int8_t>(i);
      return true;
    case ColumnTypeId::kInt16:
      *v = a.Fixed<int16_t>(i);
      return true;
    case ColumnTypeId::kInt32:
      *v = a.Fixed<int32_t>(i);
      return true;
    case ColumnTypeId::kUInt8:
      *v = a.Fixed<uint8_t>(i);
      return true;
    case ColumnTypeId::kUInt16:
      *v = a.Fixed<uint16_t>(i);
      return true;
    case ColumnTypeId::kUInt32:
      *v = a.Fixed<uint32_t>(i);
      return true;
    case ColumnTypeId::kUInt64: {
      const uint64_t u = a.Fixed<uint64_t>(i);
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return false;
      }
      *v = static_cast<int64_t>(u);
      return true;
    }
    default:  // int64, timestamp
      *v = a.Fixed<int64_t>(i);
      return true;
  }
}

absl::Status TooBigForInt64(const ArrayView& a, uint64_t i) {
  return absl::InvalidArgumentError(
      StrCat("uint64 value ", a.Fixed<uint64_t>(i),
             " is past int64's largest, 9223372036854775807 (a row's "
             "integers are int64)"));
}

}  // namespace

std::optional<FieldType> RowTypeOfColumn(const ColumnType& t) {
  switch (t.id) {
    case ColumnTypeId::kBool:
      return FieldType::kBool;
    case ColumnTypeId::kInt8:
    case ColumnTypeId::kInt16:
    case ColumnTypeId::kInt32:
    case ColumnTypeId::kUInt8:
    case ColumnTypeId::kUInt16:
      return FieldType::kInt32;
    case ColumnTypeId::kInt64:
    case ColumnTypeId::kUInt32:
    case ColumnTypeId::kUInt64:
    case ColumnTypeId::kTimestamp:
      return FieldType::kInt64;
    case ColumnTypeId::kFloat32:
      return FieldType::kFloat32;
    case ColumnTypeId::kFloat64:
      return FieldType::kFloat64;
    case ColumnTypeId::kString:
    case ColumnTypeId::kLargeString:
      return FieldType::kString;
    case ColumnTypeId::kBinary:
    case ColumnTypeId::kLargeBinary:
    case ColumnTypeId::kFixedSizeBinary:
      return FieldType::kBytes;
    case ColumnTypeId::kList:
    case ColumnTypeId::kLargeList:
    case ColumnTypeId::kFixedSizeList: {
      const ColumnTypeId e = t.children[0].id;
      if (e == ColumnTypeId::kFloat32) return FieldType::kFloat32List;
      if (IsInteger(e)) return FieldType::kInt64List;
      if (IsStringColumn(e)) return FieldType::kStringList;
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

absl::StatusOr<RowSchema> RowSchemaOfColumns(
    const std::vector<std::string>& names,
    const std::vector<ColumnType>& types) {
  std::vector<Field> fields;
  for (size_t c = 0; c < names.size(); ++c) {
    const std::optional<FieldType> type = RowTypeOfColumn(types[c]);
    if (!type) {
      return absl::InvalidArgumentError(StrCat(
          "column ", PrintableKey(names[c]), " is ", ColumnTypeName(types[c]),
          ", which has no row type (--rows takes bool, integers, floats, "
          "strings, binary, timestamps, and lists of float32, integers or "
          "strings: docs/operations/loading.md); cast it, or leave it out "
          "of the value columns"));
    }
    Field f;
    f.name = names[c];
    f.type = *type;
    f.nullable = true;
    fields.push_back(std::move(f));
  }
  absl::StatusOr<RowSchema> schema = RowSchema::Make(std::move(fields));
  if (!schema.ok()) {
    return absl::InvalidArgumentError(
        StrCat("the value columns as a row: ", schema.status().message()));
  }
  return schema;
}

absl::Status SetRowField(const ArrayView& a, uint64_t i, size_t field,
                         RowBuilder* b, std::string* scratch) {
  if (!a.IsValid(i)) {
    b->SetNull(field);
    return absl::OkStatus();
  }
  const ColumnTypeId id = a.type->id;
  switch (id) {
    case ColumnTypeId::kBool:
      b->SetBool(field, a.Bool(i));
      return absl::OkStatus();
    case ColumnTypeId::kFloat32:
      b->SetFloat(field, a.Fixed<float>(i));
      return absl::OkStatus();
    case ColumnTypeId::kFloat64:
      b->SetFloat(field, a.Fixed<double>(i));
      return absl::OkStatus();
    case ColumnTypeId::kString:
    case ColumnTypeId::kLargeString: {
      const std::string_view s = a.Bytes(i);
      if (const size_t valid = ValidUtf8Prefix(s); valid != s.size()) {
        return NotUtf8(s, valid);
      }
      b->SetVariable(field, s);
      return absl::OkStatus();
    }
    case ColumnTypeId::kBinary:
    case ColumnTypeId::kLargeBinary:
    case ColumnTypeId::kFixedSizeBinary:
      b->SetVariable(field, a.Bytes(i));
      return absl::OkStatus();
    default:
      break;
  }
  if (!IsListColumn(id)) {
    int64_t v;
    if (!IntegerAt(a, i, &v)) return TooBigForInt64(a, i);
    b->SetInt(field, v);
    return absl::OkStatus();
  }
  uint64_t begin, end;
  a.Range(i, &begin, &end);
  const ArrayView& e = a.children[0];
  for (uint64_t k = begin; k < end && e.null_count != 0; ++k) {
    if (!e.IsValid(k)) {
      return absl::InvalidArgumentError(
          StrCat("element ", k - begin,
                 " of the list is null: a row's lists hold no nulls (a null "
                 "list is a null field)"));
    }
  }
  const ColumnTypeId eid = e.type->id;
  if (eid == ColumnTypeId::kFloat32) {
    b->SetVariable(field,
                   e.values.substr((e.offset + begin) * 4, (end - begin) * 4));
    return absl::OkStatus();
  }
  if (IsStringColumn(eid)) {
    b->StartStringList(field);
    for (uint64_t k = begin; k < end; ++k) {
      const std::string_view s = e.Bytes(k);
      if (const size_t valid = ValidUtf8Prefix(s); valid != s.size()) {
        return absl::InvalidArgumentError(
            StrCat("element ", k - begin, ": ", NotUtf8(s, valid).message()));
      }
      b->AddString(field, s);
    }
    return absl::OkStatus();
  }
  scratch->clear();
  if (eid == ColumnTypeId::kInt64) {
    scratch->assign(e.values.substr((e.offset + begin) * 8, (end - begin) * 8));
  } else {
    for (uint64_t k = begin; k < end; ++k) {
      int64_t v;
      if (!IntegerAt(e, k, &v)) {
        return absl::InvalidArgumentError(StrCat(
            "element ", k - begin, ": ", TooBigForInt64(e, k).message()));
      }
      char bytes[8];
      std::memcpy(bytes, &v, 8);
      scratch->append(bytes, 8);
    }
  }
  b->SetVariable(field, *scratch);
  return absl::OkStatus();
}

}  // namespace roost
