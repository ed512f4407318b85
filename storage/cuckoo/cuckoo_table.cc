#include "storage/cuckoo/cuckoo_table.h"

#include <fmt/format.h>
#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "storage/coding.h"
#include "storage/hash.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// Lookups MultiGet keeps a block prefetched for: enough cache misses under
// way to cover memory latency, few enough that the line fill buffers are
// not overrun and their blocks stay in L1 until probed. 16, 20, 24 and 32
// measured; 20 was best with 4 KiB pages, within noise of 24 with huge
// pages.
constexpr size_t kWindow = 20;
// The window's ring buffer: a power of two above kWindow.
constexpr size_t kRing = 32;
static_assert(kRing >= kWindow && (kRing & (kRing - 1)) == 0);

inline void PrefetchLine(const void* p) { __builtin_prefetch(p, 0, 3); }

// The hot helpers of Get and MultiGet are inlined into them, so that the
// branches on the table's layout and widths are hoisted out of the loops.
#define ROOST_ALWAYS_INLINE inline __attribute__((always_inline))

// CuckooTable::MatchInline8x8 with two 32-byte loads and compares instead of
// four 8-byte ones; bucket s is bit 2s. A probe whose block has not arrived
// yet holds a load-queue entry for each of its loads while it waits, and
// those entries are what keeps the next lookups' loads from issuing: with
// half the loads MultiGet measured 5-10% faster. Not always_inline (it
// could not be inlined into code compiled without AVX2): the function
// compiled for AVX2, MultiGetInline8x8Avx2, is flattened and takes it in.
__attribute__((target("avx2"))) inline uint32_t MatchInline8x8Avx2(
    const char* block, uint64_t want) {
  const __m256i w = _mm256_set1_epi64x(static_cast<int64_t>(want));
  const __m256i lo =
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block));
  const __m256i hi =
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 32));
  // Lanes 0 and 2 of each half are keys, 1 and 3 their values.
  const int lo_bits =
      _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(lo, w)));
  const int hi_bits =
      _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(hi, w)));
  return static_cast<uint32_t>((lo_bits & 5) | ((hi_bits & 5) << 4));
}

}  // namespace

absl::StatusOr<std::unique_ptr<CuckooTable>> CuckooTable::Open(
    const std::string& path, const TableReadOptions& options) {
  ROOST_ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> file,
                         MappedFile::Open(path, options.load_mode));
  ROOST_ASSIGN_OR_RETURN(CuckooHeader header,
                         CuckooHeader::Decode(path, file->data()));
  std::unique_ptr<CuckooTable> table(
      new CuckooTable(std::move(file), header, options.vector_compares));
  if (options.verify_checksums) {
    ROOST_RETURN_IF_ERROR(table->VerifyChecksums());
  }
  if (options.advise_random) table->file_->AdviseRandomAccess();
  return table;
}

CuckooTable::CuckooTable(std::unique_ptr<MappedFile> file,
                         const CuckooHeader& header, bool vector_compares)
    : file_(std::move(file)), header_(header) {
  const char* base = file_->data().data();
  buckets_ = base + header_.buckets.offset;
  overflow_ = reinterpret_cast<const uint8_t*>(base + header_.overflow.offset);
  heap_ = base + header_.heap.offset;
  heap_size_ = header_.heap.size;
  num_blocks_ = header_.num_blocks;
  block_size_ = header_.block_size;
  bucket_size_ = header_.bucket_size;
  buckets_per_block_ = header_.buckets_per_block;
  key_width_ = header_.key_width;
  overflow_bits_ = header_.overflow_bits;
  num_hashes_ = header_.num_hashes;
  shape_ = header_.layout == CuckooLayout::kHeap ? kHeapShape
           : key_width_ == 8 && bucket_size_ == 16 && num_blocks_ > 0
               ? kInline8x8Shape
               : kInlineShape;
  for (int i = 0; i < kMaxHashFunctions; ++i) seeds_[i] = header_.seeds[i];
  avx2_ = vector_compares && __builtin_cpu_supports("avx2");
}

absl::Status CuckooTable::VerifyChecksums() const {
  const std::string_view data = file_->data();
  ROOST_RETURN_IF_ERROR(VerifyRegion(path(), data, header_.buckets, "bucket"));
  ROOST_RETURN_IF_ERROR(
      VerifyRegion(path(), data, header_.overflow, "overflow bitmap"));
  return VerifyRegion(path(), data, header_.heap, "heap");
}

