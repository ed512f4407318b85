// KeySet: the keys a server under load holds, and their values, for
// bench/server_load.cc to ask for and to check the answers against. Either
// the pairs of `gen_records N SEED` (bench/generated_pairs.h), computed
// rather than read, or the records of a fixed-width binary file (the layout
// `roost-load build --input-format fixed` reads).
//
// Immutable once made: safe from any thread.
//
// Example:
//   KeySet keys(10000000, kDefaultSeed, 8);   // gen_records's pairs
//   std::string key;
//   keys.Key(41, &key);                       // the 42nd record's key
//   bool ok = keys.ValueOk(41, answer, /*exact=*/true);
#ifndef ROOST_BENCH_KEY_SET_H_
#define ROOST_BENCH_KEY_SET_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "bench/generated_pairs.h"

namespace roost::bench {

class KeySet {
 public:
  // The pairs of `gen_records N SEED`: 8-byte keys and 8-byte values, each
  // the 8 bytes of a 64-bit number as they lie in memory. Values are
  // expected to be value_size bytes long; ValueOk(exact) needs 8.
  KeySet(uint64_t n, uint64_t seed, size_t value_size)
      : n_(n), pairs_(seed), value_size_(value_size) {}
  // Fixed-width records: key_size key bytes, then value_size value bytes.
  KeySet(std::string records, size_t key_size, size_t value_size)
      : n_(records.size() / (key_size + value_size)),
        records_(std::move(records)),
        key_size_(key_size),
        value_size_(value_size) {}

  uint64_t size() const { return n_; }
  size_t value_size() const { return value_size_; }

  // Sets *out to key i; REQUIRES: i < size().
  void Key(uint64_t i, std::string* out) const {
    if (records_.empty()) {
      const uint64_t k = pairs_.Key(i);
      out->assign(reinterpret_cast<const char*>(&k), sizeof(k));
    } else {
      out->assign(records_.data() + i * (key_size_ + value_size_), key_size_);
    }
  }

  // Whether `v` is key i's value (exact) or merely as long as the values.
  bool ValueOk(uint64_t i, std::string_view v, bool exact) const {
    if (v.size() != value_size_) return false;
    if (!exact) return true;
    if (records_.empty()) {
      const uint64_t value = GeneratedPairs::ValueOf(pairs_.Key(i));
      return std::memcmp(v.data(), &value, sizeof(value)) == 0;
    }
    return v == std::string_view(
                    records_.data() + i * (key_size_ + value_size_) + key_size_,
                    value_size_);
  }

 private:
  uint64_t n_;
  GeneratedPairs pairs_{0};
  std::string records_;  // empty: the generated pairs
  size_t key_size_ = 8;
  size_t value_size_ = 8;
};

}  // namespace roost::bench

#endif  // ROOST_BENCH_KEY_SET_H_
