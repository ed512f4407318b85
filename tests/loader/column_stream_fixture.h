// Arrow-columns streams made by hand (docs/format/column_stream.md), for
// the suites of its reader: column_stream_test.cc (the reader in process)
// and roost_load_rows_test.cc (roost-load build --rows on such streams).
#ifndef ROOST_TESTS_LOADER_COLUMN_STREAM_FIXTURE_H_
#define ROOST_TESTS_LOADER_COLUMN_STREAM_FIXTURE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace roost::testing {

// Little-endian pieces of a stream.
inline std::string U32(uint32_t v) {
  return std::string(reinterpret_cast<char*>(&v), 4);
}
inline std::string U64(uint64_t v) {
  return std::string(reinterpret_cast<char*>(&v), 8);
}
inline std::string Str(const std::string& s) { return U32(s.size()) + s; }
template <typename T>
std::string Values(std::vector<T> v) {
  return std::string(reinterpret_cast<const char*>(v.data()),
                     v.size() * sizeof(T));
}

struct Column {
  std::string name;
  std::string type;  // its type bytes
};

inline std::string Stream(uint8_t mode, const std::vector<Column>& columns,
                          const std::vector<std::string>& batches,
                          bool end = true) {
  std::string header(1, static_cast<char>(mode));
  header += U32(columns.size());
  for (const Column& c : columns) header += Str(c.name) + c.type;
  std::string s = "ROOSTCOL" + U32(1) + U32(header.size()) + header;
  for (const std::string& b : batches) s += '\x01' + U64(b.size()) + b;
  if (end) s += '\0';
  return s;
}

inline std::string Array(uint64_t length, uint64_t offset, uint64_t nulls,
                         const std::vector<std::string>& buffers,
                         const std::vector<std::string>& children = {}) {
  std::string s = U64(length) + U64(offset) + U64(nulls);
  for (const std::string& b : buffers) s += U64(b.size()) + b;
  for (const std::string& c : children) s += c;
  return s;
}

inline std::string Batch(uint64_t rows, const std::vector<std::string>& arrays,
                         const std::string& source = "t.parquet row group 0",
                         uint64_t first_row = 0) {
  std::string s = Str(source) + U64(first_row) + U64(rows);
  for (const std::string& a : arrays) s += a;
  return s;
}

// A string array of `values` (no nulls).
inline std::string Strings(const std::vector<std::string>& values) {
  std::vector<int32_t> offsets{0};
  std::string data;
  for (const std::string& v : values) {
    data += v;
    offsets.push_back(data.size());
  }
  return Array(values.size(), 0, 0, {"", Values(offsets), data});
}

// Key column "k" of strings "0", "1", ... for `rows` rows.
inline std::string Keys(uint64_t rows) {
  std::vector<std::string> keys;
  for (uint64_t i = 0; i < rows; ++i) keys.push_back(std::to_string(i));
  return Strings(keys);
}

inline const std::string kString = "\x0c";
inline const std::string kInt32 = "\x04";
inline const std::string kInt64 = "\x05";

}  // namespace roost::testing

#endif  // ROOST_TESTS_LOADER_COLUMN_STREAM_FIXTURE_H_
