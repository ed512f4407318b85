#include "storage/cuckoo/cuckoo_table_builder.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "storage/coding.h"
#include "storage/cuckoo/cuckoo_placement.h"
#include "storage/cuckoo/cuckoo_table_writer.h"
#include "storage/file.h"
#include "storage/hash.h"
#include "util/escape.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {

using cuckoo_build::kEmpty;
using cuckoo_build::kMaxEntries;

absl::StatusOr<std::unique_ptr<CuckooTableBuilder>> CuckooTableBuilder::Create(
    const std::string& path, const CuckooBuildOptions& options) {
  ROOST_RETURN_IF_ERROR(ValidateCuckooBuildOptions(options));
  return std::unique_ptr<CuckooTableBuilder>(
      new CuckooTableBuilder(path, options));
}

CuckooTableBuilder::CuckooTableBuilder(const std::string& path,
                                       const CuckooBuildOptions& options)
    : path_(path), options_(options) {}

void CuckooTableBuilder::PrefetchEntry(uint32_t i) const {
  if (!uniform_) __builtin_prefetch(&entries_[i]);
}

void CuckooTableBuilder::PrefetchPair(uint32_t i, uint32_t max_lines) const {
  const char* p = key(i).data();
  const uint64_t size = uint64_t{key_length(i)} + value_length(i);
  const uint64_t lines = std::min<uint64_t>(max_lines, (size + 63) / 64);
  for (uint64_t l = 0; l < lines; ++l) __builtin_prefetch(p + l * 64);
}

absl::StatusOr<CuckooTableBuilder::Entry> CuckooTableBuilder::Store(
    std::string_view key, std::string_view value) {
  const uint64_t size = key.size() + value.size();
  // While the pairs are uniform, a chunk holds 2^chunk_shift_ of them.
  const bool chunk_full =
      uniform_ && num_added_ > 0 &&
      (num_added_ & ((uint64_t{1} << chunk_shift_) - 1)) == 0;
  if (chunks_.empty() || chunk_capacity_ - chunk_used_ < size || chunk_full) {
    ROOST_ASSIGN_OR_RETURN(
        AnonymousBuffer chunk,
        AnonymousBuffer::Allocate(std::max(kArenaChunk, size)));
    chunk_capacity_ = chunk.size();
    chunks_.push_back(std::move(chunk));
    chunk_used_ = 0;
  }
  char* dst = chunks_.back().data() + chunk_used_;
  if (!key.empty()) std::memcpy(dst, key.data(), key.size());
  if (!value.empty()) std::memcpy(dst + key.size(), value.data(), value.size());
  const Entry entry{static_cast<uint32_t>(chunks_.size() - 1),
                    static_cast<uint32_t>(chunk_used_),
                    static_cast<uint32_t>(key.size()),
                    static_cast<uint32_t>(value.size())};
  chunk_used_ += size;
  return entry;
}

absl::Status CuckooTableBuilder::AddToNewChunk(std::string_view key,
                                               std::string_view value) {
  if (finished_) return absl::FailedPreconditionError("Add() after Finish()");
  constexpr uint64_t kMaxLength = std::numeric_limits<uint32_t>::max();
  if (key.size() >= kMaxLength || value.size() >= kMaxLength) {
    return absl::InvalidArgumentError(StrCat("key ", PrintableKey(key),
                                             " or its value is 4 GiB or "
                                             "longer"));
  }
  if (num_added_ >= kMaxEntries) {
    return absl::ResourceExhaustedError(
        StrCat("a cuckoo table holds at most ", kMaxEntries, " pairs"));
  }
  const auto klen = static_cast<uint32_t>(key.size());
  const auto vlen = static_cast<uint32_t>(value.size());
  if (num_added_ == 0) {
    key_width_ = klen;
    value_width_ = vlen;
    const uint64_t width = uint64_t{klen} + vlen;
    // A power of two, so that finding a pair takes a shift, not a division.
    chunk_shift_ =
        width == 0
            ? 32
            : std::bit_width(std::max<uint64_t>(1, kArenaChunk / width)) - 1;
  } else if (uniform_ && (klen != key_width_ || vlen != value_width_)) {
    // The first pair of another width: make the entries explicit.
    uniform_ = false;
    entries_.reserve(num_added_ + 1);
    const uint64_t width = uint64_t{key_width_} + value_width_;
    for (uint64_t i = 0; i < num_added_; ++i) {
      entries_.push_back(Entry{
          static_cast<uint32_t>(i >> chunk_shift_),
          static_cast<uint32_t>((i & ((uint64_t{1} << chunk_shift_) - 1)) *
                                width),
          key_width_, value_width_});
    }
  }
  ROOST_ASSIGN_OR_RETURN(const Entry entry, Store(key, value));
  if (!uniform_) entries_.push_back(entry);
  ++num_added_;
  return absl::OkStatus();
}

