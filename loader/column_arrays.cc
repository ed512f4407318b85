// Every length and offset in a stream is untrusted: each is checked against
// what holds it before it is used, with overflow-free arithmetic (sizes are
// capped at kMaxElements first, so that products of them fit in 64 bits).

#include "loader/column_arrays.h"

#include <bit>
#include <limits>
#include <utility>

#include "util/str_cat.h"

namespace roost {
namespace {

// More elements than any array may have (2^40): keeps offset + length and
// (offset + length) * width far from overflowing.
constexpr uint64_t kMaxElements = uint64_t{1} << 40;
// The widest fixed_size_binary and fixed_size_list accepted.
constexpr int32_t kMaxWidth = 1 << 24;

absl::Status Bad(std::string_view what) {
  return absl::InvalidArgumentError(std::string(what));
}

const char* UnitName(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kSecond:
      return "s";
    case TimeUnit::kMilli:
      return "ms";
    case TimeUnit::kMicro:
      return "us";
    case TimeUnit::kNano:
      break;
  }
  return "ns";
}

// Zero bits of a bitmap in [begin, end).
uint64_t CountZeros(std::string_view bitmap, uint64_t begin, uint64_t end) {
  uint64_t ones = 0;
  uint64_t i = begin;
  for (; i < end && (i & 7) != 0; ++i) {
    ones += (static_cast<uint8_t>(bitmap[i >> 3]) >> (i & 7)) & 1;
  }
  for (; i + 8 <= end; i += 8) {
    ones += std::popcount(static_cast<uint8_t>(bitmap[i >> 3]));
  }
  for (; i < end; ++i) {
    ones += (static_cast<uint8_t>(bitmap[i >> 3]) >> (i & 7)) & 1;
  }
  return (end - begin) - ones;
}

// Checks offsets [offset, offset + length] of 32- or 64-bit `values`: each
// at least 0, none smaller than the one before, the last at most `limit`.
template <typename T>
absl::Status CheckOffsets(const ArrayView& a, uint64_t limit,
                          std::string_view limit_name) {
  const uint64_t needed = (a.offset + a.length + 1) * sizeof(T);
  if (a.values.size() < needed) {
    return Bad(StrCat("offsets buffer of ", a.values.size(),
                      " bytes is shorter than the ", needed, " its ", a.length,
                      " values at offset ", a.offset, " need"));
  }
  T previous = 0;
  for (uint64_t i = 0; i <= a.length; ++i) {
    T v;
    std::memcpy(&v, a.values.data() + (a.offset + i) * sizeof(T), sizeof(T));
    if (v < 0 || (i > 0 && v < previous)) {
      return Bad(StrCat(
          "row ", i == 0 ? 0 : i - 1, ": offset ", v,
          i == 0 ? " is negative"
                 : StrCat(" is smaller than the one before it, ", previous)));
    }
    if (static_cast<uint64_t>(v) > limit) {
      return Bad(StrCat("row ", i == 0 ? 0 : i - 1, ": offset ", v,
                        " is past the end of the ", limit_name, " (", limit,
                        ")"));
    }
    previous = v;
  }
  return absl::OkStatus();
}

bool WideOffsets(ColumnTypeId id) {
  return id == ColumnTypeId::kLargeString || id == ColumnTypeId::kLargeBinary ||
         id == ColumnTypeId::kLargeList;
}

}  // namespace

bool ByteCursor::U8(uint8_t* v) {
  if (rest_.empty()) return false;
  *v = static_cast<uint8_t>(rest_[0]);
  rest_.remove_prefix(1);
  return true;
}
bool ByteCursor::U32(uint32_t* v) {
  if (rest_.size() < 4) return false;
  std::memcpy(v, rest_.data(), 4);
  rest_.remove_prefix(4);
  return true;
}
bool ByteCursor::I32(int32_t* v) {
  uint32_t u;
  if (!U32(&u)) return false;
  *v = static_cast<int32_t>(u);
  return true;
}
bool ByteCursor::U64(uint64_t* v) {
  if (rest_.size() < 8) return false;
  std::memcpy(v, rest_.data(), 8);
  rest_.remove_prefix(8);
  return true;
}
bool ByteCursor::Bytes(uint64_t n, std::string_view* v) {
  if (rest_.size() < n) return false;
  *v = rest_.substr(0, n);
  rest_.remove_prefix(n);
  return true;
}
bool ByteCursor::String(std::string_view* v) {
  uint32_t n;
  return U32(&n) && Bytes(n, v);
}

