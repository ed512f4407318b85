// Everything is appended to the caller's string, which it reuses from row to
// row: no allocation once it has grown to the longest value.

#include "loader/column_json.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "util/str_cat.h"

namespace roost {
namespace {

template <typename T>
void AppendNumber(T v, std::string* out) {
  char buf[64];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr - buf);
}

template <typename T>
void AppendFloat(T v, std::string* out) {
  if (!std::isfinite(v)) {
    out->append("null");
    return;
  }
  AppendNumber(v, out);
}

// The number of valid UTF-8 bytes starting at s[0], or 0 when they are not
// a valid sequence (overlong forms, surrogates and code points past
// U+10FFFF included).
size_t Utf8Length(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const uint8_t c = b(0);
  auto cont = [&](size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

void AppendBase64(std::string_view in, std::string* out) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  out->push_back('"');
  size_t i = 0;
  const auto b = [&](size_t k) { return static_cast<uint8_t>(in[k]); };
  for (; i + 3 <= in.size(); i += 3) {
    const uint32_t v = (b(i) << 16) | (b(i + 1) << 8) | b(i + 2);
    const char q[4] = {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63],
                       kAlphabet[(v >> 6) & 63], kAlphabet[v & 63]};
    out->append(q, 4);
  }
  if (i + 1 == in.size()) {
    const uint32_t v = b(i) << 16;
    const char q[4] = {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63], '=', '='};
    out->append(q, 4);
  } else if (i + 2 == in.size()) {
    const uint32_t v = (b(i) << 16) | (b(i + 1) << 8);
    const char q[4] = {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63],
                       kAlphabet[(v >> 6) & 63], '='};
    out->append(q, 4);
  }
  out->push_back('"');
}

// Days since 1970-01-01 to year, month, day (the proleptic Gregorian
// calendar; Howard Hinnant's civil_from_days).
void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2);
}

int64_t FloorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

// a - FloorDiv(a, b) * b for b > 0, in [0, b), computed without that
// product, which overflows for an `a` within b of INT64_MIN.
int64_t FloorMod(int64_t a, int64_t b) {
  const int64_t r = a % b;
  return r < 0 ? r + b : r;
}

int64_t UnitsPerSecond(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kSecond:
      return 1;
    case TimeUnit::kMilli:
      return 1000;
    case TimeUnit::kMicro:
      return 1000000;
    case TimeUnit::kNano:
      break;
  }
  return 1000000000;
}
int FractionDigits(TimeUnit unit) {
  return unit == TimeUnit::kSecond  ? 0
         : unit == TimeUnit::kMilli ? 3
         : unit == TimeUnit::kMicro ? 6
                                    : 9;
}

void AppendDate(int64_t days, std::string* out) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  char buf[48];
  const int n =
      std::snprintf(buf, sizeof(buf), "%s%04lld-%02u-%02u", y < 0 ? "-" : "",
                    static_cast<long long>(y < 0 ? -y : y), m, d);
  out->append(buf, n);
}

// HH:MM:SS[.fraction] of `units` (0 <= units < a day's).
void AppendTimeOfDay(int64_t units, TimeUnit unit, std::string* out) {
  const int64_t per_second = UnitsPerSecond(unit);
  const int64_t seconds = units / per_second;
  char buf[48];
  int n = std::snprintf(buf, sizeof(buf), "%02lld:%02lld:%02lld",
                        static_cast<long long>(seconds / 3600),
                        static_cast<long long>(seconds / 60 % 60),
                        static_cast<long long>(seconds % 60));
  if (unit != TimeUnit::kSecond) {
    n +=
        std::snprintf(buf + n, sizeof(buf) - n, ".%0*lld", FractionDigits(unit),
                      static_cast<long long>(units % per_second));
  }
  out->append(buf, n);
}