// Lookups are compiled once per bucket shape, so that the common fixed-width
// case (8-byte keys, 8-byte values) works with constant widths: XXH3 on a
// constant length of 8 folds to a few instructions, and the four bucket
// compares unroll.
template <CuckooTable::Shape kShape>
ROOST_ALWAYS_INLINE bool CuckooTable::CanHold(std::string_view key) const {
  if (num_blocks_ == 0) return false;
  if constexpr (kShape == kHeapShape) return key.size() <= max_key_length();
  if constexpr (kShape == kInline8x8Shape) return key.size() == 8;
  return key.size() == key_width_;
}

template <CuckooTable::Shape kShape>
ROOST_ALWAYS_INLINE uint64_t CuckooTable::HashKey(std::string_view key,
                                                  int function) const {
  if constexpr (kShape == kInline8x8Shape) {
    return XXH3_64bits_withSeed(key.data(), 8, seeds_[function]);
  }
  return Hash64(key, seeds_[function]);
}

template <CuckooTable::Shape kShape>
ROOST_ALWAYS_INLINE uint64_t CuckooTable::BlockIndex(std::string_view key,
                                                     int function,
                                                     uint64_t hash0) const {
  const uint64_t h = function == 0 ? hash0 : HashKey<kShape>(key, function);
  return FastRange64(h, num_blocks_);
}

bool CuckooTable::MatchHeapRecord(const char* bucket, std::string_view key,
                                  std::string_view* value) const {
  // Every length and offset here comes from the file: bound each by the heap.
  const uint64_t offset = DecodeFixed64(bucket + 4);
  if (offset >= heap_size_) return false;
  const char* p = heap_ + offset;
  const char* limit = heap_ + heap_size_;
  uint64_t key_length, value_length;
  p = DecodeVarint64(p, limit, &key_length);
  if (p == nullptr) return false;
  p = DecodeVarint64(p, limit, &value_length);
  if (p == nullptr || key_length != key.size()) return false;
  const auto room = static_cast<uint64_t>(limit - p);
  if (key_length > room || value_length > room - key_length) return false;
  // (An empty key may have a null data(), which memcmp must not be given.)
  if (!key.empty() && std::memcmp(p, key.data(), key.size()) != 0) {
    return false;
  }
  *value = std::string_view(p + key_length, value_length);
  return true;
}

absl::Status CuckooTable::ForEachPair(const PairVisitor& visit) const {
  if (header_.num_keys == 0) return absl::OkStatus();
  if (shape_ != kHeapShape) {
    const uint32_t value_width = bucket_size_ - key_width_;
    for (uint64_t b = 0; b < num_blocks_; ++b) {
      for (uint32_t s = 0; s < buckets_per_block_; ++s) {
        const char* bucket = Block(b) + s * bucket_size_;
        ROOST_RETURN_IF_ERROR(
            visit(std::string_view(bucket, key_width_),
                  std::string_view(bucket + key_width_, value_width)));
      }
    }
    return absl::OkStatus();
  }
  // Records back to back from heap offset 0 (docs/format/cuckoo_table.md,
  // "Heap"), every length bounded by the heap.
  const char* p = heap_;
  const char* limit = heap_ + heap_size_;
  while (p < limit) {
    const uint64_t at = static_cast<uint64_t>(p - heap_);
    uint64_t key_length, value_length;
    p = DecodeVarint64(p, limit, &key_length);
    if (p != nullptr) p = DecodeVarint64(p, limit, &value_length);
    const uint64_t room = p == nullptr ? 0 : static_cast<uint64_t>(limit - p);
    if (p == nullptr || key_length > room || value_length > room - key_length) {
      return absl::DataLossError(StrCat(file_->path(), ": the heap record at ",
                                        at, " does not fit the heap"));
    }
    ROOST_RETURN_IF_ERROR(
        visit(std::string_view(p, key_length),
              std::string_view(p + key_length, value_length)));
    p += key_length + value_length;
  }
  return absl::OkStatus();
}

