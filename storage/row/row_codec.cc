#include "storage/row/row_codec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "util/encoding.h"
#include "util/str_cat.h"

namespace roost {
namespace {

uint32_t LoadU32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

void StoreU32(uint32_t v, char* p) { std::memcpy(p, &v, 4); }

bool IsUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    size_t n;
    uint32_t cp;
    if ((c & 0xe0) == 0xc0) {
      n = 1;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      n = 2;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (static_cast<size_t>(end - p) <= n) return false;
    for (size_t k = 1; k <= n; ++k) {
      if ((p[k] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (p[k] & 0x3f);
    }
    constexpr uint32_t kLeast[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kLeast[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    p += n + 1;
  }
  return true;
}

bool NullBit(const RowSchema& schema, std::string_view row, size_t i) {
  return schema.bitmap_size() != 0 &&
         (static_cast<uint8_t>(row[i / 8]) >> (i % 8) & 1) != 0;
}

// The variable area's start and the field's end offset within it.
uint32_t EndOf(const RowSchema& schema, std::string_view row, size_t i) {
  return LoadU32(row.data() + schema.slot_offset(i));
}

uint32_t StartOf(const RowSchema& schema, std::string_view row, size_t i) {
  const int32_t previous = schema.previous_variable(i);
  return previous < 0 ? 0 : EndOf(schema, row, previous);
}

// A string_list's encoding: count, ends, bytes. False when malformed.
bool SplitStrings(std::string_view list, std::vector<std::string_view>* out) {
  out->clear();
  if (list.empty()) return true;  // a null or an unset list: no strings
  if (list.size() < 4) return false;
  const uint32_t count = LoadU32(list.data());
  if (count > (list.size() - 4) / 4) return false;
  const size_t base = 4 + size_t{count} * 4;
  uint32_t begin = 0;
  for (uint32_t k = 0; k < count; ++k) {
    const uint32_t end = LoadU32(list.data() + 4 + size_t{k} * 4);
    if (end < begin || end > list.size() - base) return false;
    out->push_back(list.substr(base + begin, end - begin));
    begin = end;
  }
  return base + begin == list.size();
}

absl::Status Bad(const Field& f, std::string_view problem) {
  return absl::DataLossError(StrCat("field \"", f.name, "\": ", problem));
}

}  // namespace

RowBuilder::RowBuilder(const RowSchema* schema)
    : schema_(schema),
      state_(schema->size(), State::kUnset),
      fixed_(schema->header_size(), '\0'),
      variable_(schema->size()),
      list_counts_(schema->size()),
      list_ends_(schema->size()) {}

void RowBuilder::Clear() {
  std::fill(state_.begin(), state_.end(), State::kUnset);
}

void RowBuilder::SetNull(size_t i) { state_[i] = State::kNull; }

void RowBuilder::SetBool(size_t i, bool value) {
  fixed_[schema_->slot_offset(i)] = value ? 1 : 0;
  state_[i] = State::kSet;
}

void RowBuilder::SetInt(size_t i, int64_t value) {
  char* slot = fixed_.data() + schema_->slot_offset(i);
  if (schema_->field(i).type == FieldType::kInt32) {
    const int32_t v = static_cast<int32_t>(value);
    std::memcpy(slot, &v, 4);
  } else {
    std::memcpy(slot, &value, 8);
  }
  state_[i] = State::kSet;
}

void RowBuilder::SetFloat(size_t i, double value) {
  char* slot = fixed_.data() + schema_->slot_offset(i);
  if (schema_->field(i).type == FieldType::kFloat32) {
    const float v = static_cast<float>(value);
    std::memcpy(slot, &v, 4);
  } else {
    std::memcpy(slot, &value, 8);
  }
  state_[i] = State::kSet;
}

void RowBuilder::SetVariable(size_t i, std::string_view bytes) {
  variable_[i].assign(bytes);
  state_[i] = State::kSet;
}

void RowBuilder::StartStringList(size_t i) {
  variable_[i].clear();
  list_ends_[i].clear();
  list_counts_[i] = 0;
  state_[i] = State::kSet;
}

void RowBuilder::AddString(size_t i, std::string_view s) {
  variable_[i].append(s);
  char end[4];
  StoreU32(static_cast<uint32_t>(variable_[i].size()), end);
  list_ends_[i].append(end, 4);
  ++list_counts_[i];
}

absl::Status RowBuilder::SetDefault(size_t i) {
  const Field& f = schema_->field(i);
  const Json& d = f.default_value;
  if (d.is_null()) {
    if (f.nullable) {
      state_[i] = State::kNull;
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(
        StrCat("field \"", f.name,
               "\" has no value, no default and is not "
               "nullable"));
  }
  switch (f.type) {
    case FieldType::kBool:
      SetBool(i, d.get<bool>());
      break;
    case FieldType::kInt32:
    case FieldType::kInt64:
      SetInt(i, d.get<int64_t>());
      break;
    case FieldType::kFloat32:
    case FieldType::kFloat64:
      SetFloat(i, d.get<double>());
      break;
    case FieldType::kString:
      SetVariable(i, d.get_ref<const std::string&>());
      break;
    case FieldType::kBytes: {
      absl::StatusOr<std::string> bytes =
          DecodeBase64(d.get_ref<const std::string&>(), "default");
      if (!bytes.ok()) {
        return absl::InvalidArgumentError(StrCat(
            "field \"", f.name, "\": ", std::string(bytes.status().message())));
      }
      SetVariable(i, *bytes);
      break;
    }
    case FieldType::kFloat32List: {
      std::string bytes;
      for (const Json& e : d) {
        const float v = e.get<float>();
        bytes.append(reinterpret_cast<const char*>(&v), 4);
      }
      SetVariable(i, bytes);
      break;
    }
    case FieldType::kInt64List: {
      std::string bytes;
      for (const Json& e : d) {
        const int64_t v = e.get<int64_t>();
        bytes.append(reinterpret_cast<const char*>(&v), 8);
      }
      SetVariable(i, bytes);
      break;
    }
    case FieldType::kStringList:
      StartStringList(i);
      for (const Json& e : d) AddString(i, e.get_ref<const std::string&>());
      break;
  }
  return absl::OkStatus();
}

absl::Status RowBuilder::Finish(std::string* row) {
  const RowSchema& s = *schema_;
  for (size_t i = 0; i < s.size(); ++i) {
    if (state_[i] == State::kUnset) {
      if (absl::Status st = SetDefault(i); !st.ok()) return st;
    }
    if (state_[i] == State::kNull && !s.field(i).nullable) {
      return absl::InvalidArgumentError(
          StrCat("field \"", s.field(i).name, "\" is null but not nullable"));
    }
  }
  // The variable area's size first, so that the row is sized once.
  uint64_t variable_size = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!IsVariable(s.field(i).type) || state_[i] == State::kNull) continue;
    variable_size += variable_[i].size();
    if (s.field(i).type == FieldType::kStringList) {
      variable_size += 4 + list_ends_[i].size();
    }
  }
  if (variable_size > std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError(
        StrCat("a row of ", variable_size, " bytes of variable fields"));
  }
  row->resize(s.header_size() + variable_size);
  char* out = row->data();
  std::memcpy(out, fixed_.data(), s.header_size());
  std::memset(out, 0, s.bitmap_size());
  char* area = out + s.header_size();
  uint32_t end = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const Field& f = s.field(i);
    char* slot = out + s.slot_offset(i);
    if (state_[i] == State::kNull) {
      out[i / 8] = static_cast<char>(out[i / 8] | (1 << (i % 8)));
      if (IsVariable(f.type)) {
        StoreU32(end, slot);
      } else {
        std::memset(slot, 0, SlotSize(f.type));
      }
      continue;
    }
    if (!IsVariable(f.type)) continue;
    if (f.type == FieldType::kStringList) {
      StoreU32(list_counts_[i], area + end);
      std::memcpy(area + end + 4, list_ends_[i].data(), list_ends_[i].size());
      end += 4 + static_cast<uint32_t>(list_ends_[i].size());
    }
    std::memcpy(area + end, variable_[i].data(), variable_[i].size());
    end += static_cast<uint32_t>(variable_[i].size());
    StoreU32(end, slot);
  }
  Clear();
  return absl::OkStatus();
}

absl::Status CheckRow(const RowSchema& schema, std::string_view row) {
  if (row.size() < schema.header_size()) {
    return absl::DataLossError(StrCat("a row of ", row.size(),
                                      " bytes is shorter than its schema's ",
                                      schema.header_size(), "-byte header"));
  }
  const size_t area = row.size() - schema.header_size();
  for (size_t i = schema.size(); i < schema.bitmap_size() * 8; ++i) {
    if (NullBit(schema, row, i)) {
      return absl::DataLossError(
          StrCat("null bit ", i, " is set past the last field"));
    }
  }
  uint32_t end = 0;
  std::vector<std::string_view> strings;
  for (size_t i = 0; i < schema.size(); ++i) {
    const Field& f = schema.field(i);
    const char* slot = row.data() + schema.slot_offset(i);
    const bool null = NullBit(schema, row, i);
    if (null && !f.nullable) return Bad(f, "null but not nullable");
    if (!IsVariable(f.type)) {
      if (null) {
        for (size_t k = 0; k < SlotSize(f.type); ++k) {
          if (slot[k] != 0) return Bad(f, "null, but its slot is not zero");
        }
      } else if (f.type == FieldType::kBool &&
                 static_cast<uint8_t>(*slot) > 1) {
        return Bad(f, StrCat("a bool of ", static_cast<int>(*slot)));
      }
      continue;
    }
    const uint32_t next = LoadU32(slot);
    if (next < end || next > area) {
      return Bad(f, StrCat("its bytes end at ", next, ", outside ", end, " to ",
                           area));
    }
    const std::string_view bytes =
        row.substr(schema.header_size() + end, next - end);
    end = next;
    if (null) {
      if (!bytes.empty()) return Bad(f, "null, but it has bytes");
      continue;
    }
    switch (f.type) {
      case FieldType::kString:
        if (!IsUtf8(bytes)) return Bad(f, "not UTF-8");
        break;
      case FieldType::kFloat32List:
        if (bytes.size() % 4 != 0) {
          return Bad(f, StrCat(bytes.size(), " bytes: not whole float32s"));
        }
        break;
      case FieldType::kInt64List:
        if (bytes.size() % 8 != 0) {
          return Bad(f, StrCat(bytes.size(), " bytes: not whole int64s"));
        }
        break;
      case FieldType::kStringList:
        if (!SplitStrings(bytes, &strings)) return Bad(f, "a malformed list");
        for (size_t k = 0; k < strings.size(); ++k) {
          if (!IsUtf8(strings[k])) {
            return Bad(f, StrCat("string ", k, " is not UTF-8"));
          }
        }
        break;
      default:
        break;
    }
  }
  if (end != area) {
    return absl::DataLossError(StrCat("a row of ", row.size(),
                                      " bytes, but its fields end at ",
                                      schema.header_size() + end));
  }
  return absl::OkStatus();
}

bool RowReader::IsNull(size_t i) const { return NullBit(*schema_, row_, i); }

bool RowReader::Bool(size_t i) const {
  return row_[schema_->slot_offset(i)] != 0;
}

int64_t RowReader::Int(size_t i) const {
  const char* slot = row_.data() + schema_->slot_offset(i);
  if (schema_->field(i).type == FieldType::kInt32) {
    int32_t v;
    std::memcpy(&v, slot, 4);
    return v;
  }
  int64_t v;
  std::memcpy(&v, slot, 8);
  return v;
}

double RowReader::Float(size_t i) const {
  const char* slot = row_.data() + schema_->slot_offset(i);
  if (schema_->field(i).type == FieldType::kFloat32) {
    float v;
    std::memcpy(&v, slot, 4);
    return v;
  }
  double v;
  std::memcpy(&v, slot, 8);
  return v;
}

std::string_view RowReader::Variable(size_t i) const {
  size_t begin, end;
  if (!VariableRange(*schema_, row_, i, &begin, &end)) return {};
  return row_.substr(begin, end - begin);
}

std::vector<std::string_view> RowReader::Strings(size_t i) const {
  std::vector<std::string_view> strings;
  if (!SplitStrings(Variable(i), &strings)) strings.clear();
  return strings;
}

OrderedJson RowToJson(const RowSchema& schema, std::string_view row) {
  RowReader r(&schema, row);
  OrderedJson json = OrderedJson::object();
  // A float32 as the double its shortest decimal form reads as: 0.1f is
  // 0.1, not 0.10000000149011612.
  auto float32 = [](float v) -> OrderedJson {
    if (!std::isfinite(v)) return nullptr;  // JSON has no NaN or infinity
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
    double d = 0;
    std::from_chars(buf, end, d);
    return d;
  };
  for (size_t i = 0; i < schema.size(); ++i) {
    const Field& f = schema.field(i);
    OrderedJson& v = json[f.name];
    if (r.IsNull(i)) {
      v = nullptr;
      continue;
    }
    switch (f.type) {
      case FieldType::kBool:
        v = r.Bool(i);
        break;
      case FieldType::kInt32:
      case FieldType::kInt64:
        v = r.Int(i);
        break;
      case FieldType::kFloat32:
        v = float32(static_cast<float>(r.Float(i)));
        break;
      case FieldType::kFloat64:
        v = std::isfinite(r.Float(i)) ? OrderedJson(r.Float(i))
                                      : OrderedJson(nullptr);
        break;
      case FieldType::kString:
        v = std::string(r.Variable(i));
        break;
      case FieldType::kBytes:
        v = EncodeBase64(r.Variable(i));
        break;
      case FieldType::kFloat32List: {
        v = OrderedJson::array();
        const std::string_view bytes = r.Variable(i);
        for (size_t k = 0; k + 4 <= bytes.size(); k += 4) {
          float e;
          std::memcpy(&e, bytes.data() + k, 4);
          v.push_back(float32(e));
        }
        break;
      }
      case FieldType::kInt64List: {
        v = OrderedJson::array();
        const std::string_view bytes = r.Variable(i);
        for (size_t k = 0; k + 8 <= bytes.size(); k += 8) {
          int64_t e;
          std::memcpy(&e, bytes.data() + k, 8);
          v.push_back(e);
        }
        break;
      }
      case FieldType::kStringList:
        v = OrderedJson::array();
        for (std::string_view s : r.Strings(i)) v.push_back(std::string(s));
        break;
    }
  }
  return json;
}

bool VariableRange(const RowSchema& schema, std::string_view row, size_t i,
                   size_t* begin, size_t* end) {
  if (row.size() < schema.header_size()) return false;
  const uint32_t b = StartOf(schema, row, i);
  const uint32_t e = EndOf(schema, row, i);
  if (b > e || e > row.size() - schema.header_size()) return false;
  *begin = schema.header_size() + b;
  *end = schema.header_size() + e;
  return true;
}

absl::StatusOr<size_t> RowProjection::Size(std::string_view row) const {
  if (row.size() < full_->header_size()) {
    return absl::DataLossError(StrCat("a row of ", row.size(),
                                      " bytes is shorter than its schema's ",
                                      full_->header_size(), "-byte header"));
  }
  size_t size = projected_->header_size();
  for (uint32_t i : indexes_) {
    if (!IsVariable(full_->field(i).type)) continue;
    size_t begin, end;
    if (!VariableRange(*full_, row, i, &begin, &end)) {
      return Bad(full_->field(i), "its bytes are outside the row");
    }
    size += end - begin;
  }
  return size;
}

char* RowProjection::Write(std::string_view row, char* out) const {
  const RowSchema& p = *projected_;
  std::memset(out, 0, p.bitmap_size());
  char* area = out + p.header_size();
  uint32_t end = 0;
  for (size_t j = 0; j < indexes_.size(); ++j) {
    const uint32_t i = indexes_[j];
    const FieldType type = full_->field(i).type;
    char* slot = out + p.slot_offset(j);
    if (p.bitmap_size() != 0 && NullBit(*full_, row, i)) {
      out[j / 8] = static_cast<char>(out[j / 8] | (1 << (j % 8)));
    }
    if (!IsVariable(type)) {
      std::memcpy(slot, row.data() + full_->slot_offset(i), SlotSize(type));
      continue;
    }
    size_t begin = 0, stop = 0;
    VariableRange(*full_, row, i, &begin, &stop);  // Size() checked it
    std::memcpy(area + end, row.data() + begin, stop - begin);
    end += static_cast<uint32_t>(stop - begin);
    StoreU32(end, slot);
  }
  return area + end;
}

}  // namespace roost
