// Data sets shared by the benchmarks: uniformly random 8-byte keys with
// 8-byte values, and probe sequences of hits and misses.
#ifndef ROOST_BENCH_BENCH_DATA_H_
#define ROOST_BENCH_BENCH_DATA_H_

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace roost::bench {

// How many keys the benchmarks use: $ROOST_BENCH_KEYS, 10M by default.
inline size_t NumKeys() {
  const char* env = std::getenv("ROOST_BENCH_KEYS");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : 10'000'000;
}

inline uint64_t ValueOf(uint64_t key) { return key * 0x9e3779b97f4a7c15ULL; }

// `n` distinct uniformly random 8-byte keys (as uint64) and, for each, a
// probe order; the misses are random keys not in the set.
struct FixedData {
  std::vector<uint64_t> keys;    // in build order
  std::vector<uint64_t> hits;    // keys in random probe order
  std::vector<uint64_t> misses;  // absent keys

  static FixedData Make(size_t n, size_t probes) {
    FixedData d;
    std::mt19937_64 rng(20261122);
    d.keys.resize(n);
    for (auto& k : d.keys) k = rng();
    std::vector<uint64_t> sorted = d.keys;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    if (sorted.size() != n) {  // 64-bit collisions: practically never
      d.keys = sorted;
      std::shuffle(d.keys.begin(), d.keys.end(), rng);
    }
    d.hits.resize(probes);
    for (auto& h : d.hits) h = d.keys[rng() % d.keys.size()];
    while (d.misses.size() < probes) {
      const uint64_t k = rng();
      if (!std::binary_search(sorted.begin(), sorted.end(), k)) {
        d.misses.push_back(k);
      }
    }
    return d;
  }
};

inline std::string_view AsBytes(const uint64_t& v) {
  return {reinterpret_cast<const char*>(&v), sizeof(v)};
}

}  // namespace roost::bench

#endif  // ROOST_BENCH_BENCH_DATA_H_