template <CuckooTable::Shape kShape>
ROOST_ALWAYS_INLINE bool CuckooTable::ProbeBlock(
    const char* block, uint32_t fingerprint, std::string_view key,
    std::string_view* value) const {
  if constexpr (kShape == kHeapShape) {
    for (uint32_t s = 0; s < buckets_per_block_; ++s) {
      const char* bucket = block + s * kHeapBucketSize;
      if (DecodeFixed32(bucket) == fingerprint &&
          MatchHeapRecord(bucket, key, value)) {
        return true;
      }
    }
    return false;
  } else {
    // Compare every bucket and pick the match afterwards: a fixed number of
    // compares per block, with no branch on the data until the end, so the
    // CPU can run ahead into the next lookup while this block is in flight.
    constexpr bool k8x8 = kShape == kInline8x8Shape;
    const uint32_t bucket_size = k8x8 ? 16 : bucket_size_;
    const uint32_t buckets = k8x8 ? 4 : buckets_per_block_;
    const uint32_t key_width = k8x8 ? 8 : key_width_;
    uint64_t match = 0;
    if constexpr (k8x8) {
      match = MatchInline8x8(block, DecodeFixed64(key.data()));
    } else if (key_width == 8) {
      const uint64_t want = DecodeFixed64(key.data());
      for (uint32_t s = 0; s < buckets; ++s) {
        match |= static_cast<uint64_t>(DecodeFixed64(block + s * bucket_size) ==
                                       want)
                 << s;
      }
    } else {
      for (uint32_t s = 0; s < buckets; ++s) {
        // key_width 0 (a table whose one key is empty): every bucket
        // matches, and memcmp is not given a null pointer.
        match |= static_cast<uint64_t>(key_width == 0 ||
                                       std::memcmp(block + s * bucket_size,
                                                   key.data(), key_width) == 0)
                 << s;
      }
    }
    if (match == 0) return false;
    const char* bucket = block + std::countr_zero(match) * bucket_size;
    *value = std::string_view(bucket + key_width, bucket_size - key_width);
    return true;
  }
}

template <CuckooTable::Shape kShape>
ROOST_ALWAYS_INLINE bool CuckooTable::GetImpl(std::string_view key,
                                              uint64_t hash0, int first,
                                              std::string_view* value,
                                              int* blocks_touched) const {
  int touched = first;
  bool found = false;
  const uint32_t fingerprint = CuckooFingerprint(hash0);
  const uint32_t tag = CuckooOverflowTag(hash0, overflow_bits_);
  for (int i = first; i < num_hashes_; ++i) {
    const uint64_t block = BlockIndex<kShape>(key, i, hash0);
    ++touched;
    if (ProbeBlock<kShape>(Block(block), fingerprint, key, value)) {
      found = true;
      break;
    }
    if (!Overflowed(block, tag)) break;
  }
  if (blocks_touched != nullptr) *blocks_touched = touched;
  return found;
}

__attribute__((noinline, flatten)) bool CuckooTable::GetInline8x8After(
    std::string_view key, uint64_t hash0, std::string_view* value,
    int* blocks_touched) const {
  return GetImpl<kInline8x8Shape>(key, hash0, 1, value, blocks_touched);
}

__attribute__((noinline, flatten)) bool CuckooTable::GetAnyShape(
    std::string_view key, std::string_view* value, int* blocks_touched) const {
  auto get = [&]<Shape kShape>() {
    if (!CanHold<kShape>(key)) {
      if (blocks_touched != nullptr) *blocks_touched = 0;
      return false;
    }
    return GetImpl<kShape>(key, HashKey<kShape>(key, 0), 0, value,
                           blocks_touched);
  };
  switch (shape_) {
    case kInline8x8Shape:
      return get.template operator()<kInline8x8Shape>();
    case kInlineShape:
      return get.template operator()<kInlineShape>();
    case kHeapShape:
      break;
  }
  return get.template operator()<kHeapShape>();
}

absl::Status CuckooTable::MultiGet(std::span<const std::string_view> keys,
                                   std::span<LookupResult> results,
                                   ValuePins* /*pins*/) const {
  if (keys.size() == 1) {
    int blocks = 0;
    results[0].found = Get(keys[0], &results[0].value, &blocks);
    results[0].blocks_touched = static_cast<uint8_t>(blocks);
  } else {
    MultiGet(keys, results);
  }
  return absl::OkStatus();
}

