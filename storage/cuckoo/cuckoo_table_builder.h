// CuckooTableBuilder: writes an immutable cuckoo hash table file.
//
// The builder takes key/value pairs in any order, then places them all at
// Finish() and writes the file in one pass. Keys and values are arbitrary
// byte strings, the empty string included. When every key has one length and
// every value has one length (and the pair is not empty), both sit inline in
// the bucket; otherwise buckets hold a 32-bit fingerprint and the offset of a
// heap record. See docs/format/cuckoo_table.md for the file.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(auto builder,
//                          CuckooTableBuilder::Create("/tmp/t.sst", {}));
//   ROOST_RETURN_IF_ERROR(builder->Add("k1", "v1"));
//   ROOST_RETURN_IF_ERROR(builder->Add("k2", "v2"));
//   ROOST_ASSIGN_OR_RETURN(CuckooBuildReport report, builder->Finish());
//
// The shape is BlockTableBuilder's (Create, Add, Finish); unlike it, this
// builder writes nothing until Finish(), because no key's place is known
// before every key is.
//
// Placement: each key has num_hash_functions candidate blocks (XXH3 with
// distinct seeds). A key goes to the first candidate block with a free
// bucket; when all are full, the shortest chain of displacements to a free
// bucket is found by breadth-first search, bounded in depth. When some key
// cannot be placed, the whole table is rebuilt with more blocks (a lower
// utilization), and the report says so. The same pairs in the same order
// with the same options give a byte-identical file.
#ifndef ROOST_STORAGE_CUCKOO_CUCKOO_TABLE_BUILDER_H_
#define ROOST_STORAGE_CUCKOO_CUCKOO_TABLE_BUILDER_H_

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/cuckoo/cuckoo_format.h"
#include "storage/file.h"

namespace roost {

// What to do with a key added more than once.
enum class DuplicatePolicy {
  kError,      // fail, naming the key
  kKeepFirst,  // keep the value added first
  kKeepLast,   // keep the value added last
};

// The most threads one builder places and writes with.
inline constexpr int kMaxBuildThreads = 64;

struct CuckooBuildOptions {
  // Fraction of buckets to fill. Higher makes a smaller file and more keys
  // outside their first block. In (0, 1). The default value is 0.9.
  double utilization = 0.9;
  // Candidate blocks per key, each from its own XXH3 seed. In [2, 8]. The
  // default value is 2.
  int num_hash_functions = 2;
  // Bits per block in the overflow bitmap, which lets most misses stop at
  // their first block: 1, 2, 4 or 8. More bits, fewer wasted probes. The
  // default value is 2.
  int overflow_bits_per_block = 2;
  // Longest chain of displacements tried for one insertion. The default
  // value is 6.
  int max_displacement_depth = 6;
  // How many times to rebuild at a lower utilization before giving up. The
  // default value is 20.
  int max_retries = 20;
  // Keys seen twice. The default value is DuplicatePolicy::kError.
  DuplicatePolicy on_duplicate = DuplicatePolicy::kError;
  // Master seed the per-function hash seeds derive from. The default value
  // is 0x726f6f73742d636b.
  uint64_t seed = 0x726f6f73742d636bULL;
  // Threads Finish() places and writes with, each over its own share of the
  // blocks. The file is the same byte for byte for any count. In [1, 64].
  // The default value is 1.
  int threads = 1;
};

// InvalidArgument naming the first option out of its range (see above).
// Create() checks the same; a tool can call it before reading any input.
absl::Status ValidateCuckooBuildOptions(const CuckooBuildOptions& options);

// What Finish() built.
struct CuckooBuildReport {
  uint64_t num_keys = 0;
  uint64_t duplicates_dropped = 0;  // under kKeepFirst / kKeepLast
  CuckooLayout layout = CuckooLayout::kInline;
  double requested_utilization = 0;
  double utilization = 0;  // achieved: keys / buckets
  int retries = 0;         // rebuilds at a lower utilization
  uint64_t num_blocks = 0;
  std::vector<uint64_t> keys_per_hash;  // the probe-count distribution
  uint64_t file_size = 0;
  // Of the pairs in the table (duplicates dropped excluded).
  uint64_t key_bytes = 0;
  uint64_t value_bytes = 0;
  uint32_t min_key_length = 0, max_key_length = 0;
  uint32_t min_value_length = 0, max_value_length = 0;
};

class CuckooTableBuilder {
 public:
  // A builder of the table at `path`, which is not touched until Finish().
  // InvalidArgument for bad options.
  static absl::StatusOr<std::unique_ptr<CuckooTableBuilder>> Create(
      const std::string& path, const CuckooBuildOptions& options);
  CuckooTableBuilder(const CuckooTableBuilder&) = delete;
  CuckooTableBuilder& operator=(const CuckooTableBuilder&) = delete;

