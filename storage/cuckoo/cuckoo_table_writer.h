// CuckooTableBuilder::Writer: writes a cuckoo table file from a finished
// placement (header, buckets, overflow bitmap, heap records; see
// docs/format/cuckoo_table.md). Only the builder includes this;
// CuckooTableBuilder::Finish (cuckoo_table_builder.cc) makes one per table.
//
// The pairs sit in the builder's arena in add order, so reading them in
// bucket order is random access: each pass reads them a few pairs ahead of
// its work (PairLookahead), and the heap layout reads each pair's bytes once,
// in the heap pass, which also gathers what the header and the overflow
// bitmap need. The inline layout's buckets are written by the builder's
// threads, each encoding its own share of the blocks into its part of the
// file; the heap layout's, by one.
#ifndef ROOST_STORAGE_CUCKOO_CUCKOO_TABLE_WRITER_H_
#define ROOST_STORAGE_CUCKOO_CUCKOO_TABLE_WRITER_H_

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "storage/cuckoo/cuckoo_format.h"
#include "storage/cuckoo/cuckoo_placement.h"
#include "storage/cuckoo/cuckoo_table_builder.h"
#include "storage/file.h"
#include "storage/hash.h"

namespace roost {

class CuckooTableBuilder::Writer {
 public:
  // `report` holds the layout and key count; Write() fills in the rest.
  Writer(const CuckooTableBuilder& builder, const Placement& placement,
         CuckooBuildReport* report);
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Writes the file at `path` (created or truncated), not fsynced. On an
  // error the file is removed.
  absl::Status Write(const std::string& path);

 private:
  class PairLookahead;

  // What the header says of the pairs, counted by one thread.
  struct Tally {
    std::array<uint64_t, kMaxHashFunctions> keys_per_hash{};
    uint64_t key_bytes = 0, value_bytes = 0;
    uint32_t min_key = std::numeric_limits<uint32_t>::max(), max_key = 0;
    uint32_t min_value = std::numeric_limits<uint32_t>::max(), max_value = 0;
    void Merge(const Tally& other);
  };

  // Counts the pair (k, v) in bucket `slot` into `tally` and the overflow
  // bitmap (atomically: threads share it). Only a pair away from its first
  // candidate block has its key hashed again.
  void Account(uint64_t slot, std::string_view k, std::string_view v,
               Tally* tally);
  // The bucket of `slot`, whose record (heap layout) is at `heap_offset`.
  void EncodeBucket(char* dst, const cuckoo_build::Slot& slot,
                    uint64_t heap_offset) const;
  // Blocks [lo, hi), empty buckets filled with a copy of an occupied one
  // (or of `filler`), handed to `sink(piece, first block of the piece)` in
  // pieces of about a MiB, in order.
  template <typename Sink>
  absl::Status WriteBlocks(uint64_t lo, uint64_t hi, std::string_view filler,
                           Tally* tally, Sink sink);
  // Every block; the inline layout's on `threads` threads, each writing its
  // share of `file` in place.
  absl::Status WriteBuckets(WritableFile& file, int threads);
  // Every heap record, in the order their buckets were written.
  absl::Status WriteHeap(WritableFile& file);

  const CuckooTableBuilder& b_;
  const Placement& placement_;
  CuckooBuildReport* const report_;
  const bool is_inline_;
  const uint32_t bpb_;
  const uint64_t num_slots_;
  CuckooHeader h_;
  Tally tally_;
  std::string overflow_;
  StreamingChecksum bucket_sum_;
  StreamingChecksum heap_sum_;
};

}  // namespace roost

#endif  // ROOST_STORAGE_CUCKOO_CUCKOO_TABLE_WRITER_H_