size_t CuckooTable::RequestPages(std::span<const std::string_view> keys) const {
  if (file_->mode() != LoadMode::kMmap || num_blocks_ == 0) return 0;
  // A record is two varints and its bytes, at most this long.
  const uint64_t longest =
      20 + uint64_t{header_.max_key_length} + header_.max_value_length;
  auto request = [&]<Shape kShape>() {
    struct Pending {
      size_t index;  // into keys
      uint64_t hash0;
      uint64_t block;
      int function;
    };
    PageRequests pages;
    // A block, and the overflow bit a lookup reads when the key is not
    // there and another hash function is left (a table of one has no
    // overflow bits).
    auto add_block = [&](const Pending& p) {
      pages.Add(Block(p.block), block_size_);
      if (p.function + 1 < num_hashes_) {
        pages.Add(reinterpret_cast<const char*>(overflow_) +
                      CuckooOverflowByte(p.block, overflow_bits_),
                  1);
      }
    };
    std::vector<Pending> pending, next;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!CanHold<kShape>(keys[i])) continue;
      const uint64_t hash0 = HashKey<kShape>(keys[i], 0);
      pending.push_back({i, hash0, FastRange64(hash0, num_blocks_), 0});
      add_block(pending.back());
    }
    size_t calls = pages.Issue();
    // Each round reads the blocks the last one asked for (their reads are
    // in flight together) and asks for what they point to.
    while (!pending.empty()) {
      next.clear();
      for (Pending p : pending) {
        const std::string_view key = keys[p.index];
        const char* b = Block(p.block);
        bool may_be_here = false;
        if constexpr (kShape == kHeapShape) {
          const uint32_t fingerprint = CuckooFingerprint(p.hash0);
          for (uint32_t slot = 0; slot < buckets_per_block_; ++slot) {
            const char* bucket = b + slot * kHeapBucketSize;
            const uint64_t offset = DecodeFixed64(bucket + 4);
            if (DecodeFixed32(bucket) != fingerprint || offset >= heap_size_) {
              continue;
            }
            pages.Add(heap_ + offset, std::min(longest, heap_size_ - offset));
            may_be_here = true;
          }
        } else {
          std::string_view value;
          may_be_here = ProbeBlock<kShape>(b, 0, key, &value);
        }
        if (may_be_here || p.function + 1 == num_hashes_ ||
            !Overflowed(p.block, CuckooOverflowTag(p.hash0, overflow_bits_))) {
          continue;
        }
        ++p.function;
        p.block = BlockIndex<kShape>(key, p.function, p.hash0);
        add_block(p);
        next.push_back(p);
      }
      calls += pages.Issue();
      pending.swap(next);
    }
    return calls;
  };
  switch (shape_) {
    case kInline8x8Shape:
      return request.template operator()<kInline8x8Shape>();
    case kInlineShape:
      return request.template operator()<kInlineShape>();
    case kHeapShape:
      break;
  }
  return request.template operator()<kHeapShape>();
}

TableProperties CuckooTable::properties() const {
  const CuckooHeader& h = header_;
  TableProperties p;
  p.format_version = StrCat(h.major_version, ".", h.minor_version);
  p.num_keys = h.num_keys;
  p.min_key_length = h.min_key_length;
  p.max_key_length = h.max_key_length;
  p.max_value_length = h.max_value_length;
  if (h.layout == CuckooLayout::kInline) {
    p.key_width = h.key_width;
    p.value_width = h.value_width;
    p.key_bytes = h.num_keys * h.key_width;
    p.value_bytes = h.num_keys * h.value_width;
  }
  return p;
}

std::string CuckooTable::Describe() const {
  std::string out;
  auto line = [&out](std::string_view name, const auto& value) {
    AppendDescribeLine(&out, name, value);
  };
  const CuckooHeader& h = header_;
  line("format", fmt::format("cuckoo {}.{}", h.major_version, h.minor_version));
  line("file size", fmt::format("{} bytes", h.file_size));
  line("keys", h.num_keys);
  line("layout", CuckooLayoutName(h.layout));
  if (h.layout == CuckooLayout::kInline) {
    line("key width", h.key_width);
    line("value width", h.value_width);
  } else {
    line("key length",
         fmt::format("{}..{}", h.min_key_length, h.max_key_length));
    line("value length",
         fmt::format("{}..{}", h.min_value_length, h.max_value_length));
  }
  line("blocks", fmt::format("{} x {} buckets of {} bytes", h.num_blocks,
                             h.buckets_per_block, h.bucket_size));
  line("hash functions", h.num_hashes);
  line("utilization", fmt::format("{:.4f} built, {:.4f} requested",
                                  h.built_utilization_ppm / 1e6,
                                  h.requested_utilization_ppm / 1e6));
  line("overflow bits", fmt::format("{} per block", h.overflow_bits));
  out += "probe counts      (keys found after N block probes)\n";
  for (int i = 0; i < h.num_hashes; ++i) {
    out +=
        fmt::format("  {:<16}{} ({:.2f}%)\n", i + 1, h.keys_per_hash[i],
                    h.num_keys ? 100.0 * h.keys_per_hash[i] / h.num_keys : 0.0);
  }
  return out;
}

