// FilterBlock: reads the block table's filter (format 2.0), a
// cache-line-blocked Bloom filter over every key of the table, in place.
//
// A key's 64-bit hash (FilterHash) picks one 64-byte line of the filter and
// `num_probes` bits inside it; the builder (filter_block_builder.h) sets
// them, and a lookup whose bits are not all set misses without searching
// the index or reading a data block. One line per key means one cache-line
// read per lookup, whatever the number of probes, and the line can be
// prefetched as soon as the key is hashed (MultiGet hashes a whole batch
// first). The filter never says no for a key that was added; it says yes
// for a key that was not with a probability of about 1% at 10 bits a key
// (FilterFalsePositiveRate).
//
// Contents, as in docs/format/block_table.md ("The filter block"):
//
//   line*     64 bytes each, num_lines >= 1: bit b of a line is bit (b & 7)
//             of its byte (b >> 3)
//   params    kind: uint8 (1: this filter), num_probes: uint8 (1 to 30),
//             bits_per_key: uint8 (as asked, informational), 5 reserved
//             bytes (zero when written, not read)
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(FilterBlock filter,
//                          FilterBlock::Parse(path, contents));
//   const uint64_t h = FilterHash(key);
//   filter.Prefetch(h);
//   ...
//   if (!filter.MayContain(h)) return false;  // certainly not in the table
//
// A FilterBlock is a view: `contents` must outlive it. Thread-safe.
#ifndef ROOST_STORAGE_BLOCK_FILTER_BLOCK_H_
#define ROOST_STORAGE_BLOCK_FILTER_BLOCK_H_

#include <cstdint>
#include <cstring>
#include <string_view>

#include "absl/status/statusor.h"
#include "storage/hash.h"

namespace roost {

// The seed of the filter's hash (XXH3-64): "roost-bf".
inline constexpr uint64_t kFilterSeed = 0x726f6f73742d6266ULL;
inline constexpr uint32_t kFilterLineSize = 64;  // bytes, one cache line
inline constexpr uint32_t kFilterParamsSize = 8;
// The params' kind byte: a cache-line-blocked Bloom filter as above.
inline constexpr uint8_t kFilterKindBlockedBloom = 1;
inline constexpr int kMaxFilterProbes = 30;
// The most bits a key the options accept.
inline constexpr uint32_t kMaxFilterBitsPerKey = 32;

// The hash a key is filtered by.
inline uint64_t FilterHash(std::string_view key) {
  return Hash64(key, kFilterSeed);
}

// Lines for `keys` keys at `bits_per_key` (>= 1): ceil(keys * bits / 512),
// at least 1.
uint64_t FilterLines(uint64_t keys, uint32_t bits_per_key);

// The probes a key at `bits_per_key` (1 to kMaxFilterBitsPerKey): the fewest
// whose false positive rate is within 1% of the best for a 512-bit line
// (10 bits a key: 6 probes).
int FilterProbes(uint32_t bits_per_key);

// The expected false positive rate of a filter of `num_lines` lines holding
// `keys` keys with `num_probes` probes: keys fall into lines as a Poisson
// law, and a line holding j keys answers yes for a key not added with
// probability (1 - (1 - 1/512)^(j k))^k.
double FilterFalsePositiveRate(uint64_t keys, uint64_t num_lines,
                               int num_probes);

class FilterBlock {
 public:
  // Checks the params at the end of `contents` (the filter block without
  // its trailer) and the size; DataLoss naming `path` if they are wrong.
  static absl::StatusOr<FilterBlock> Parse(std::string_view path,
                                           std::string_view contents);

  // Starts reading the line `hash` falls in.
  void Prefetch(uint64_t hash) const { __builtin_prefetch(Line(hash)); }

  // False only if no key with this hash was added.
  bool MayContain(uint64_t hash) const {
    const char* line = Line(hash);
    uint64_t words[kFilterLineSize / 8];
    std::memcpy(words, line, sizeof(words));
    uint32_t h = static_cast<uint32_t>(hash);
    uint64_t all = 1;
    for (int i = 0; i < num_probes_; ++i) {
      const uint32_t bit = h >> 23;  // the top 9 bits: 0 to 511
      all &= words[bit >> 6] >> (bit & 63);
      h *= kProbeMultiplier;
    }
    return (all & 1) != 0;
  }

  uint64_t num_lines() const { return num_lines_; }
  int num_probes() const { return num_probes_; }
  uint32_t bits_per_key() const { return bits_per_key_; }
  size_t size_bytes() const { return num_lines_ * kFilterLineSize; }

  // The line of `hash` (Lemire's range reduction of all 64 bits) and the
  // step from one probe's 32 bits to the next (the golden ratio in 32
  // bits, as in RocksDB's FastLocalBloom). Shared with the builder.
  static uint64_t LineOf(uint64_t hash, uint64_t num_lines) {
    return FastRange64(hash, num_lines);
  }
  static constexpr uint32_t kProbeMultiplier = 0x9e3779b9;

 private:
  FilterBlock() = default;
  const char* Line(uint64_t hash) const {
    return lines_ + LineOf(hash, num_lines_) * kFilterLineSize;
  }

  const char* lines_ = nullptr;
  uint64_t num_lines_ = 0;
  int num_probes_ = 0;
  uint32_t bits_per_key_ = 0;
};

}  // namespace roost

#endif  // ROOST_STORAGE_BLOCK_FILTER_BLOCK_H_
