// The two data sets of the benchmark suite (bench/run.sh), computed from a
// record number rather than stored, so that every program of the suite (and
// every size) sees the same pairs:
//
//   uniform   8-byte keys, 8-byte values: exactly the pairs of
//             bench/gen_records.cc (key i = GeneratedPairs::Key(i), as its 8
//             bytes in memory; value = GeneratedPairs::ValueOf(key));
//   variable  keys of 10 to 40 bytes, values of 20 to 200 bytes: the key's
//             first 8 bytes are GeneratedPairs::Key(i) big-endian, the rest
//             lowercase letters; the value's length and bytes are mixes of
//             the same word.
//
// Record i of either set is a function of its word w = GeneratedPairs::Key(i)
// alone. Words are distinct (Key is a bijection), so keys are distinct, and a
// word of a record number >= N is a key that is not among the first N. Both
// sets sort (bytewise, as sorted tables need) by SortWord(w).
//
// Example:
//   SuiteData data(DataSet::kVariable, 1'000'000, 20261122);
//   char key[SuiteData::kMaxKey], value[SuiteData::kMaxValue];
//   const uint64_t w = data.Word(41);
//   std::string_view k(key, data.Key(w, key));
//   std::string_view v(value, data.Value(w, value));
#ifndef ROOST_BENCH_SUITE_DATA_H_
#define ROOST_BENCH_SUITE_DATA_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#include "bench/generated_pairs.h"

namespace roost::bench {

enum class DataSet { kUniform, kVariable };

inline std::optional<DataSet> ParseDataSet(std::string_view name) {
  if (name == "uniform") return DataSet::kUniform;
  if (name == "variable") return DataSet::kVariable;
  return std::nullopt;
}

inline const char* DataSetName(DataSet set) {
  return set == DataSet::kUniform ? "uniform" : "variable";
}

class SuiteData {
 public:
  static constexpr size_t kMaxKey = 40;
  static constexpr size_t kMaxValue = 200;

  SuiteData(DataSet set, uint64_t num_keys, uint64_t seed)
      : set_(set), num_keys_(num_keys), pairs_(seed) {}

  DataSet set() const { return set_; }
  uint64_t num_keys() const { return num_keys_; }
  bool fixed_width() const { return set_ == DataSet::kUniform; }

  // The word of record i; records [0, num_keys()) are the set.
  uint64_t Word(uint64_t i) const { return pairs_.Key(i); }

  // Writes record w's key into `out` (kMaxKey bytes) and returns its length.
  size_t Key(uint64_t w, char* out) const {
    if (set_ == DataSet::kUniform) {
      std::memcpy(out, &w, 8);
      return 8;
    }
    const uint64_t be = ToBigEndian(w);
    std::memcpy(out, &be, 8);
    const size_t length = 10 + Mix(w ^ 0x6b65796c656e6774ULL) % 31;
    uint64_t x = Mix(w ^ 0x6b657962797465ULL);
    for (size_t j = 8; j < length; ++j) {
      if ((j & 7) == 0) x = Mix(x + 0x9e3779b97f4a7c15ULL);
      out[j] = static_cast<char>('a' + ((x >> (8 * (j & 7))) & 0xff) % 26);
    }
    return length;
  }

  // Writes record w's value into `out` (kMaxValue bytes) and returns its
  // length.
  size_t Value(uint64_t w, char* out) const {
    if (set_ == DataSet::kUniform) {
      const uint64_t v = GeneratedPairs::ValueOf(w);
      std::memcpy(out, &v, 8);
      return 8;
    }
    const size_t length = 20 + Mix(w ^ 0x76616c6c656e6774ULL) % 181;
    uint64_t x = Mix(w ^ 0x76616c6279746573ULL);
    for (size_t j = 0; j < length; j += 8) {
      x = Mix(x + 0x9e3779b97f4a7c15ULL);
      std::memcpy(out + j, &x, length - j < 8 ? length - j : 8);
    }
    return length;
  }

  // Sorting words by this sorts their keys bytewise.
  uint64_t SortWord(uint64_t w) const {
    return set_ == DataSet::kUniform ? ToBigEndian(w) : w;
  }

 private:
  static uint64_t ToBigEndian(uint64_t x) {
    if constexpr (std::endian::native == std::endian::little) {
      return __builtin_bswap64(x);
    } else {
      return x;
    }
  }

  DataSet set_;
  uint64_t num_keys_;
  GeneratedPairs pairs_;
};

}  // namespace roost::bench

#endif  // ROOST_BENCH_SUITE_DATA_H_
