// Data sets of the component benchmarks (cuckoo_bench, block_bench): the
// suite's uniform set of 8-byte keys with 8-byte values (suite_data.h), or
// a heavily skewed one that only block_bench's index searches need, and
// probe sequences of hits and misses.
#ifndef ROOST_BENCH_BENCH_DATA_H_
#define ROOST_BENCH_BENCH_DATA_H_

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "bench/generated_pairs.h"
#include "bench/suite_data.h"

namespace roost::bench {

// How many keys the benchmarks use: $ROOST_BENCH_KEYS, 10M by default.
inline size_t NumKeys() {
  const char* env = std::getenv("ROOST_BENCH_KEYS");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : 10'000'000;
}

// A key's value: the suite's (bench/generated_pairs.h).
inline uint64_t ValueOf(uint64_t key) { return GeneratedPairs::ValueOf(key); }

// `n` distinct 8-byte keys (as uint64) and, for each, a probe order; the
// misses are keys not in the set.
struct FixedData {
  std::vector<uint64_t> keys;    // in build order
  std::vector<uint64_t> hits;    // keys in random probe order
  std::vector<uint64_t> misses;  // absent keys

  // The keys and values of the suite's uniform data set (SuiteData) of `n`
  // keys, so that the component benchmarks and the suite measure the same
  // pairs: key i is GeneratedPairs::Key(i), and the misses are keys i >= n
  // (distinct from the set, since Key is a bijection).
  static FixedData Make(size_t n, size_t probes) {
    FixedData d;
    const SuiteData suite(DataSet::kUniform, n, kDefaultSeed);
    d.keys.resize(n);
    for (size_t i = 0; i < n; ++i) d.keys[i] = suite.Word(i);
    std::mt19937_64 rng(kDefaultSeed);
    d.hits.resize(probes);
    for (auto& h : d.hits) h = d.keys[rng() % d.keys.size()];
    d.misses.resize(probes);
    for (size_t j = 0; j < probes; ++j) d.misses[j] = suite.Word(n + j);
    return d;
  }

  // As Make(), but the keys are the big-endian encodings (see
  // BigEndianKey) of floor(u^4 * 2^64) for u uniform in [0, 1): dense near
  // zero and sparse above, so the gaps between sorted keys are very uneven.
  // Draws are deduplicated and topped up until there are `n` distinct keys.
  // The misses are absent keys drawn from the same distribution.
  static FixedData MakeSkewed(size_t n, size_t probes) {
    FixedData d;
    std::mt19937_64 rng(20261123);
    auto draw = [&rng] {
      const double u = static_cast<double>(rng() >> 11) * 0x1p-53;
      const double x = u * u * u * u * 0x1p64;  // below 2^64: u < 1
      return static_cast<uint64_t>(x);
    };
    std::vector<uint64_t> numbers;  // sorted, distinct
    while (numbers.size() < n) {
      for (size_t i = numbers.size(); i < n; ++i) numbers.push_back(draw());
      std::sort(numbers.begin(), numbers.end());
      numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
    }
    d.keys.reserve(n);
    for (const uint64_t x : numbers) d.keys.push_back(BigEndianKey(x));
    std::shuffle(d.keys.begin(), d.keys.end(), rng);
    d.hits.resize(probes);
    for (auto& h : d.hits) h = d.keys[rng() % d.keys.size()];
    while (d.misses.size() < probes) {
      const uint64_t x = draw();
      if (!std::binary_search(numbers.begin(), numbers.end(), x)) {
        d.misses.push_back(BigEndianKey(x));
      }
    }
    return d;
  }

  // The uint64 whose in-memory bytes (AsBytes) are the big-endian encoding
  // of `x`, so that bytewise key order is numeric order of x. Its own
  // inverse.
  static uint64_t BigEndianKey(uint64_t x) {
    if constexpr (std::endian::native == std::endian::little) {
      return __builtin_bswap64(x);
    } else {
      return x;
    }
  }
};

// The scratch directory of one benchmark program: $ROOST_BENCH_DIR, or
// <temp dir>/`default_name`, emptied and created at the first call.
inline const std::filesystem::path& BenchScratchDir(const char* default_name) {
  static const std::filesystem::path dir = [default_name] {
    const char* env = std::getenv("ROOST_BENCH_DIR");
    std::filesystem::path d =
        env != nullptr ? std::filesystem::path(env)
                       : std::filesystem::temp_directory_path() / default_name;
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// Prints "program: what" and exits 1: a benchmark that saw a wrong answer or
// could not set up must not report figures.
[[noreturn]] inline void DieWith(const char* program, const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", program, what.c_str());
  std::exit(1);
}

inline std::string_view AsBytes(const uint64_t& v) {
  return {reinterpret_cast<const char*>(&v), sizeof(v)};
}

// `keys` in the bytewise order of their bytes (AsBytes): the order a sorted
// table's builder takes them in.
inline std::vector<uint64_t> SortedBytewise(std::vector<uint64_t> keys) {
  std::sort(keys.begin(), keys.end(), [](uint64_t a, uint64_t b) {
    return FixedData::BigEndianKey(a) < FixedData::BigEndianKey(b);
  });
  return keys;
}

}  // namespace roost::bench

#endif  // ROOST_BENCH_BENCH_DATA_H_
