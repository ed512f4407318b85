#include "storage/cuckoo/cuckoo_format.h"

#include <cstring>

#include "storage/coding.h"
#include "storage/hash.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// Byte offsets of the header fields. See docs/format/cuckoo_table.md.
constexpr int kMagicOffset = 0;
constexpr int kMajorOffset = 8;
constexpr int kMinorOffset = 10;
constexpr int kHeaderSizeOffset = 12;
constexpr int kFileSizeOffset = 16;
constexpr int kLayoutOffset = 24;
constexpr int kNumHashesOffset = 25;
constexpr int kOverflowBitsOffset = 26;
constexpr int kBucketsPerBlockOffset = 28;
constexpr int kBucketSizeOffset = 32;
constexpr int kBlockSizeOffset = 36;
constexpr int kKeyWidthOffset = 40;
constexpr int kValueWidthOffset = 44;
constexpr int kNumBlocksOffset = 48;
constexpr int kNumKeysOffset = 56;
constexpr int kMinKeyOffset = 64;
constexpr int kMaxKeyOffset = 68;
constexpr int kMinValueOffset = 72;
constexpr int kMaxValueOffset = 76;
constexpr int kRequestedUtilOffset = 80;
constexpr int kBuiltUtilOffset = 84;
constexpr int kBucketsRegionOffset = 88;
constexpr int kOverflowRegionOffset = 112;
constexpr int kHeapRegionOffset = 136;
constexpr int kSeedsOffset = 160;
constexpr int kKeysPerHashOffset = 224;
constexpr int kChecksumOffset = 312;
static_assert(kKeysPerHashOffset + 8 * kMaxHashFunctions <= kChecksumOffset);
static_assert(kChecksumOffset + 8 == kCuckooHeaderSize);

constexpr uint32_t kPpm = 1000000;

}  // namespace

std::string_view CuckooLayoutName(CuckooLayout layout) {
  return layout == CuckooLayout::kInline ? "inline" : "heap";
}

BlockGeometry BlockGeometryFor(uint32_t bucket_size) {
  if (bucket_size == 0 || bucket_size > kCacheLineSize) {
    return {1, bucket_size};
  }
  return {kCacheLineSize / bucket_size, kCacheLineSize};
}

std::string CuckooHeader::Encode() const {
  std::string out(kCuckooHeaderSize, '\0');
  char* p = out.data();
  std::memcpy(p + kMagicOffset, kCuckooMagic.data(), kCuckooMagic.size());
  EncodeFixed16(p + kMajorOffset, major_version);
  EncodeFixed16(p + kMinorOffset, minor_version);
  EncodeFixed32(p + kHeaderSizeOffset, kCuckooHeaderSize);
  EncodeFixed64(p + kFileSizeOffset, file_size);
  p[kLayoutOffset] = static_cast<char>(layout);
  p[kNumHashesOffset] = static_cast<char>(num_hashes);
  p[kOverflowBitsOffset] = static_cast<char>(overflow_bits);
  EncodeFixed32(p + kBucketsPerBlockOffset, buckets_per_block);
  EncodeFixed32(p + kBucketSizeOffset, bucket_size);
  EncodeFixed32(p + kBlockSizeOffset, block_size);
  EncodeFixed32(p + kKeyWidthOffset, key_width);
  EncodeFixed32(p + kValueWidthOffset, value_width);
  EncodeFixed64(p + kNumBlocksOffset, num_blocks);
  EncodeFixed64(p + kNumKeysOffset, num_keys);
  EncodeFixed32(p + kMinKeyOffset, min_key_length);
  EncodeFixed32(p + kMaxKeyOffset, max_key_length);
  EncodeFixed32(p + kMinValueOffset, min_value_length);
  EncodeFixed32(p + kMaxValueOffset, max_value_length);
  EncodeFixed32(p + kRequestedUtilOffset, requested_utilization_ppm);
  EncodeFixed32(p + kBuiltUtilOffset, built_utilization_ppm);
  buckets.EncodeTo(p + kBucketsRegionOffset);
  overflow.EncodeTo(p + kOverflowRegionOffset);
  heap.EncodeTo(p + kHeapRegionOffset);
  for (int i = 0; i < kMaxHashFunctions; ++i) {
    EncodeFixed64(p + kSeedsOffset + 8 * i, seeds[i]);
    EncodeFixed64(p + kKeysPerHashOffset + 8 * i, keys_per_hash[i]);
  }
  EncodeFixed64(p + kChecksumOffset, Checksum64(p, kChecksumOffset));
  return out;
}