// Appends a 128-bit two's complement integer scaled by 10^-scale.
void AppendDecimal(const char* p, int32_t scale, std::string* out) {
  uint64_t lo, hi;
  std::memcpy(&lo, p, 8);
  std::memcpy(&hi, p + 8, 8);
  unsigned __int128 v = (static_cast<unsigned __int128>(hi) << 64) | lo;
  const bool negative = (hi >> 63) != 0;
  if (negative) v = ~v + 1;
  char digits[48];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + static_cast<int>(v % 10));
    v /= 10;
  } while (v != 0);
  out->push_back('"');
  if (negative) out->push_back('-');
  if (scale <= 0) {
    for (int i = n - 1; i >= 0; --i) out->push_back(digits[i]);
    if (n != 1 || digits[0] != '0') out->append(-scale, '0');
  } else {
    // At least one digit before the point.
    while (n <= scale) digits[n++] = '0';
    for (int i = n - 1; i >= 0; --i) {
      out->push_back(digits[i]);
      if (i == scale) out->push_back('.');
    }
  }
  out->push_back('"');
}

absl::Status TooLarge(size_t limit) {
  return absl::InvalidArgumentError(
      StrCat("the value exceeds the limit of ", limit, " bytes"));
}

}  // namespace

size_t ValidUtf8Prefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    if (static_cast<uint8_t>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t n = Utf8Length(s.substr(i));
    if (n == 0) return i;
    i += n;
  }
  return i;
}

absl::Status AppendJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  size_t run = 0;  // start of the bytes not yet appended
  for (size_t i = 0; i < s.size();) {
    const uint8_t c = static_cast<uint8_t>(s[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      const size_t n = Utf8Length(s.substr(i));
      if (n == 0) {
        return absl::InvalidArgumentError(
            StrCat("invalid UTF-8 at byte ", i, " of a string"));
      }
      i += n;
      continue;
    }
    out->append(s.data() + run, i - run);
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\r':
        out->append("\\r");
        break;
      default: {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        out->append(buf, 6);
      }
    }
    run = ++i;
  }
  out->append(s.data() + run, s.size() - run);
  out->push_back('"');
  return absl::OkStatus();
}

void AppendInteger(const ArrayView& a, uint64_t i, std::string* out) {
  switch (a.type->id) {
    case ColumnTypeId::kInt8:
      return AppendNumber(a.Fixed<int8_t>(i), out);
    case ColumnTypeId::kInt16:
      return AppendNumber(a.Fixed<int16_t>(i), out);
    case ColumnTypeId::kInt32:
      return AppendNumber(a.Fixed<int32_t>(i), out);
    case ColumnTypeId::kInt64:
      return AppendNumber(a.Fixed<int64_t>(i), out);
    case ColumnTypeId::kUInt8:
      return AppendNumber(a.Fixed<uint8_t>(i), out);
    case ColumnTypeId::kUInt16:
      return AppendNumber(a.Fixed<uint16_t>(i), out);
    case ColumnTypeId::kUInt32:
      return AppendNumber(a.Fixed<uint32_t>(i), out);
    default:
      return AppendNumber(a.Fixed<uint64_t>(i), out);
  }
}

