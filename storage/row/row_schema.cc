#include "storage/row/row_schema.h"

#include <cstdint>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "util/str_cat.h"

namespace roost {
namespace {

struct TypeInfo {
  FieldType type;
  std::string_view name;
  size_t slot;  // bytes; a variable type's slot is its u32 end offset
  bool variable;
};

constexpr TypeInfo kTypes[] = {
    {FieldType::kBool, "bool", 1, false},
    {FieldType::kInt32, "int32", 4, false},
    {FieldType::kInt64, "int64", 8, false},
    {FieldType::kFloat32, "float32", 4, false},
    {FieldType::kFloat64, "float64", 8, false},
    {FieldType::kString, "string", 4, true},
    {FieldType::kBytes, "bytes", 4, true},
    {FieldType::kFloat32List, "float32_list", 4, true},
    {FieldType::kInt64List, "int64_list", 4, true},
    {FieldType::kStringList, "string_list", 4, true},
};

const TypeInfo& Info(FieldType type) {
  return kTypes[static_cast<size_t>(type) - 1];
}

// Whether `value` is a JSON value a field of `type` can hold: its default.
bool OfType(const Json& value, FieldType type) {
  auto all = [&](auto is) {
    if (!value.is_array()) return false;
    for (const Json& e : value) {
      if (!is(e)) return false;
    }
    return true;
  };
  auto integer = [](const Json& v) {
    return v.is_number_integer() &&
           (v.is_number_unsigned()
                ? v.get<uint64_t>() <=
                      uint64_t{std::numeric_limits<int64_t>::max()}
                : true);
  };
  switch (type) {
    case FieldType::kBool:
      return value.is_boolean();
    case FieldType::kInt32:
      if (!integer(value)) return false;
      return value.get<int64_t>() >= std::numeric_limits<int32_t>::min() &&
             value.get<int64_t>() <= std::numeric_limits<int32_t>::max();
    case FieldType::kInt64:
      return integer(value);
    case FieldType::kFloat32:
    case FieldType::kFloat64:
      return value.is_number();
    case FieldType::kString:
    case FieldType::kBytes:  // base64, as the JSON of a row writes bytes
      return value.is_string();
    case FieldType::kFloat32List:
      return all([](const Json& e) { return e.is_number(); });
    case FieldType::kInt64List:
      return all(integer);
    case FieldType::kStringList:
      return all([](const Json& e) { return e.is_string(); });
  }
  return false;
}

}  // namespace

std::string_view FieldTypeName(FieldType type) { return Info(type).name; }

std::optional<FieldType> FieldTypeFromName(std::string_view name) {
  for (const TypeInfo& t : kTypes) {
    if (t.name == name) return t.type;
  }
  return std::nullopt;
}

bool IsVariable(FieldType type) { return Info(type).variable; }
size_t SlotSize(FieldType type) { return Info(type).slot; }

absl::StatusOr<RowSchema> RowSchema::Make(std::vector<Field> fields) {
  if (fields.empty()) {
    return absl::InvalidArgumentError("a schema without fields");
  }
  if (fields.size() > kMaxFields) {
    return absl::InvalidArgumentError(StrCat(
        "a schema of ", fields.size(), " fields (at most ", kMaxFields, ")"));
  }
  RowSchema schema;
  for (size_t i = 0; i < fields.size(); ++i) {
    const Field& f = fields[i];
    if (f.name.empty() || f.name.size() > kMaxFieldNameSize) {
      return absl::InvalidArgumentError(StrCat("field ", i, ": a name of ",
                                               f.name.size(), " bytes (1 to ",
                                               kMaxFieldNameSize, ")"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (fields[j].name == f.name) {
        return absl::InvalidArgumentError(
            StrCat("field \"", f.name, "\" appears twice"));
      }
    }
    if (static_cast<size_t>(f.type) < 1 ||
        static_cast<size_t>(f.type) > std::size(kTypes)) {
      return absl::InvalidArgumentError(
          StrCat("field \"", f.name, "\": no such type"));
    }
    if (!f.default_value.is_null() && !OfType(f.default_value, f.type)) {
      return absl::InvalidArgumentError(
          StrCat("field \"", f.name, "\": its default ", f.default_value.dump(),
                 " is not a ", FieldTypeName(f.type)));
    }
  }
  schema.fields_ = std::move(fields);
  schema.Lay();
  return schema;
}

void RowSchema::Lay() {
  bool nullable = false;
  for (const Field& f : fields_) nullable |= f.nullable;
  bitmap_size_ = nullable ? (fields_.size() + 7) / 8 : 0;
  size_t offset = bitmap_size_;
  last_variable_ = -1;
  layout_.clear();
  for (size_t i = 0; i < fields_.size(); ++i) {
    layout_.push_back({static_cast<uint32_t>(offset), -1});
    if (IsVariable(fields_[i].type)) {
      layout_.back().previous_variable = last_variable_;
      last_variable_ = static_cast<int32_t>(i);
    }
    offset += SlotSize(fields_[i].type);
  }
  header_size_ = offset;
}

absl::StatusOr<RowSchema> RowSchema::FromJson(const Json& json) {
  if (!json.is_object()) {
    return absl::InvalidArgumentError("a schema is a JSON object");
  }
  const std::optional<std::string> encoding = JsonString(json, "encoding");
  if (!encoding) {
    return absl::InvalidArgumentError("missing or malformed \"encoding\"");
  }
  if (*encoding != kRowEncoding) {
    return absl::InvalidArgumentError(StrCat("rows encoded as \"", *encoding,
                                             "\", which this build does not "
                                             "read (it reads ",
                                             kRowEncoding, ")"));
  }
  auto list = json.find("fields");
  if (list == json.end() || !list->is_array()) {
    return absl::InvalidArgumentError("missing or malformed \"fields\"");
  }
  std::vector<Field> fields;
  for (size_t i = 0; i < list->size(); ++i) {
    const Json& f = (*list)[i];
    const std::optional<std::string> name = JsonString(f, "name");
    const std::optional<std::string> type = JsonString(f, "type");
    if (!name || !type) {
      return absl::InvalidArgumentError(
          StrCat("field ", i, ": missing or malformed \"name\" or \"type\""));
    }
    const std::optional<FieldType> t = FieldTypeFromName(*type);
    if (!t) {
      return absl::InvalidArgumentError(
          StrCat("field \"", *name, "\": unknown type \"", *type, "\""));
    }
    auto nullable = f.find("nullable");
    if (nullable == f.end() || !nullable->is_boolean()) {
      return absl::InvalidArgumentError(
          StrCat("field \"", *name, "\": missing or malformed \"nullable\""));
    }
    Field field{*name, *t, nullable->get<bool>()};
    if (auto d = f.find("default"); d != f.end()) field.default_value = *d;
    fields.push_back(std::move(field));
  }
  return Make(std::move(fields));
}

OrderedJson RowSchema::ToJson() const {
  OrderedJson json;
  json["encoding"] = kRowEncoding;
  OrderedJson list = OrderedJson::array();
  for (const Field& f : fields_) {
    OrderedJson field;
    field["name"] = f.name;
    field["type"] = FieldTypeName(f.type);
    field["nullable"] = f.nullable;
    if (!f.default_value.is_null()) {
      field["default"] = OrderedJson::parse(f.default_value.dump());
    }
    list.push_back(std::move(field));
  }
  json["fields"] = std::move(list);
  return json;
}

std::optional<size_t> RowSchema::Find(std::string_view name) const {
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].name == name) return i;
  }
  return std::nullopt;
}