std::string ColumnTypeName(const ColumnType& t) {
  switch (t.id) {
    case ColumnTypeId::kNull:
      return "null";
    case ColumnTypeId::kBool:
      return "bool";
    case ColumnTypeId::kInt8:
      return "int8";
    case ColumnTypeId::kInt16:
      return "int16";
    case ColumnTypeId::kInt32:
      return "int32";
    case ColumnTypeId::kInt64:
      return "int64";
    case ColumnTypeId::kUInt8:
      return "uint8";
    case ColumnTypeId::kUInt16:
      return "uint16";
    case ColumnTypeId::kUInt32:
      return "uint32";
    case ColumnTypeId::kUInt64:
      return "uint64";
    case ColumnTypeId::kFloat32:
      return "float";
    case ColumnTypeId::kFloat64:
      return "double";
    case ColumnTypeId::kString:
      return "string";
    case ColumnTypeId::kLargeString:
      return "large_string";
    case ColumnTypeId::kBinary:
      return "binary";
    case ColumnTypeId::kLargeBinary:
      return "large_binary";
    case ColumnTypeId::kFixedSizeBinary:
      return StrCat("fixed_size_binary[", t.width, "]");
    case ColumnTypeId::kDate32:
      return "date32[day]";
    case ColumnTypeId::kDate64:
      return "date64[ms]";
    case ColumnTypeId::kTimestamp:
      return t.time_zone.empty() ? StrCat("timestamp[", UnitName(t.unit), "]")
                                 : StrCat("timestamp[", UnitName(t.unit),
                                          ", tz=", t.time_zone, "]");
    case ColumnTypeId::kTime32:
      return StrCat("time32[", UnitName(t.unit), "]");
    case ColumnTypeId::kTime64:
      return StrCat("time64[", UnitName(t.unit), "]");
    case ColumnTypeId::kDuration:
      return StrCat("duration[", UnitName(t.unit), "]");
    case ColumnTypeId::kDecimal128:
      return StrCat("decimal128(", t.precision, ", ", t.scale, ")");
    case ColumnTypeId::kList:
      return StrCat("list<", ColumnTypeName(t.children[0]), ">");
    case ColumnTypeId::kLargeList:
      return StrCat("large_list<", ColumnTypeName(t.children[0]), ">");
    case ColumnTypeId::kFixedSizeList:
      return StrCat("fixed_size_list<", ColumnTypeName(t.children[0]), ">[",
                    t.width, "]");
    case ColumnTypeId::kStruct: {
      std::string s = "struct<";
      for (size_t i = 0; i < t.children.size(); ++i) {
        s += StrCat(i ? ", " : "", t.field_names[i], ": ",
                    ColumnTypeName(t.children[i]));
      }
      return s + ">";
    }
    case ColumnTypeId::kMap:
      break;
  }
  return StrCat("map<", ColumnTypeName(t.children[0]), ", ",
                ColumnTypeName(t.children[1]), ">");
}

int FixedWidth(const ColumnType& t) {
  switch (t.id) {
    case ColumnTypeId::kInt8:
    case ColumnTypeId::kUInt8:
      return 1;
    case ColumnTypeId::kInt16:
    case ColumnTypeId::kUInt16:
      return 2;
    case ColumnTypeId::kInt32:
    case ColumnTypeId::kUInt32:
    case ColumnTypeId::kFloat32:
    case ColumnTypeId::kDate32:
    case ColumnTypeId::kTime32:
      return 4;
    case ColumnTypeId::kInt64:
    case ColumnTypeId::kUInt64:
    case ColumnTypeId::kFloat64:
    case ColumnTypeId::kDate64:
    case ColumnTypeId::kTimestamp:
    case ColumnTypeId::kTime64:
    case ColumnTypeId::kDuration:
      return 8;
    case ColumnTypeId::kDecimal128:
      return 16;
    case ColumnTypeId::kFixedSizeBinary:
      return t.width;
    default:
      return 0;
  }
}

bool IsStringLike(ColumnTypeId id) {
  return id == ColumnTypeId::kString || id == ColumnTypeId::kLargeString ||
         id == ColumnTypeId::kBinary || id == ColumnTypeId::kLargeBinary ||
         id == ColumnTypeId::kFixedSizeBinary;
}

bool IsInteger(ColumnTypeId id) {
  return id >= ColumnTypeId::kInt8 && id <= ColumnTypeId::kUInt64;
}

