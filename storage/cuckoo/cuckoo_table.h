// CuckooTable: a read-only, memory-mapped cuckoo hash table file.
//
// Open() maps a file written by CuckooTableBuilder, validates its header and
// every region against the file's length, and by default verifies every
// checksum, so that a corrupt or truncated file is refused before any lookup.
// The table never changes after Open(); any number of threads may call Get()
// and MultiGet() at once without locks.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(std::unique_ptr<CuckooTable> table,
//                          CuckooTable::Open("/data/t.sst"));
//   std::string_view value;
//   if (table->Get("some key", &value)) Use(value);
//
// A lookup hashes the key with the first hash function, probes that cuckoo
// block (one cache line), and moves to the next function's block only when
// the key is not there and the block's overflow bit for the key says some key
// was pushed out of it. Most hits and most misses touch one block.
#ifndef ROOST_STORAGE_CUCKOO_CUCKOO_TABLE_H_
#define ROOST_STORAGE_CUCKOO_CUCKOO_TABLE_H_

#include <bit>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/coding.h"
#include "storage/cuckoo/cuckoo_format.h"
#include "storage/file.h"
#include "storage/hash.h"
#include "storage/table.h"

namespace roost {

class CuckooTable final : public Table {
 public:
  // Opens `path` with `options`' load_mode, verify_checksums and
  // vector_compares (read_options.h). Errors: NotFound / PermissionDenied
  // for the file, DataLoss for a corrupt or truncated table,
  // FailedPrecondition for an unsupported format version.
  static absl::StatusOr<std::unique_ptr<CuckooTable>> Open(
      const std::string& path, const TableReadOptions& options = {});

  // Looks `key` up. On a hit sets *value to a view into the table (valid
  // while the table is open) and returns true. When `blocks_touched` is not
  // null it receives the number of cuckoo blocks probed.
  // (Inline, so that the common case costs its caller no call: see
  // GetInline8x8.)
  bool Get(std::string_view key, std::string_view* value,
           int* blocks_touched = nullptr) const {
    if (shape_ == kInline8x8Shape && key.size() == 8) {
      return GetInline8x8(key, value, blocks_touched);
    }
    return GetAnyShape(key, value, blocks_touched);
  }

  // Looks every key up; results[i] is the outcome for keys[i]. Hashes a group
  // of keys and prefetches their blocks before probing any, so that many
  // cache misses are in flight at once. REQUIRES: results.size() ==
  // keys.size().
  void MultiGet(std::span<const std::string_view> keys,
                std::span<LookupResult> results) const;

  // Table: a batch of one is Get() (with its probe count), a larger one is
  // MultiGet() above; values are views into the file, so nothing is pinned.
  absl::Status MultiGet(std::span<const std::string_view> keys,
                        std::span<LookupResult> results,
                        ValuePins* pins) const override;
  using Table::Get;
  // Table: in rounds, each key's first block (and its overflow bit), then
  // what the blocks of the round before point to: in a heap table the
  // record of each bucket whose fingerprint is the key's (as far as the
  // longest record could reach), and for a key its block cannot hold but
  // whose overflow bit is set, its next block. Every page the MultiGet
  // reads is asked for; a round reads the pages the one before asked for.
  size_t RequestPages(std::span<const std::string_view> keys) const override;

  // Recomputes the checksum of every region. DataLoss on a mismatch.
  absl::Status VerifyChecksums() const override;
  // Inline: every bucket (filler copies too); heap: every heap record, in
  // order. DataLoss for a heap record that does not fit the heap.
  absl::Status ForEachPair(const PairVisitor& visit) const override;

  // Every field of the file header: counts, widths, seeds, utilization and
  // the probe-count distribution.
  const CuckooHeader& header() const { return header_; }
  TableFormat format() const override { return TableFormat::kCuckoo; }
  uint64_t num_keys() const override { return header_.num_keys; }
  // The longest key the table holds; longer keys are certain misses.
  uint32_t max_key_length() const override { return header_.max_key_length; }
  uint32_t key_width() const override {
    return header_.layout == CuckooLayout::kInline ? header_.key_width : 0;
  }
  bool counts_blocks_touched() const override { return true; }
  // The mapped file, for residency accounting.
  std::string_view file_data() const override { return file_->data(); }
  const std::string& path() const override { return file_->path(); }
  TableProperties properties() const override;
  std::string Describe() const override;

 private:
  CuckooTable(std::unique_ptr<MappedFile> file, const CuckooHeader& header,
              bool vector_compares);
  // The bucket shapes lookups are compiled for.
  enum Shape { kHeapShape, kInlineShape, kInline8x8Shape };

