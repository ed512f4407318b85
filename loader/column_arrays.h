// The typed columns of an arrow-columns stream (docs/format/column_stream.md):
// their types, read from the stream's header, and their arrays, read from a
// batch as views of Arrow's own buffers and checked before any value is
// looked at.
//
// ColumnType is one node of a column's type tree (a list's element type, a
// struct's fields, a map's key and item types are its children). ArrayView
// is one node of a batch's array tree: length, offset, null count and the
// buffers Arrow's columnar layout gives that type, as views into the bytes
// the stream's reader holds (valid until it reads the next batch).
//
// ReadArray() checks everything a later access relies on: every buffer is
// long enough for offset + length elements, offsets are non-decreasing and
// inside the data or child array they index, children are as long as their
// parent needs, the null count agrees with the validity bitmap. After it, no
// access through the ArrayView can go out of bounds, whatever the bytes.
//
// Example:
//   ByteCursor in(frame);
//   absl::StatusOr<ColumnType> type = ReadColumnType(&in, 0);
//   ArrayView array;
//   absl::Status s = ReadArray(*type, &in, &array);  // names the column
//   if (array.IsValid(row)) { int64_t v = array.Int<int64_t>(row); ... }
#ifndef ROOST_LOADER_COLUMN_ARRAYS_H_
#define ROOST_LOADER_COLUMN_ARRAYS_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace roost {

// The type codes of docs/format/column_stream.md; the numbers are the
// format's.
enum class ColumnTypeId : uint8_t {
  kNull = 0,
  kBool = 1,
  kInt8 = 2,
  kInt16 = 3,
  kInt32 = 4,
  kInt64 = 5,
  kUInt8 = 6,
  kUInt16 = 7,
  kUInt32 = 8,
  kUInt64 = 9,
  kFloat32 = 10,
  kFloat64 = 11,
  kString = 12,
  kLargeString = 13,
  kBinary = 14,
  kLargeBinary = 15,
  kFixedSizeBinary = 16,
  kDate32 = 17,
  kDate64 = 18,
  kTimestamp = 19,
  kTime32 = 20,
  kTime64 = 21,
  kDuration = 22,
  kDecimal128 = 23,
  kList = 24,
  kLargeList = 25,
  kFixedSizeList = 26,
  kStruct = 27,
  kMap = 28,
};

// Seconds, milliseconds, microseconds, nanoseconds.
enum class TimeUnit : uint8_t {
  kSecond = 0,
  kMilli = 1,
  kMicro = 2,
  kNano = 3
};

struct ColumnType {
  ColumnTypeId id = ColumnTypeId::kNull;
  // kFixedSizeBinary: bytes per value; kFixedSizeList: elements per list.
  int32_t width = 0;
  // kTimestamp, kTime32, kTime64, kDuration.
  TimeUnit unit = TimeUnit::kSecond;
  // kTimestamp: "" for a timestamp without a time zone.
  std::string time_zone;
  // kDecimal128.
  int32_t precision = 0;
  int32_t scale = 0;
  // kStruct: the fields' names, one per child.
  std::vector<std::string> field_names;
  // Lists: the element type; kStruct: the fields; kMap: key, then item.
  std::vector<ColumnType> children;
};

// The type's name as Arrow writes it ("list<int64>", "timestamp[ms, UTC]").
std::string ColumnTypeName(const ColumnType& type);
// Bytes per value of a fixed-width type (0 for the others and for bool).
int FixedWidth(const ColumnType& type);
bool IsStringLike(ColumnTypeId id);  // string, binary, fixed_size_binary
bool IsInteger(ColumnTypeId id);

// Reads little-endian fields from a span, never past its end.
class ByteCursor {
 public:
  explicit ByteCursor(std::string_view bytes) : rest_(bytes) {}
  bool U8(uint8_t* v);
  bool U32(uint32_t* v);
  bool I32(int32_t* v);
  bool U64(uint64_t* v);
  // A u32 length, then that many bytes.
  bool String(std::string_view* v);
  // `n` bytes.
  bool Bytes(uint64_t n, std::string_view* v);
  size_t remaining() const { return rest_.size(); }

 private:
  std::string_view rest_;
};

// Reads one type tree (docs/format/column_stream.md, "Types") at nesting
// `depth`; InvalidArgument for an unknown code, a bad parameter or nesting
// deeper than kMaxTypeDepth.
constexpr int kMaxTypeDepth = 32;
absl::StatusOr<ColumnType> ReadColumnType(ByteCursor* in, int depth);

struct ArrayView {
  const ColumnType* type = nullptr;
  uint64_t length = 0;
  uint64_t offset = 0;
  uint64_t null_count = 0;
  std::string_view validity;  // empty: no nulls
  std::string_view values;    // fixed-width values, or string/list offsets
  std::string_view data;      // string/binary bytes
  std::vector<ArrayView> children;

  // REQUIRES (for these accessors): i < length, after ReadArray() accepted
  // the array.
  bool IsValid(uint64_t i) const {
    if (validity.empty()) return true;
    const uint64_t bit = offset + i;
    return (static_cast<uint8_t>(validity[bit >> 3]) >> (bit & 7)) & 1;
  }
  template <typename T>
  T Fixed(uint64_t i) const {
    T v;
    std::memcpy(&v, values.data() + (offset + i) * sizeof(T), sizeof(T));
    return v;
  }
  bool Bool(uint64_t i) const {
    const uint64_t bit = offset + i;
    return (static_cast<uint8_t>(values[bit >> 3]) >> (bit & 7)) & 1;
  }
  // Strings, binary: the value's bytes. Lists and maps: [*begin, *end) in
  // the child.
  std::string_view Bytes(uint64_t i) const;
  void Range(uint64_t i, uint64_t* begin, uint64_t* end) const;
};

// Reads one array of `type` (docs/format/column_stream.md, "Arrays") and
// checks it. Errors are InvalidArgument saying what is inconsistent, with the
// row (counted from the batch's first row) where there is one; the caller
// puts the source, batch and column in front.
absl::Status ReadArray(const ColumnType& type, ByteCursor* in,
                       ArrayView* array);

}  // namespace roost

#endif  // ROOST_LOADER_COLUMN_ARRAYS_H_