absl::Status AppendJson(const ArrayView& a, uint64_t i, std::string* out,
                        size_t limit) {
  const ColumnType& t = *a.type;
  if (t.id == ColumnTypeId::kNull || !a.IsValid(i)) {
    out->append("null");
    return absl::OkStatus();
  }
  switch (t.id) {
    case ColumnTypeId::kNull:
      break;
    case ColumnTypeId::kBool:
      out->append(a.Bool(i) ? "true" : "false");
      break;
    case ColumnTypeId::kInt8:
    case ColumnTypeId::kInt16:
    case ColumnTypeId::kInt32:
    case ColumnTypeId::kInt64:
    case ColumnTypeId::kUInt8:
    case ColumnTypeId::kUInt16:
    case ColumnTypeId::kUInt32:
    case ColumnTypeId::kUInt64:
      AppendInteger(a, i, out);
      break;
    case ColumnTypeId::kFloat32:
      AppendFloat(a.Fixed<float>(i), out);
      break;
    case ColumnTypeId::kFloat64:
      AppendFloat(a.Fixed<double>(i), out);
      break;
    case ColumnTypeId::kString:
    case ColumnTypeId::kLargeString:
      return AppendJsonString(a.Bytes(i), out);
    case ColumnTypeId::kBinary:
    case ColumnTypeId::kLargeBinary:
    case ColumnTypeId::kFixedSizeBinary:
      AppendBase64(a.Bytes(i), out);
      break;
    case ColumnTypeId::kDate32:
      out->push_back('"');
      AppendDate(a.Fixed<int32_t>(i), out);
      out->push_back('"');
      break;
    case ColumnTypeId::kDate64:
      out->push_back('"');
      AppendDate(FloorDiv(a.Fixed<int64_t>(i), 86400000), out);
      out->push_back('"');
      break;
    case ColumnTypeId::kTimestamp: {
      const int64_t v = a.Fixed<int64_t>(i);
      const int64_t per_day = 86400 * UnitsPerSecond(t.unit);
      const int64_t days = FloorDiv(v, per_day);
      out->push_back('"');
      AppendDate(days, out);
      out->push_back('T');
      AppendTimeOfDay(FloorMod(v, per_day), t.unit, out);
      if (!t.time_zone.empty()) out->push_back('Z');
      out->push_back('"');
      break;
    }
    case ColumnTypeId::kTime32:
    case ColumnTypeId::kTime64: {
      const int64_t v = t.id == ColumnTypeId::kTime32 ? a.Fixed<int32_t>(i)
                                                      : a.Fixed<int64_t>(i);
      const int64_t per_day = 86400 * UnitsPerSecond(t.unit);
      out->push_back('"');
      // A time of day, whatever it is.
      AppendTimeOfDay(FloorMod(v, per_day), t.unit, out);
      out->push_back('"');
      break;
    }
    case ColumnTypeId::kDuration:
      AppendNumber(a.Fixed<int64_t>(i), out);
      break;
    case ColumnTypeId::kDecimal128:
      AppendDecimal(a.values.data() + (a.offset + i) * 16, t.scale, out);
      break;
    case ColumnTypeId::kList:
    case ColumnTypeId::kLargeList:
    case ColumnTypeId::kFixedSizeList: {
      uint64_t begin, end;
      a.Range(i, &begin, &end);
      out->push_back('[');
      for (uint64_t k = begin; k < end; ++k) {
        if (out->size() > limit) return TooLarge(limit);
        if (k != begin) out->push_back(',');
        if (absl::Status s = AppendJson(a.children[0], k, out, limit);
            !s.ok()) {
          return absl::InvalidArgumentError(
              StrCat("element ", k - begin, ": ", s.message()));
        }
      }
      out->push_back(']');
      break;
    }
    case ColumnTypeId::kStruct:
      out->push_back('{');
      for (size_t f = 0; f < a.children.size(); ++f) {
        if (f != 0) out->push_back(',');
        absl::Status s = AppendJsonString(t.field_names[f], out);
        if (s.ok()) {
          out->push_back(':');
          s = AppendJson(a.children[f], i, out, limit);
        }
        if (!s.ok()) {
          return absl::InvalidArgumentError(
              StrCat("field ", t.field_names[f], ": ", s.message()));
        }
      }
      out->push_back('}');
      break;
    case ColumnTypeId::kMap: {
      uint64_t begin, end;
      a.Range(i, &begin, &end);
      out->push_back('{');
      for (uint64_t k = begin; k < end; ++k) {
        if (out->size() > limit) return TooLarge(limit);
        if (k != begin) out->push_back(',');
        absl::Status s = AppendJson(a.children[0], k, out, limit);
        if (s.ok()) {
          out->push_back(':');
          s = AppendJson(a.children[1], k, out, limit);
        }
        if (!s.ok()) {
          return absl::InvalidArgumentError(
              StrCat("entry ", k - begin, ": ", s.message()));
        }
      }
      out->push_back('}');
      break;
    }
  }
  return absl::OkStatus();
}

}  // namespace roost