  // Get of an 8-byte key in a table of 8-byte keys and values (shape_ is
  // kInline8x8Shape only with at least one block), answered in its first
  // block (about 80% of hits, and most misses) by a short path of its own:
  // a lone Get's block miss overlaps with the lookups around it only as far
  // as the CPU can run ahead, and that is further the fewer instructions a
  // lookup takes (GetAnyShape saves and restores six registers and spills
  // to the stack on its way).
  bool GetInline8x8(std::string_view key, std::string_view* value,
                    int* blocks_touched) const {
    const uint64_t hash0 = XXH3_64bits_withSeed(key.data(), 8, seeds_[0]);
    const uint64_t block = FastRange64(hash0, num_blocks_);
    const char* b = Block(block);
    const uint32_t match = MatchInline8x8(b, DecodeFixed64(key.data()));
    if (match != 0) {
      *value = std::string_view(b + 16 * std::countr_zero(match) + 8, 8);
      if (blocks_touched != nullptr) *blocks_touched = 1;
      return true;
    }
    if (num_hashes_ > 1 &&
        Overflowed(block, CuckooOverflowTag(hash0, overflow_bits_))) {
      return GetInline8x8After(key, hash0, value, blocks_touched);
    }
    if (blocks_touched != nullptr) *blocks_touched = 1;
    return false;
  }
  // Which of an 8x8 block's four 16-byte buckets hold the key `want` (bit s
  // for bucket s): every bucket compared, with no branch on the data, so the
  // CPU can run ahead into the next lookup while the block is in flight.
  static uint32_t MatchInline8x8(const char* block, uint64_t want) {
    uint32_t match = 0;
    for (uint32_t s = 0; s < 4; ++s) {
      match |= static_cast<uint32_t>(DecodeFixed64(block + 16 * s) == want)
               << s;
    }
    return match;
  }
  // Get for any shape, the first block included.
  bool GetAnyShape(std::string_view key, std::string_view* value,
                   int* blocks_touched) const;
  // Get of an 8x8 key whose first block (function 0, whose hash is `hash0`)
  // did not hold it and overflowed: the blocks from function 1 on.
  bool GetInline8x8After(std::string_view key, uint64_t hash0,
                         std::string_view* value, int* blocks_touched) const;
  // Probes the blocks of functions `first` on; `hash0` is the key's
  // function-0 hash.
  template <Shape kShape>
  bool GetImpl(std::string_view key, uint64_t hash0, int first,
               std::string_view* value, int* blocks_touched) const;
  template <Shape kShape>
  void MultiGetImpl(std::span<const std::string_view> keys,
                    std::span<LookupResult> results) const;
  // MultiGet of a kInline8x8Shape table, its block compares with
  // MatchInline8x8 or (kAvx2) with two vector loads; MultiGetInline8x8Avx2
  // is the latter compiled for AVX2.
  template <bool kAvx2>
  void MultiGetInline8x8(std::span<const std::string_view> keys,
                         std::span<LookupResult> results) const;
  void MultiGetInline8x8Avx2(std::span<const std::string_view> keys,
                             std::span<LookupResult> results) const;
  // Whether `key` could be in the table at all (its length fits).
  template <Shape kShape>
  bool CanHold(std::string_view key) const;
  template <Shape kShape>
  uint64_t HashKey(std::string_view key, int function) const;
  template <Shape kShape>
  uint64_t BlockIndex(std::string_view key, int function, uint64_t hash0) const;
  const char* Block(uint64_t index) const {
    return buckets_ + index * block_size_;
  }
  // Whether a key with overflow `tag` may have been pushed out of `block`.
  bool Overflowed(uint64_t block, uint32_t tag) const {
    return overflow_[CuckooOverflowByte(block, overflow_bits_)] &
           CuckooOverflowMask(block, overflow_bits_, tag);
  }
  // Searches one block for `key`. On a hit sets *value and returns true.
  template <Shape kShape>
  bool ProbeBlock(const char* block, uint32_t fingerprint, std::string_view key,
                  std::string_view* value) const;
  // Heap layout: the record a bucket points at, if its key is `key`.
  bool MatchHeapRecord(const char* bucket, std::string_view key,
                       std::string_view* value) const;

  std::unique_ptr<MappedFile> file_;
  CuckooHeader header_;
  // Copies of the header fields the hot path reads.
  const char* buckets_;
  const uint8_t* overflow_;
  const char* heap_;
  uint64_t heap_size_;
  uint64_t num_blocks_;
  uint32_t block_size_;
  uint32_t bucket_size_;
  uint32_t buckets_per_block_;
  uint32_t key_width_;
  uint32_t overflow_bits_;
  int num_hashes_;
  Shape shape_;
  bool avx2_;  // MultiGet of kInline8x8Shape is MultiGetInline8x8Avx2
  uint64_t seeds_[kMaxHashFunctions];
};

}  // namespace roost

#endif  // ROOST_STORAGE_CUCKOO_CUCKOO_TABLE_H_