std::optional<std::array<Region, 3>> CuckooHeader::RegionsOf(
    std::string_view header) {
  if (header.size() < kCuckooHeaderSize ||
      header.substr(0, kCuckooMagic.size()) != kCuckooMagic) {
    return std::nullopt;
  }
  const char* p = header.data();
  if (DecodeFixed16(p + kMajorOffset) != kCuckooMajorVersion ||
      DecodeFixed64(p + kChecksumOffset) != Checksum64(p, kChecksumOffset)) {
    return std::nullopt;
  }
  return std::array<Region, 3>{Region::DecodeFrom(p + kBucketsRegionOffset),
                               Region::DecodeFrom(p + kOverflowRegionOffset),
                               Region::DecodeFrom(p + kHeapRegionOffset)};
}

absl::StatusOr<CuckooHeader> CuckooHeader::Decode(std::string_view path,
                                                  std::string_view file) {
  auto corrupt = [&](std::string_view what) {
    return CorruptionError(path, what);
  };
  if (file.size() < kCuckooMagic.size() ||
      file.substr(0, kCuckooMagic.size()) != kCuckooMagic) {
    return corrupt("bad magic number (not a roost cuckoo table)");
  }
  if (file.size() < kCuckooHeaderSize) {
    return corrupt(StrCat("truncated header (", file.size(), " bytes, need ",
                          kCuckooHeaderSize, ")"));
  }
  const char* p = file.data();
  CuckooHeader h;
  h.major_version = DecodeFixed16(p + kMajorOffset);
  h.minor_version = DecodeFixed16(p + kMinorOffset);
  if (h.major_version != kCuckooMajorVersion) {
    return absl::FailedPreconditionError(StrCat(
        "table ", path, " has format major version ",
        static_cast<int>(h.major_version), "; this reader understands only ",
        static_cast<int>(kCuckooMajorVersion)));
  }
  if (DecodeFixed64(p + kChecksumOffset) != Checksum64(p, kChecksumOffset)) {
    return corrupt("header checksum mismatch");
  }
  // A newer minor version only adds meaning to fields this reader ignores,
  // so it is read as is.
  if (DecodeFixed32(p + kHeaderSizeOffset) != kCuckooHeaderSize) {
    return corrupt("bad header size");
  }
  h.file_size = DecodeFixed64(p + kFileSizeOffset);
  h.layout = static_cast<CuckooLayout>(p[kLayoutOffset]);
  h.num_hashes = static_cast<uint8_t>(p[kNumHashesOffset]);
  h.overflow_bits = static_cast<uint8_t>(p[kOverflowBitsOffset]);
  h.buckets_per_block = DecodeFixed32(p + kBucketsPerBlockOffset);
  h.bucket_size = DecodeFixed32(p + kBucketSizeOffset);
  h.block_size = DecodeFixed32(p + kBlockSizeOffset);
  h.key_width = DecodeFixed32(p + kKeyWidthOffset);
  h.value_width = DecodeFixed32(p + kValueWidthOffset);
  h.num_blocks = DecodeFixed64(p + kNumBlocksOffset);
  h.num_keys = DecodeFixed64(p + kNumKeysOffset);
  h.min_key_length = DecodeFixed32(p + kMinKeyOffset);
  h.max_key_length = DecodeFixed32(p + kMaxKeyOffset);
  h.min_value_length = DecodeFixed32(p + kMinValueOffset);
  h.max_value_length = DecodeFixed32(p + kMaxValueOffset);
  h.requested_utilization_ppm = DecodeFixed32(p + kRequestedUtilOffset);
  h.built_utilization_ppm = DecodeFixed32(p + kBuiltUtilOffset);
  h.buckets = Region::DecodeFrom(p + kBucketsRegionOffset);
  h.overflow = Region::DecodeFrom(p + kOverflowRegionOffset);
  h.heap = Region::DecodeFrom(p + kHeapRegionOffset);
  for (int i = 0; i < kMaxHashFunctions; ++i) {
    h.seeds[i] = DecodeFixed64(p + kSeedsOffset + 8 * i);
    h.keys_per_hash[i] = DecodeFixed64(p + kKeysPerHashOffset + 8 * i);
  }

  // Sanity of every field, in the order a reader depends on them.
  if (h.file_size != file.size()) {
    return corrupt(StrCat("file is ", file.size(),
                          " bytes but its header says ", h.file_size,
                          " (truncated or appended to)"));
  }
  if (h.layout != CuckooLayout::kInline && h.layout != CuckooLayout::kHeap) {
    return corrupt("unknown bucket layout");
  }
  if (h.num_hashes < 2 || h.num_hashes > kMaxHashFunctions) {
    return corrupt("bad number of hash functions");
  }
  if (h.overflow_bits != 1 && h.overflow_bits != 2 && h.overflow_bits != 4 &&
      h.overflow_bits != 8) {
    return corrupt("bad overflow bits per block");
  }
  const uint32_t expected_bucket = h.layout == CuckooLayout::kInline
                                       ? h.key_width + h.value_width
                                       : kHeapBucketSize;
  if (h.layout == CuckooLayout::kInline &&
      uint64_t{h.key_width} + h.value_width > kMaxInlineBucketSize) {
    return corrupt("bad key or value width");
  }
  if (h.layout == CuckooLayout::kHeap &&
      (h.key_width != 0 || h.value_width != 0)) {
    // Widths mean something only in the inline layout; a reader that
    // trusted them in the heap layout would refuse keys the table holds.
    return corrupt("key or value width set in the heap layout");
  }
  if (h.bucket_size != expected_bucket || h.bucket_size == 0) {
    return corrupt("bad bucket size");
  }
  const BlockGeometry g = BlockGeometryFor(h.bucket_size);
  if (h.buckets_per_block != g.buckets_per_block ||
      h.block_size != g.block_size) {
    return corrupt("bad block geometry");
  }
  if ((h.num_keys == 0) != (h.num_blocks == 0)) {
    return corrupt("bad number of blocks");
  }
  if (h.num_blocks > file.size() / h.block_size ||
      h.num_keys > h.num_blocks * h.buckets_per_block) {
    return corrupt("bad number of blocks or keys");
  }
  uint64_t placed = 0;
  for (int i = 0; i < kMaxHashFunctions; ++i) {
    if (i >= h.num_hashes && h.keys_per_hash[i] != 0) {
      return corrupt("keys counted for an unused hash function");
    }
    if (h.keys_per_hash[i] > h.num_keys) {
      return corrupt("bad probe-count distribution");
    }
    placed += h.keys_per_hash[i];
  }
  if (placed != h.num_keys) return corrupt("bad probe-count distribution");
  if (h.min_key_length > h.max_key_length ||
      h.min_value_length > h.max_value_length) {
    return corrupt("bad key or value length bounds");
  }
  if (h.layout == CuckooLayout::kInline && h.num_keys > 0 &&
      (h.min_key_length != h.key_width || h.max_key_length != h.key_width ||
       h.min_value_length != h.value_width ||
       h.max_value_length != h.value_width)) {
    return corrupt("inline lengths disagree with widths");
  }
  if (h.requested_utilization_ppm > kPpm || h.built_utilization_ppm > kPpm) {
    return corrupt("bad utilization");
  }

  // Regions: in file order, inside the file, of the sizes the fields imply.
  if (h.buckets.offset != kCuckooHeaderSize ||
      h.buckets.size != h.num_blocks * h.block_size ||
      !h.buckets.IsWithin(file.size())) {
    return corrupt("bad buckets region");
  }
  const uint64_t overflow_size = (h.num_blocks * h.overflow_bits + 7) / 8;
  if (h.overflow.offset != h.buckets.end() ||
      h.overflow.size != overflow_size || !h.overflow.IsWithin(file.size())) {
    return corrupt("bad overflow region");
  }
  if (h.heap.offset != h.overflow.end() || !h.heap.IsWithin(file.size()) ||
      (h.layout == CuckooLayout::kInline && h.heap.size != 0) ||
      h.heap.end() != file.size()) {
    return corrupt("bad heap region");
  }
  return h;
}

}  // namespace roost

namespace roost {

uint64_t CuckooSeed(uint64_t master_seed, int attempt, int function) {
  const uint64_t step =
      static_cast<uint64_t>(attempt) * kMaxHashFunctions + function + 1;
  uint64_t z = master_seed + 0x9e3779b97f4a7c15ULL * step;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace roost