absl::StatusOr<RowSchema> RowSchema::Project(
    std::span<const std::string> names, std::vector<uint32_t>* indexes) const {
  indexes->clear();
  std::vector<Field> fields;
  for (const std::string& name : names) {
    const std::optional<size_t> i = Find(name);
    if (!i) {
      return absl::InvalidArgumentError(
          StrCat("no field \"", name, "\" in the table's rows"));
    }
    for (uint32_t j : *indexes) {
      if (j == *i) {
        return absl::InvalidArgumentError(
            StrCat("field \"", name, "\" is asked for twice"));
      }
    }
    indexes->push_back(static_cast<uint32_t>(*i));
    fields.push_back(fields_[*i]);
  }
  return Make(std::move(fields));
}

bool RowSchema::operator==(const RowSchema& other) const {
  if (fields_.size() != other.fields_.size()) return false;
  for (size_t i = 0; i < fields_.size(); ++i) {
    const Field& a = fields_[i];
    const Field& b = other.fields_[i];
    if (a.name != b.name || a.type != b.type || a.nullable != b.nullable ||
        a.default_value != b.default_value) {
      return false;
    }
  }
  return true;
}

absl::Status CheckSchemaEvolution(const RowSchema& previous,
                                  const RowSchema& next) {
  std::string problems;
  auto add = [&](std::string problem) {
    if (!problems.empty()) problems += "\n";
    problems += problem;
  };
  for (const Field& old : previous.fields()) {
    const std::optional<size_t> i = next.Find(old.name);
    if (!i) {
      add(StrCat("field \"", old.name,
                 "\" is gone (dropped or renamed): readers of it would "
                 "break"));
      continue;
    }
    const Field& now = next.field(*i);
    if (now.type != old.type) {
      add(StrCat("field \"", old.name, "\" changes type from ",
                 FieldTypeName(old.type), " to ", FieldTypeName(now.type)));
    } else if (now.nullable != old.nullable) {
      add(StrCat("field \"", old.name, "\" changes from ",
                 old.nullable ? "nullable" : "not nullable", " to ",
                 now.nullable ? "nullable" : "not nullable"));
    }
  }
  for (const Field& f : next.fields()) {
    if (previous.Find(f.name)) continue;
    if (!f.nullable && f.default_value.is_null()) {
      add(StrCat("field \"", f.name,
                 "\" is new, not nullable and has no default: readers of "
                 "the previous version's rows know no value for it"));
    }
  }
  if (problems.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(problems);
}

}  // namespace roost