absl::Status ValidateCuckooBuildOptions(const CuckooBuildOptions& o) {
  if (!(o.utilization > 0 && o.utilization < 1)) {
    return absl::InvalidArgumentError(
        StrCat("utilization must be in (0, 1), not ", o.utilization));
  }
  if (o.num_hash_functions < 2 || o.num_hash_functions > kMaxHashFunctions) {
    return absl::InvalidArgumentError(
        StrCat("number of hash functions must be in [2, ", kMaxHashFunctions,
               "], not ", o.num_hash_functions));
  }
  const int bits = o.overflow_bits_per_block;
  if (bits != 1 && bits != 2 && bits != 4 && bits != 8) {
    return absl::InvalidArgumentError(
        StrCat("overflow bits per block must be 1, 2, 4 or 8, not ", bits));
  }
  if (o.threads < 1 || o.threads > kMaxBuildThreads) {
    return absl::InvalidArgumentError(StrCat("build threads must be in [1, ",
                                             kMaxBuildThreads, "], not ",
                                             o.threads));
  }
  if (o.max_displacement_depth < 0 || o.max_retries < 0) {
    return absl::InvalidArgumentError(
        "displacement depth and retries must not be negative");
  }
  return absl::OkStatus();
}

absl::StatusOr<CuckooBuildReport> CuckooTableBuilder::Finish() {
  if (finished_)
    return absl::FailedPreconditionError("Finish() already called");
  finished_ = true;
  return PlaceAndWrite();
}

absl::StatusOr<CuckooBuildReport> CuckooTableBuilder::PlaceAndWrite() {
  CuckooBuildReport report;
  // Inline when every pair has the same widths, as long as a bucket stays
  // small: past kMaxInlineBucketSize the empty tenth of the buckets would
  // waste more than the heap's 12-byte buckets and records cost.
  const uint64_t pair_size = uint64_t{key_width_} + value_width_;
  report.layout = uniform_ && pair_size > 0 && pair_size <= kMaxInlineBucketSize
                      ? CuckooLayout::kInline
                      : CuckooLayout::kHeap;
  const uint32_t bucket_size = report.layout == CuckooLayout::kInline
                                   ? key_width_ + value_width_
                                   : kHeapBucketSize;
  const BlockGeometry geometry = BlockGeometryFor(bucket_size);
  report.requested_utilization = options_.utilization;

  const uint64_t n = num_added_;
  double utilization = options_.utilization;
  auto blocks_for = [&](double u) -> uint64_t {
    if (n == 0) return 0;
    return std::max<uint64_t>(
        1, static_cast<uint64_t>(std::ceil(static_cast<double>(n) /
                                           (u * geometry.buckets_per_block))));
  };
  uint64_t num_blocks = blocks_for(utilization);
  for (int attempt = 0;; ++attempt) {
    Placement placement(*this, num_blocks, geometry.buckets_per_block, attempt);
    uint64_t duplicates = 0;
    bool placed = true;
    if (n > 0) {
      ROOST_ASSIGN_OR_RETURN(placed, placement.PlaceAll(&duplicates));
    }
    if (placed) {
      report.retries = attempt;
      report.duplicates_dropped = duplicates;
      report.num_keys = n - duplicates;
      report.num_blocks = num_blocks;
      report.utilization = num_blocks == 0
                               ? 0
                               : static_cast<double>(report.num_keys) /
                                     (num_blocks * geometry.buckets_per_block);
      ROOST_RETURN_IF_ERROR(Writer(*this, placement, &report).Write(path_));
      return report;
    }
    if (attempt >= options_.max_retries) break;
    // Some key found no bucket: rebuild with more room.
    utilization = std::max(0.05, utilization - 0.05);
    num_blocks = std::max(num_blocks + 1, blocks_for(utilization));
  }
  return absl::ResourceExhaustedError(StrCat(
      "cannot place ", n, " keys in a cuckoo table even at utilization ",
      utilization, " after ", options_.max_retries,
      " retries; try more hash functions or a deeper displacement search"));
}

}  // namespace roost