absl::StatusOr<ColumnType> ReadColumnType(ByteCursor* in, int depth) {
  if (depth > kMaxTypeDepth) {
    return Bad(StrCat("types nested deeper than ", kMaxTypeDepth));
  }
  const absl::Status cut = Bad("the header ends inside a type");
  ColumnType t;
  uint8_t code;
  if (!in->U8(&code)) return cut;
  if (code > static_cast<uint8_t>(ColumnTypeId::kMap)) {
    return Bad(StrCat("unknown type code ", static_cast<int>(code)));
  }
  t.id = static_cast<ColumnTypeId>(code);
  auto child = [&]() -> absl::Status {
    absl::StatusOr<ColumnType> c = ReadColumnType(in, depth + 1);
    if (!c.ok()) return c.status();
    t.children.push_back(*std::move(c));
    return absl::OkStatus();
  };
  auto unit = [&]() -> absl::Status {
    uint8_t u;
    if (!in->U8(&u)) return cut;
    if (u > 3) return Bad(StrCat("unknown time unit ", static_cast<int>(u)));
    t.unit = static_cast<TimeUnit>(u);
    return absl::OkStatus();
  };
  absl::Status s;
  switch (t.id) {
    case ColumnTypeId::kFixedSizeBinary:
    case ColumnTypeId::kFixedSizeList:
      if (!in->I32(&t.width)) return cut;
      if (t.width < 0 || t.width > kMaxWidth) {
        return Bad(
            StrCat("width ", t.width, " is not in [0, ", kMaxWidth, "]"));
      }
      if (t.id == ColumnTypeId::kFixedSizeList) s = child();
      break;
    case ColumnTypeId::kTimestamp: {
      std::string_view tz;
      if (s = unit(); s.ok() && !in->String(&tz)) return cut;
      t.time_zone = tz;
      break;
    }
    case ColumnTypeId::kTime32:
      s = unit();
      if (s.ok() && t.unit != TimeUnit::kSecond && t.unit != TimeUnit::kMilli) {
        return Bad("time32 is in seconds or milliseconds");
      }
      break;
    case ColumnTypeId::kTime64:
      s = unit();
      if (s.ok() && t.unit != TimeUnit::kMicro && t.unit != TimeUnit::kNano) {
        return Bad("time64 is in microseconds or nanoseconds");
      }
      break;
    case ColumnTypeId::kDuration:
      s = unit();
      break;
    case ColumnTypeId::kDecimal128:
      if (!in->I32(&t.precision) || !in->I32(&t.scale)) return cut;
      if (t.precision < 1 || t.precision > 38 || t.scale < -38 ||
          t.scale > 38) {
        return Bad(StrCat("decimal128(", t.precision, ", ", t.scale,
                          ") is not a valid decimal type"));
      }
      break;
    case ColumnTypeId::kList:
    case ColumnTypeId::kLargeList:
      s = child();
      break;
    case ColumnTypeId::kStruct: {
      uint32_t n;
      if (!in->U32(&n)) return cut;
      // Each field takes at least 5 bytes: no more can follow than that.
      if (n > in->remaining() / 5) return cut;
      for (uint32_t i = 0; i < n && s.ok(); ++i) {
        std::string_view name;
        if (!in->String(&name)) return cut;
        t.field_names.emplace_back(name);
        s = child();
      }
      break;
    }
    case ColumnTypeId::kMap:
      s = child();
      if (s.ok()) s = child();
      if (s.ok() && t.children[0].id != ColumnTypeId::kString &&
          t.children[0].id != ColumnTypeId::kLargeString) {
        return Bad(StrCat("map keys must be strings, not ",
                          ColumnTypeName(t.children[0])));
      }
      break;
    default:
      break;
  }
  if (!s.ok()) return s;
  return t;
}

std::string_view ArrayView::Bytes(uint64_t i) const {
  if (type->id == ColumnTypeId::kFixedSizeBinary) {
    const uint64_t w = static_cast<uint64_t>(type->width);
    return values.substr((offset + i) * w, w);
  }
  uint64_t begin, end;
  Range(i, &begin, &end);
  return data.substr(begin, end - begin);
}

void ArrayView::Range(uint64_t i, uint64_t* begin, uint64_t* end) const {
  if (type->id == ColumnTypeId::kFixedSizeList) {
    const uint64_t w = static_cast<uint64_t>(type->width);
    *begin = (offset + i) * w;
    *end = *begin + w;
  } else if (WideOffsets(type->id)) {
    *begin = static_cast<uint64_t>(Fixed<int64_t>(i));
    *end = static_cast<uint64_t>(Fixed<int64_t>(i + 1));
  } else {
    *begin = static_cast<uint64_t>(Fixed<int32_t>(i));
    *end = static_cast<uint64_t>(Fixed<int32_t>(i + 1));
  }
}

