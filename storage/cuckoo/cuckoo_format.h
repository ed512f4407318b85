// The cuckoo table's file header: every field a reader needs, encoded in a
// fixed 320-byte header at offset 0 and validated against the file before
// any offset in it is trusted. docs/format/cuckoo_table.md has the byte map.
//
//   header  (320 bytes, ends with the XXH3-64 of its first 312 bytes)
//   buckets (64-byte aligned; num_blocks blocks of block_size bytes)
//   overflow bitmap (overflow_bits bits per block)
//   heap    (heap layout only: varint key_len, varint value_len, key, value)
#ifndef ROOST_STORAGE_CUCKOO_CUCKOO_FORMAT_H_
#define ROOST_STORAGE_CUCKOO_CUCKOO_FORMAT_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "storage/format.h"

namespace roost {

inline constexpr std::string_view kCuckooMagic = "roostCK\x01";
inline constexpr uint16_t kCuckooMajorVersion = 1;
inline constexpr uint16_t kCuckooMinorVersion = 0;
inline constexpr uint32_t kCuckooHeaderSize = 320;
inline constexpr int kMaxHashFunctions = 8;
// Heap-layout bucket: fingerprint fixed32, then heap offset fixed64.
inline constexpr uint32_t kHeapBucketSize = 12;
// The largest inline bucket (key width + value width) the builder writes;
// wider fixed-width pairs use the heap layout.
inline constexpr uint32_t kMaxInlineBucketSize = 1024;

enum class CuckooLayout : uint8_t {
  // Every key and every value has one width; both sit in the bucket.
  kInline = 0,
  // Buckets hold a fingerprint and the offset of a heap record.
  kHeap = 1,
};

std::string_view CuckooLayoutName(CuckooLayout layout);

// How buckets group into cuckoo blocks: as many buckets as fit one cache line,
// or one bucket per block when a bucket is larger than a line.
struct BlockGeometry {
  uint32_t buckets_per_block;
  uint32_t block_size;  // bytes from one block to the next
};
BlockGeometry BlockGeometryFor(uint32_t bucket_size);

struct CuckooHeader {
  uint16_t major_version = kCuckooMajorVersion;
  uint16_t minor_version = kCuckooMinorVersion;
  uint64_t file_size = 0;
  CuckooLayout layout = CuckooLayout::kInline;
  uint8_t num_hashes = 2;
  uint8_t overflow_bits = 2;  // per block: 1, 2, 4 or 8
  uint32_t buckets_per_block = 0;
  uint32_t bucket_size = 0;
  uint32_t block_size = 0;
  uint32_t key_width = 0;    // inline layout; 0 in the heap layout
  uint32_t value_width = 0;  // inline layout; 0 in the heap layout
  uint64_t num_blocks = 0;
  uint64_t num_keys = 0;
  uint32_t min_key_length = 0;
  uint32_t max_key_length = 0;
  uint32_t min_value_length = 0;
  uint32_t max_value_length = 0;
  uint32_t requested_utilization_ppm = 0;  // parts per million
  uint32_t built_utilization_ppm = 0;      // after any retries
  Region buckets;
  Region overflow;
  Region heap;
  std::array<uint64_t, kMaxHashFunctions> seeds{};
  // keys_per_hash[i]: keys found by probing the block of hash function i,
  // i.e. after i + 1 block probes. The probe-count distribution.
  std::array<uint64_t, kMaxHashFunctions> keys_per_hash{};

  // The kCuckooHeaderSize bytes of the header, checksum included.
  std::string Encode() const;

  // Decodes and validates the header at the start of `file`: magic number,
  // major version, header checksum, then every field and region against
  // file.size(). `path` only names the file in errors (DataLoss for a corrupt
  // or truncated file, FailedPrecondition for an unsupported version).
  static absl::StatusOr<CuckooHeader> Decode(std::string_view path,
                                             std::string_view file);

  // The buckets, overflow and heap regions (in that order) of the header
  // in `header`, the first kCuckooHeaderSize bytes of a file, checking only
  // the magic number, the major version and the header checksum: for a
  // reader that sees the file go by before it has all of it
  // (RegionStreamCheck). nullopt when those checks fail.
  static std::optional<std::array<Region, 3>> RegionsOf(
      std::string_view header);
};

}  // namespace roost

namespace roost {

// The hashing shared by the cuckoo writer and reader. Hash function i of a
// key is XXH3-64 with seeds[i]; its candidate block is FastRange64 of that
// hash onto num_blocks (which reads the high bits). The low bits of hash 0
// give the heap layout's fingerprint and the key's bit in a block's overflow
// mask.
inline uint32_t CuckooFingerprint(uint64_t hash0) {
  return static_cast<uint32_t>(hash0);
}
inline uint32_t CuckooOverflowTag(uint64_t hash0, uint32_t overflow_bits) {
  return static_cast<uint32_t>(hash0) & (overflow_bits - 1);
}
// The bit of `tag` for `block` in the overflow bitmap: byte and mask.
inline uint64_t CuckooOverflowByte(uint64_t block, uint32_t overflow_bits) {
  return (block * overflow_bits) >> 3;
}
inline uint8_t CuckooOverflowMask(uint64_t block, uint32_t overflow_bits,
                                  uint32_t tag) {
  return static_cast<uint8_t>(1u << (((block * overflow_bits) & 7) + tag));
}
// The seed of hash function `function` in a builder's attempt `attempt` (0
// first, then one per retry), derived from its master seed (splitmix64);
// distinct for every attempt and function. Attempt 0's seeds are those of
// builds before retries got seeds of their own.
uint64_t CuckooSeed(uint64_t master_seed, int attempt, int function);

}  // namespace roost

#endif  // ROOST_STORAGE_CUCKOO_CUCKOO_FORMAT_H_
