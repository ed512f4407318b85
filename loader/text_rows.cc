#include "loader/text_rows.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "util/encoding.h"
#include "util/escape.h"
#include "util/str_cat.h"

namespace roost {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// Whether the integer `n` fits a field of `type` (int32 or int64).
bool Fits(int64_t n, FieldType type) {
  return type != FieldType::kInt32 ||
         (n >= std::numeric_limits<int32_t>::min() &&
          n <= std::numeric_limits<int32_t>::max());
}

std::string_view JsonTypeName(element_type type) {
  switch (type) {
    case element_type::ARRAY:
      return "an array";
    case element_type::OBJECT:
      return "an object";
    case element_type::INT64:
    case element_type::UINT64:
      return "an integer";
    case element_type::DOUBLE:
      return "a number with a fraction or exponent";
    case element_type::STRING:
      return "a string";
    case element_type::BOOL:
      return "a boolean";
    case element_type::NULL_VALUE:
      return "null";
  }
  return "a JSON value";
}

// "an int64", "a float32_list".
std::string TypeWithArticle(FieldType type) {
  const std::string_view name = FieldTypeName(type);
  const bool vowel = name[0] == 'i';
  return StrCat(vowel ? "an " : "a ", name);
}

absl::Status NotOf(std::string_view what, FieldType type) {
  return absl::InvalidArgumentError(
      StrCat(what, " is not ", TypeWithArticle(type)));
}

absl::Status JsonNotOf(element v, FieldType type) {
  return NotOf(JsonTypeName(v.type()), type);
}

// The JSON number `v` as an int64, if it is an integer in its range.
bool JsonInt(element v, int64_t* out) {
  if (v.type() == element_type::INT64) {
    *out = v.get_int64().value_unsafe();
    return true;
  }
  if (v.type() == element_type::UINT64) {
    const uint64_t u = v.get_uint64().value_unsafe();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return false;
    }
    *out = static_cast<int64_t>(u);
    return true;
  }
  return false;
}

bool JsonNumber(element v, double* out) {
  switch (v.type()) {
    case element_type::INT64:
      *out = static_cast<double>(v.get_int64().value_unsafe());
      return true;
    case element_type::UINT64:
      *out = static_cast<double>(v.get_uint64().value_unsafe());
      return true;
    case element_type::DOUBLE:
      *out = v.get_double().value_unsafe();
      return true;
    default:
      return false;
  }
}

bool FitsFloat32(double d) {
  return !std::isfinite(d) ||
         std::fabs(d) <= static_cast<double>(std::numeric_limits<float>::max());
}

absl::Status OutOfRange(std::string_view text, FieldType type) {
  return absl::InvalidArgumentError(
      StrCat(text, " is out of ", FieldTypeName(type), "'s range"));
}

std::string ShortText(std::string_view s) { return PrintableKey(s, 40); }

template <typename T>
bool ParseWhole(std::string_view s, T* v) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, *v);
  return ec == std::errc() && p == end;
}

bool IsUtf8(std::string_view s) {
  return simdjson::validate_utf8(s.data(), s.size());
}

}  // namespace

absl::Status TextRowParser::SetFromJson(const Field& f, size_t i, element v,
                                        RowBuilder* b) {
  if (v.type() == element_type::NULL_VALUE) {
    if (f.nullable) {
      b->SetNull(i);
    } else if (f.default_value.is_null()) {
      return absl::InvalidArgumentError(
          StrCat("null, but field \"", f.name, "\" is ", FieldTypeName(f.type),
                 ", not nullable, with no default"));
    }
    return absl::OkStatus();  // unset: its default
  }
  switch (f.type) {
    case FieldType::kBool:
      if (v.type() != element_type::BOOL) return JsonNotOf(v, f.type);
      b->SetBool(i, v.get_bool().value_unsafe());
      return absl::OkStatus();
    case FieldType::kInt32:
    case FieldType::kInt64: {
      int64_t n;
      if (!JsonInt(v, &n)) {
        if (v.type() == element_type::UINT64) {
          return OutOfRange(StrCat(v.get_uint64().value_unsafe()), f.type);
        }
        return JsonNotOf(v, f.type);
      }
      if (!Fits(n, f.type)) return OutOfRange(StrCat(n), f.type);
      b->SetInt(i, n);
      return absl::OkStatus();
    }
    case FieldType::kFloat32:
    case FieldType::kFloat64: {
      double d;
      if (!JsonNumber(v, &d)) return JsonNotOf(v, f.type);
      if (f.type == FieldType::kFloat32 && !FitsFloat32(d)) {
        return OutOfRange(StrCat(d), f.type);
      }
      b->SetFloat(i, d);
      return absl::OkStatus();
    }
    case FieldType::kString:
      if (v.type() != element_type::STRING) return JsonNotOf(v, f.type);
      b->SetVariable(i, v.get_string().value_unsafe());
      return absl::OkStatus();
    case FieldType::kBytes: {
      if (v.type() != element_type::STRING) {
        return NotOf(StrCat(JsonTypeName(v.type()), " (bytes are base64)"),
                     f.type);
      }
      absl::StatusOr<std::string_view> bytes = DecodeBase64Into(
          v.get_string().value_unsafe(), "the base64 of bytes", &scratch_);
      if (!bytes.ok()) return bytes.status();
      b->SetVariable(i, *bytes);
      return absl::OkStatus();
    }
    case FieldType::kFloat32List:
    case FieldType::kInt64List:
    case FieldType::kStringList:
      break;
  }
  if (v.type() != element_type::ARRAY) return JsonNotOf(v, f.type);
  if (f.type == FieldType::kStringList) b->StartStringList(i);
  scratch_.clear();
  size_t k = 0;
  const simdjson::dom::array array = v.get_array().value_unsafe();
  for (element e : array) {
    const auto where = [&](absl::Status s) {
      return absl::InvalidArgumentError(
          StrCat("element ", k, ": ", s.message()));
    };
    if (f.type == FieldType::kStringList) {
      if (e.type() != element_type::STRING) {
        return where(NotOf(JsonTypeName(e.type()), FieldType::kString));
      }
      b->AddString(i, e.get_string().value_unsafe());
    } else if (f.type == FieldType::kInt64List) {
      int64_t n;
      if (!JsonInt(e, &n)) {
        return where(e.type() == element_type::UINT64
                         ? OutOfRange(StrCat(e.get_uint64().value_unsafe()),
                                      FieldType::kInt64)
                         : NotOf(JsonTypeName(e.type()), FieldType::kInt64));
      }
      char bytes[8];
      std::memcpy(bytes, &n, 8);
      scratch_.append(bytes, 8);
    } else {
      double d;
      if (!JsonNumber(e, &d)) {
        return where(NotOf(JsonTypeName(e.type()), FieldType::kFloat32));
      }
      if (!FitsFloat32(d)) return where(OutOfRange(StrCat(d), f.type));
      const float x = static_cast<float>(d);
      char bytes[4];
      std::memcpy(bytes, &x, 4);
      scratch_.append(bytes, 4);
    }
    ++k;
  }
  if (f.type != FieldType::kStringList) b->SetVariable(i, scratch_);
  return absl::OkStatus();
}