absl::Status ReadArray(const ColumnType& type, ByteCursor* in, ArrayView* a) {
  const absl::Status cut = Bad("the batch ends inside an array");
  a->type = &type;
  a->children.clear();
  a->validity = a->values = a->data = {};
  if (!in->U64(&a->length) || !in->U64(&a->offset) ||
      !in->U64(&a->null_count)) {
    return cut;
  }
  if (a->length > kMaxElements || a->offset > kMaxElements) {
    return Bad(StrCat("length ", a->length, " or offset ", a->offset,
                      " is larger than 2^40"));
  }
  const uint64_t end = a->offset + a->length;
  auto buffer = [&](std::string_view* b) {
    uint64_t n;
    return in->U64(&n) && in->Bytes(n, b);
  };
  // Validity: none, or a bitmap covering [0, end) that agrees with
  // null_count.
  if (!buffer(&a->validity)) return cut;
  if (type.id == ColumnTypeId::kNull) {
    if (!a->validity.empty() || a->null_count != a->length) {
      return Bad("a null array has no validity bitmap and only nulls");
    }
  } else if (a->validity.empty()) {
    if (a->null_count != 0) {
      return Bad(
          StrCat("null count ", a->null_count, " without a validity bitmap"));
    }
  } else {
    if (a->validity.size() < (end + 7) / 8) {
      return Bad(StrCat("validity bitmap of ", a->validity.size(),
                        " bytes is shorter than the ", (end + 7) / 8, " its ",
                        a->length, " values at offset ", a->offset, " need"));
    }
    const uint64_t zeros = CountZeros(a->validity, a->offset, end);
    if (zeros != a->null_count) {
      return Bad(StrCat("null count ", a->null_count,
                        " disagrees with the validity bitmap's ", zeros));
    }
  }
  auto read_child = [&](const ColumnType& t) -> absl::Status {
    a->children.emplace_back();
    return ReadArray(t, in, &a->children.back());
  };
  switch (type.id) {
    case ColumnTypeId::kNull:
      return absl::OkStatus();
    case ColumnTypeId::kBool:
      if (!buffer(&a->values)) return cut;
      if (a->values.size() < (end + 7) / 8) {
        return Bad(StrCat("values bitmap of ", a->values.size(),
                          " bytes is shorter than the ", (end + 7) / 8,
                          " needed"));
      }
      return absl::OkStatus();
    case ColumnTypeId::kString:
    case ColumnTypeId::kLargeString:
    case ColumnTypeId::kBinary:
    case ColumnTypeId::kLargeBinary:
      if (!buffer(&a->values) || !buffer(&a->data)) return cut;
      return WideOffsets(type.id)
                 ? CheckOffsets<int64_t>(*a, a->data.size(), "data buffer")
                 : CheckOffsets<int32_t>(*a, a->data.size(), "data buffer");
    case ColumnTypeId::kList:
    case ColumnTypeId::kLargeList:
    case ColumnTypeId::kMap: {
      if (!buffer(&a->values)) return cut;
      for (const ColumnType& c : type.children) {
        if (absl::Status s = read_child(c); !s.ok()) return s;
      }
      uint64_t child_length = a->children[0].length;
      if (type.id == ColumnTypeId::kMap &&
          a->children[1].length != child_length) {
        return Bad(StrCat("map keys (", child_length, ") and items (",
                          a->children[1].length, ") differ in length"));
      }
      if (type.id == ColumnTypeId::kMap && a->children[0].null_count != 0) {
        return Bad("a map key is null");
      }
      return type.id == ColumnTypeId::kLargeList
                 ? CheckOffsets<int64_t>(*a, child_length, "child array")
                 : CheckOffsets<int32_t>(*a, child_length, "child array");
    }
    case ColumnTypeId::kFixedSizeList: {
      if (absl::Status s = read_child(type.children[0]); !s.ok()) return s;
      const uint64_t needed = end * static_cast<uint64_t>(type.width);
      if (a->children[0].length < needed) {
        return Bad(StrCat("child array of ", a->children[0].length,
                          " values is shorter than the ", needed, " needed"));
      }
      return absl::OkStatus();
    }
    case ColumnTypeId::kStruct:
      for (const ColumnType& c : type.children) {
        if (absl::Status s = read_child(c); !s.ok()) return s;
        if (a->children.back().length != a->length) {
          return Bad(StrCat("field ", type.field_names[a->children.size() - 1],
                            " has ", a->children.back().length,
                            " values, not the struct's ", a->length));
        }
      }
      return absl::OkStatus();
    default: {
      if (!buffer(&a->values)) return cut;
      const uint64_t needed = end * static_cast<uint64_t>(FixedWidth(type));
      if (a->values.size() < needed) {
        return Bad(StrCat("values buffer of ", a->values.size(),
                          " bytes is shorter than the ", needed, " its ",
                          a->length, " values at offset ", a->offset, " need"));
      }
      return absl::OkStatus();
    }
  }
}

}  // namespace roost