  // Copies a pair into the builder. Duplicates are found at Finish(). Fails
  // on a key or value of 2^32 - 1 bytes or more, or past 2^32 - 2 pairs.
  // Inline for a pair of the widths of all before it, in the chunk of
  // memory they are in: the loader adds millions.
  absl::Status Add(std::string_view key, std::string_view value) {
    if (uniform_ && key.size() == key_width_ && value.size() == value_width_ &&
        (num_added_ & ((uint64_t{1} << chunk_shift_) - 1)) != 0 &&
        num_added_ < kMaxPairs && !finished_) {
      char* dst = chunks_.back().data() + chunk_used_;
      if (!key.empty()) std::memcpy(dst, key.data(), key.size());
      if (!value.empty()) {
        std::memcpy(dst + key.size(), value.data(), value.size());
      }
      chunk_used_ += key.size() + value.size();
      ++num_added_;
      return absl::OkStatus();
    }
    return AddToNewChunk(key, value);
  }

  // Pairs added so far, duplicates included.
  uint64_t num_added() const { return num_added_; }

  // After Finish() failed on a duplicate key under kError: the positions
  // (counting Add() calls from 0) of the first and the second copy, so that a
  // caller can name where each came from.
  struct Duplicate {
    std::string key;
    uint64_t first;
    uint64_t second;
  };
  std::optional<Duplicate> duplicate() const { return duplicate_; }

  // Places every pair and writes the table to the path given to Create()
  // (created or truncated). A failure never leaves a partial table there:
  // errors found before writing leave the path as it was, and a failed write
  // removes the file. Errors: InvalidArgument for a duplicate key under
  // kError (naming the key and the positions of both adds),
  // ResourceExhausted when no utilization works, I/O errors,
  // FailedPrecondition when called twice. The file is not fsynced: a caller
  // that publishes it syncs it.
  absl::StatusOr<CuckooBuildReport> Finish();

 private:
  // Where a pair of another width lies: its chunk of the arena, its offset
  // there, and its key's and value's lengths.
  struct Entry {
    uint32_t chunk;
    uint32_t offset;
    uint32_t key_length;
    uint32_t value_length;
  };
  class Placement;
  class Writer;

  // The most pairs a builder takes: an entry is 32 bits, and one value
  // means empty.
  static constexpr uint64_t kMaxPairs =
      uint64_t{std::numeric_limits<uint32_t>::max()} - 1;

  CuckooTableBuilder(const std::string& path,
                     const CuckooBuildOptions& options);
  // Add() for every other pair: the first, the first of a chunk, one of
  // other widths, or one refused.
  absl::Status AddToNewChunk(std::string_view key, std::string_view value);
  absl::StatusOr<CuckooBuildReport> PlaceAndWrite();
  std::string_view key(uint32_t i) const;
  std::string_view value(uint32_t i) const;
  uint32_t key_length(uint32_t i) const;
  uint32_t value_length(uint32_t i) const;
  // Starts bringing pair i's entry (step 1) or the first `max_lines` cache
  // lines of its bytes (step 2) into the cache: reading pairs in bucket
  // order is random access, done a few pairs ahead in two steps.
  void PrefetchEntry(uint32_t i) const;
  void PrefetchPair(uint32_t i, uint32_t max_lines) const;
  // Copies key then value into the arena, returning where they start;
  // ResourceExhausted when no memory is left.
  absl::StatusOr<Entry> Store(std::string_view key, std::string_view value);

  const std::string path_;
  const CuckooBuildOptions options_;
  bool finished_ = false;
  // Keys and values, back to back in add order, in chunks of kArenaChunk
  // bytes (a pair never straddles two; a longer pair has a chunk of its
  // own), so that growing never copies what is stored and peak memory stays
  // near the pairs' size (a doubling string held up to twice it), on huge
  // pages, since the pairs are read at random.
  static constexpr uint64_t kArenaChunk = uint64_t{64} << 20;
  std::vector<AnonymousBuffer> chunks_;
  uint64_t chunk_used_ = 0;
  uint64_t chunk_capacity_ = 0;
  // While every pair has the same widths, entries are implicit (a chunk holds
  // 2^chunk_shift_ of them back to back) and entries_ stays empty.
  bool uniform_ = true;
  uint32_t key_width_ = 0;
  uint32_t value_width_ = 0;
  int chunk_shift_ = 0;
  std::vector<Entry, LargeAllocator<Entry>> entries_;
  uint64_t num_added_ = 0;
  std::optional<Duplicate> duplicate_;
};

// Inline: placing and writing call these for every pair, often twice.
inline std::string_view CuckooTableBuilder::key(uint32_t i) const {
  if (uniform_) {
    const uint64_t mask = (uint64_t{1} << chunk_shift_) - 1;
    const uint64_t offset =
        (uint64_t{i} & mask) * (uint64_t{key_width_} + value_width_);
    return {chunks_[uint64_t{i} >> chunk_shift_].data() + offset, key_width_};
  }
  const Entry& e = entries_[i];
  return {chunks_[e.chunk].data() + e.offset, e.key_length};
}

inline uint32_t CuckooTableBuilder::key_length(uint32_t i) const {
  return uniform_ ? key_width_ : entries_[i].key_length;
}

inline uint32_t CuckooTableBuilder::value_length(uint32_t i) const {
  return uniform_ ? value_width_ : entries_[i].value_length;
}

inline std::string_view CuckooTableBuilder::value(uint32_t i) const {
  const std::string_view k = key(i);
  return {k.data() + k.size(), value_length(i)};
}

}  // namespace roost

#endif  // ROOST_STORAGE_CUCKOO_CUCKOO_TABLE_BUILDER_H_
