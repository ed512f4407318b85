// The pairs bench/gen_records.cc writes, as numbers: key i of seed S and its
// value. bench/server_load.cc computes the same keys instead of reading a
// file, so both take them from here.
//
// Example:
//   GeneratedPairs pairs(seed);
//   uint64_t key = pairs.Key(41);        // the 42nd record's key
//   uint64_t value = pairs.ValueOf(key); // and its value
// A key or value's 8 bytes are the number as it lies in memory.
#ifndef ROOST_BENCH_GENERATED_PAIRS_H_
#define ROOST_BENCH_GENERATED_PAIRS_H_

#include <cstdint>

namespace roost::bench {

// splitmix64's finalizer: a bijection on 64-bit integers.
inline uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// The seed every benchmark program (and script: bench/run.sh,
// server_bench.sh, load_bench.sh) takes by default.
inline constexpr uint64_t kDefaultSeed = 20261122;

class GeneratedPairs {
 public:
  explicit GeneratedPairs(uint64_t seed)
      : base_(Mix(seed ^ 0x726f6f73742d6c64ULL)) {}
  // Key i = Mix(base + i): distinct for distinct i, so the first N keys are
  // N distinct keys, and Key(j) for j >= N is not among them.
  uint64_t Key(uint64_t i) const { return Mix(base_ + i); }
  static uint64_t ValueOf(uint64_t key) {
    return Mix(key ^ 0x5bd1e9955bd1e995ULL);
  }

 private:
  uint64_t base_;
};

}  // namespace roost::bench

#endif  // ROOST_BENCH_GENERATED_PAIRS_H_