__attribute__((flatten)) void CuckooTable::MultiGet(
    std::span<const std::string_view> keys,
    std::span<LookupResult> results) const {
  switch (shape_) {
    case kInline8x8Shape:
      if (avx2_) return MultiGetInline8x8Avx2(keys, results);
      return MultiGetInline8x8<false>(keys, results);
    case kInlineShape:
      return MultiGetImpl<kInlineShape>(keys, results);
    case kHeapShape:
      break;
  }
  MultiGetImpl<kHeapShape>(keys, results);
}

template <CuckooTable::Shape kShape>
ROOST_ALWAYS_INLINE void CuckooTable::MultiGetImpl(
    std::span<const std::string_view> keys,
    std::span<LookupResult> results) const {
  // A rolling window of prefetches: up to kWindow lookups have their next
  // block prefetched and not yet probed. While the window has room the next
  // key is hashed and its first block prefetched; otherwise the oldest
  // lookup is probed, and one that must go on to another block prefetches
  // it and joins the window again at the back. So about kWindow cache
  // misses are always under way, and each block has kWindow other steps'
  // time to arrive. (Groups of 32 keys, hashed and prefetched together and
  // then probed together, left the memory idle between the bursts: this
  // measured 10-15% faster with huge pages, the same with 4 KiB pages.)
  struct Pending {
    uint64_t hash0;
    uint64_t block;
    uint32_t index;  // into keys / results
    int function;
  };
  Pending ring[kRing];
  size_t head = 0;  // the oldest in the window
  size_t tail = 0;  // one past the newest; tail - head <= kWindow
  size_t next = 0;  // the next key to start
  const size_t n = keys.size();
  while (next < n || head != tail) {
    if (next < n && tail - head < kWindow) {
      const size_t i = next++;
      results[i] = LookupResult{};
      if (!CanHold<kShape>(keys[i])) continue;
      const uint64_t hash0 = HashKey<kShape>(keys[i], 0);
      const uint64_t block = FastRange64(hash0, num_blocks_);
      // Only the block: prefetching the overflow bits too (which only a
      // first-block miss reads, and which mostly sit in L2) measured slower
      // for hits and barely faster for misses.
      PrefetchLine(Block(block));
      ring[tail++ % kRing] = Pending{hash0, block, static_cast<uint32_t>(i), 0};
      continue;
    }
    Pending p = ring[head++ % kRing];
    LookupResult& r = results[p.index];
    const std::string_view key = keys[p.index];
    ++r.blocks_touched;
    if (ProbeBlock<kShape>(Block(p.block), CuckooFingerprint(p.hash0), key,
                           &r.value)) {
      r.found = true;
      continue;
    }
    if (!Overflowed(p.block, CuckooOverflowTag(p.hash0, overflow_bits_)) ||
        ++p.function == num_hashes_) {
      continue;
    }
    p.block = BlockIndex<kShape>(key, p.function, p.hash0);
    PrefetchLine(Block(p.block));
    ring[tail++ % kRing] = p;
  }
}

__attribute__((target("avx2"), flatten)) void
CuckooTable::MultiGetInline8x8Avx2(std::span<const std::string_view> keys,
                                   std::span<LookupResult> results) const {
  MultiGetInline8x8<true>(keys, results);
}

