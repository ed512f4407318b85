// The pairs of bench/clients_bench.sh: text keys of 8 to 16 bytes and
// 100-byte values, computed from a record number in the same way by every
// load generator of that benchmark (C++ here; Python, Go and Java in
// bench/clients/), so that no program reads a key file and every answer can
// be checked.
//
//   key i    i in decimal, zero-padded to 8 + i % 9 digits ("00000007",
//            "000000010", ...): 8 to 16 bytes, distinct for distinct i
//            below 10^8 (two keys of one length are two numbers)
//   value    the key and ':', repeated, cut at 100 bytes
//
// bench/clients/pairs.py writes them as the TSV roost-load builds from and
// as the Redis protocol that `redis-cli --pipe` loads.
//
// Example:
//   std::string key = TextKey(41);  // "0000000000041" (13 bytes)
//   bool ok = value == TextValue(key);
#ifndef ROOST_BENCH_TEXT_PAIRS_H_
#define ROOST_BENCH_TEXT_PAIRS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace roost::bench {

inline constexpr size_t kTextValueSize = 100;
// Keys are distinct below this many records.
inline constexpr uint64_t kTextPairsMax = 100000000;

inline std::string TextKey(uint64_t i) {
  std::string digits = std::to_string(i);
  const size_t width = 8 + i % 9;
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

inline std::string TextValue(std::string_view key) {
  std::string value;
  value.reserve(kTextValueSize + key.size() + 1);
  while (value.size() < kTextValueSize) {
    value.append(key);
    value.push_back(':');
  }
  value.resize(kTextValueSize);
  return value;
}

}  // namespace roost::bench

#endif  // ROOST_BENCH_TEXT_PAIRS_H_