absl::Status TextRowParser::SetFromCell(const Field& f, size_t i,
                                        std::string_view cell, RowBuilder* b) {
  if (cell.empty()) {
    if (f.nullable) {
      b->SetNull(i);
      return absl::OkStatus();
    }
    if (!f.default_value.is_null()) return absl::OkStatus();  // its default
    if (f.type == FieldType::kString || f.type == FieldType::kBytes) {
      b->SetVariable(i, "");
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(
        StrCat("empty, but field \"", f.name, "\" is ", FieldTypeName(f.type),
               ", not nullable, with no default"));
  }
  switch (f.type) {
    case FieldType::kBool:
      if (cell == "true" || cell == "True" || cell == "TRUE" || cell == "1") {
        b->SetBool(i, true);
      } else if (cell == "false" || cell == "False" || cell == "FALSE" ||
                 cell == "0") {
        b->SetBool(i, false);
      } else {
        return NotOf(ShortText(cell), f.type);
      }
      return absl::OkStatus();
    case FieldType::kInt32:
    case FieldType::kInt64: {
      int64_t n;
      if (!ParseWhole(cell, &n)) {
        uint64_t u;
        if (ParseWhole(cell, &u)) return OutOfRange(ShortText(cell), f.type);
        return NotOf(ShortText(cell), f.type);
      }
      if (!Fits(n, f.type)) return OutOfRange(ShortText(cell), f.type);
      b->SetInt(i, n);
      return absl::OkStatus();
    }
    case FieldType::kFloat32:
    case FieldType::kFloat64: {
      double d;
      // from_chars takes no '+'; a leading one is a number still.
      const std::string_view digits = cell[0] == '+' ? cell.substr(1) : cell;
      if (digits.empty() || (cell[0] == '+' && digits[0] == '-') ||
          !ParseWhole(digits, &d)) {
        return NotOf(ShortText(cell), f.type);
      }
      if (f.type == FieldType::kFloat32 && !FitsFloat32(d)) {
        return OutOfRange(ShortText(cell), f.type);
      }
      b->SetFloat(i, d);
      return absl::OkStatus();
    }
    case FieldType::kString:
      if (!IsUtf8(cell)) return NotOf("a cell that is not UTF-8", f.type);
      b->SetVariable(i, cell);
      return absl::OkStatus();
    case FieldType::kBytes: {
      absl::StatusOr<std::string_view> bytes =
          DecodeBase64Into(cell, "the base64 of bytes", &scratch_);
      if (!bytes.ok()) {
        return NotOf(StrCat(ShortText(cell), " (bytes are base64)"), f.type);
      }
      b->SetVariable(i, *bytes);
      return absl::OkStatus();
    }
    case FieldType::kFloat32List:
    case FieldType::kInt64List:
    case FieldType::kStringList:
      break;
  }
  element v;
  if (parser_.parse(cell.data(), cell.size()).get(v) != simdjson::SUCCESS ||
      v.type() != element_type::ARRAY) {
    return NotOf(StrCat(ShortText(cell), " (a list is a JSON array)"), f.type);
  }
  return SetFromJson(f, i, v, b);
}

}  // namespace roost