template <bool kAvx2>
ROOST_ALWAYS_INLINE void CuckooTable::MultiGetInline8x8(
    std::span<const std::string_view> keys,
    std::span<LookupResult> results) const {
  // A fixed distance instead of MultiGetImpl's window: key i + kAhead is
  // hashed and its first block prefetched as key i's is probed, with no
  // branch on what the probe finds. A key its first block did not hold,
  // where that block overflowed, has its second block prefetched there and
  // then and is listed; the listed keys of each chunk are probed after the
  // chunk, when their blocks have had the rest of it to arrive. MultiGetImpl's
  // one window for first and later blocks mispredicted its branches for
  // every lookup that went on: this measured 15-25% faster (cuckoo_bench,
  // hits and misses, 4 KiB pages and huge pages).
  constexpr size_t kAhead = 24;  // 16 and 32 measured slower
  constexpr size_t kChunk = 256;
  static_assert(kAhead < kRing);
  constexpr int kBitsPerBucket = kAvx2 ? 2 : 1;
  struct Listed {
    uint64_t hash0;
    uint64_t block;  // of function 1
    size_t index;    // into keys / results
  };
  uint64_t hashes[kRing];  // of keys i to i + kAhead
  Listed listed[kChunk];
  // The fields the loops read, in registers: a store to a result's one-byte
  // fields may alias anything, and would have them loaded again.
  const char* const buckets = buckets_;
  const uint64_t num_blocks = num_blocks_;
  // Block(), with the 8x8 shape's block size (4 buckets of 16 bytes).
  auto block_at = [buckets](uint64_t index) { return buckets + index * 64; };
  const uint64_t seed0 = seeds_[0];
  const uint32_t overflow_bits = overflow_bits_;
  const int num_hashes = num_hashes_;
  auto match = [](const char* block, std::string_view key) {
    const uint64_t want = DecodeFixed64(key.data());
    if constexpr (kAvx2) return MatchInline8x8Avx2(block, want);
    return MatchInline8x8(block, want);
  };
  auto value = [](const char* block, uint32_t match) {
    return block + 16 * (std::countr_zero(match) / kBitsPerBucket) + 8;
  };
  const size_t n = keys.size();
  auto start = [&](size_t i) {
    const std::string_view key = keys[i];
    // A key of another width is not probed: hash 0 prefetches block 0.
    const uint64_t hash0 =
        key.size() == 8 ? XXH3_64bits_withSeed(key.data(), 8, seed0) : 0;
    hashes[i % kRing] = hash0;
    PrefetchLine(block_at(FastRange64(hash0, num_blocks)));
  };
  for (size_t i = 0; i < std::min(kAhead, n); ++i) start(i);
  for (size_t chunk = 0; chunk < n; chunk += kChunk) {
    const size_t end = std::min(n, chunk + kChunk);
    size_t num_listed = 0;
    for (size_t i = chunk; i < end; ++i) {
      if (i + kAhead < n) start(i + kAhead);
      const std::string_view key = keys[i];
      LookupResult& r = results[i];
      if (key.size() != 8) [[unlikely]] {
        r = LookupResult{};
        continue;
      }
      const uint64_t hash0 = hashes[i % kRing];
      const uint64_t block = FastRange64(hash0, num_blocks);
      const char* b = block_at(block);
      const uint32_t m = match(b, key);
      const bool hit = m != 0;
      r.value = std::string_view(hit ? value(b, m) : nullptr, hit ? 8 : 0);
      r.found = hit;
      r.blocks_touched = 1;
      if (!hit && num_hashes > 1 &&
          Overflowed(block, CuckooOverflowTag(hash0, overflow_bits))) {
        const uint64_t next =
            FastRange64(HashKey<kInline8x8Shape>(key, 1), num_blocks);
        PrefetchLine(block_at(next));
        listed[num_listed++] = Listed{hash0, next, i};
      }
    }
    for (size_t j = 0; j < num_listed; ++j) {
      const Listed& l = listed[j];
      LookupResult& r = results[l.index];
      const std::string_view key = keys[l.index];
      const char* b = block_at(l.block);
      r.blocks_touched = 2;
      if (const uint32_t m = match(b, key); m != 0) {
        r.found = true;
        r.value = std::string_view(value(b, m), 8);
      } else if (num_hashes > 2 &&
                 Overflowed(l.block,
                            CuckooOverflowTag(l.hash0, overflow_bits))) {
        int touched = 0;
        r.found = GetImpl<kInline8x8Shape>(key, l.hash0, 2, &r.value, &touched);
        r.blocks_touched = static_cast<uint8_t>(touched);
      }
    }
  }
}

}  // namespace roost
