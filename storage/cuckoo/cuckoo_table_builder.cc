#include "storage/cuckoo/cuckoo_table_builder.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "storage/coding.h"
#include "storage/cuckoo/cuckoo_placement.h"
#include "storage/file.h"
#include "storage/hash.h"
#include "util/escape.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {

using cuckoo_build::Candidates;
using cuckoo_build::kEmpty;
using cuckoo_build::kMaxEntries;
using cuckoo_build::kPpm;
using cuckoo_build::Slot;

absl::StatusOr<std::unique_ptr<CuckooTableBuilder>> CuckooTableBuilder::Create(
    const std::string& path, const CuckooBuildOptions& options) {
  ROOST_RETURN_IF_ERROR(ValidateCuckooBuildOptions(options));
  return std::unique_ptr<CuckooTableBuilder>(
      new CuckooTableBuilder(path, options));
}

CuckooTableBuilder::CuckooTableBuilder(const std::string& path,
                                       const CuckooBuildOptions& options)
    : path_(path), options_(options) {}

std::string_view CuckooTableBuilder::key(uint32_t i) const {
  if (uniform_) {
    return std::string_view(arena_).substr(
        static_cast<uint64_t>(i) * (key_width_ + value_width_), key_width_);
  }
  const Entry& e = entries_[i];
  return std::string_view(arena_).substr(e.offset, e.key_length);
}

std::string_view CuckooTableBuilder::value(uint32_t i) const {
  if (uniform_) {
    return std::string_view(arena_).substr(
        static_cast<uint64_t>(i) * (key_width_ + value_width_) + key_width_,
        value_width_);
  }
  const Entry& e = entries_[i];
  return std::string_view(arena_).substr(e.offset + e.key_length,
                                         e.value_length);
}

absl::Status CuckooTableBuilder::Add(std::string_view key,
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
  } else if (uniform_ && (klen != key_width_ || vlen != value_width_)) {
    // The first pair of another width: make the entries explicit.
    uniform_ = false;
    entries_.reserve(num_added_ + 1);
    for (uint64_t i = 0; i < num_added_; ++i) {
      entries_.push_back(
          Entry{i * (key_width_ + value_width_), key_width_, value_width_});
    }
  }
  if (!uniform_) entries_.push_back(Entry{arena_.size(), klen, vlen});
  arena_.append(key);
  arena_.append(value);
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
      ROOST_RETURN_IF_ERROR(WriteTable(path_, placement, &report));
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

absl::Status CuckooTableBuilder::WriteTable(const std::string& path,
                                            const Placement& placement,
                                            CuckooBuildReport* report) const {
  const uint64_t num_blocks = placement.num_blocks();
  const uint32_t bpb = placement.buckets_per_block();
  const int num_hashes = placement.num_hashes();
  const bool is_inline = report->layout == CuckooLayout::kInline;
  const uint32_t overflow_bits = options_.overflow_bits_per_block;

  CuckooHeader h;
  h.layout = report->layout;
  h.num_hashes = static_cast<uint8_t>(num_hashes);
  h.overflow_bits = static_cast<uint8_t>(overflow_bits);
  h.bucket_size = is_inline ? key_width_ + value_width_ : kHeapBucketSize;
  const BlockGeometry geometry = BlockGeometryFor(h.bucket_size);
  h.buckets_per_block = geometry.buckets_per_block;
  h.block_size = geometry.block_size;
  h.key_width = is_inline ? key_width_ : 0;
  h.value_width = is_inline ? value_width_ : 0;
  h.num_blocks = num_blocks;
  h.num_keys = report->num_keys;
  h.requested_utilization_ppm =
      static_cast<uint32_t>(std::lround(options_.utilization * kPpm));
  h.built_utilization_ppm = static_cast<uint32_t>(
      std::lround(static_cast<double>(report->num_keys) * kPpm /
                  std::max<uint64_t>(1, num_blocks * bpb)));
  for (int i = 0; i < num_hashes; ++i) h.seeds[i] = placement.seeds()[i];

  // The bucket that fills the empty buckets of empty blocks: the table's
  // first occupied one.
  uint32_t filler = kEmpty;
  uint32_t filler_fingerprint = 0;
  for (uint64_t b = 0; b < num_blocks && filler == kEmpty; ++b) {
    for (uint32_t s = 0; s < bpb && filler == kEmpty; ++s) {
      filler = placement.slot(b, s).entry;
      filler_fingerprint = placement.slot(b, s).fingerprint;
    }
  }

  ROOST_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file,
                         WritableFile::Create(path));
  ROOST_RETURN_IF_ERROR(file->AppendZeros(kCuckooHeaderSize));

  // Buckets. An empty bucket holds a copy of an occupied bucket of the same
  // block (or of the table's first occupied bucket): a lookup that compares
  // against the copy either finds that key's own value or no match, so no
  // key is reserved to mean "empty".
  auto record_size = [&](uint32_t e) -> uint64_t {
    const std::string_view k = key(e), v = value(e);
    return VarintLength(k.size()) + VarintLength(v.size()) + k.size() +
           v.size();
  };
  auto encode_bucket = [&](char* dst, uint32_t entry, uint32_t fingerprint,
                           uint64_t heap_offset) {
    if (is_inline) {
      const std::string_view k = key(entry), v = value(entry);
      std::memcpy(dst, k.data(), k.size());
      std::memcpy(dst + k.size(), v.data(), v.size());
    } else {
      EncodeFixed32(dst, fingerprint);
      EncodeFixed64(dst + 4, heap_offset);
    }
  };
  std::string filler_bucket(h.bucket_size, '\0');
  if (filler != kEmpty) {
    encode_bucket(filler_bucket.data(), filler, filler_fingerprint, 0);
  }
  // While writing, gather what the header and the overflow bitmap need: the
  // probe-count distribution, the overflow bits and the length bounds.
  std::string overflow((num_blocks * overflow_bits + 7) / 8, '\0');
  h.min_key_length = h.min_value_length = std::numeric_limits<uint32_t>::max();
  auto account = [&](uint64_t b, std::string_view k, std::string_view v) {
    Candidates c;
    placement.ComputeCandidates(k, &c);
    int choice = 0;
    while (c.blocks[choice] != b) ++choice;
    ++h.keys_per_hash[choice];
    const uint32_t tag = CuckooOverflowTag(c.hash0, overflow_bits);
    for (int j = 0; j < choice; ++j) {
      overflow[CuckooOverflowByte(c.blocks[j], overflow_bits)] |=
          static_cast<char>(
              CuckooOverflowMask(c.blocks[j], overflow_bits, tag));
    }
    report->key_bytes += k.size();
    report->value_bytes += v.size();
    h.min_key_length = std::min<uint32_t>(h.min_key_length, k.size());
    h.max_key_length = std::max<uint32_t>(h.max_key_length, k.size());
    h.min_value_length = std::min<uint32_t>(h.min_value_length, v.size());
    h.max_value_length = std::max<uint32_t>(h.max_value_length, v.size());
  };
  // Entries sit in the arena in add order, so reading them in bucket order is
  // random access: prefetch a few blocks ahead.
  constexpr uint64_t kPrefetchBlocks = 4;
  auto prefetch_block = [&](uint64_t b) {
    for (uint32_t s = 0; s < bpb; ++s) {
      const uint32_t e = placement.slot(b, s).entry;
      if (e != kEmpty) __builtin_prefetch(key(e).data());
    }
  };
  for (uint64_t b = 0; b < std::min(num_blocks, kPrefetchBlocks); ++b) {
    prefetch_block(b);
  }
  StreamingChecksum bucket_sum;
  std::string block(h.block_size, '\0');
  uint64_t heap_offset = 0;
  for (uint64_t b = 0; b < num_blocks; ++b) {
    if (b + kPrefetchBlocks < num_blocks) prefetch_block(b + kPrefetchBlocks);
    std::fill(block.begin(), block.end(), '\0');
    const char* first = nullptr;
    for (uint32_t s = 0; s < bpb; ++s) {
      const Slot& slot = placement.slot(b, s);
      if (slot.entry == kEmpty) continue;
      account(b, key(slot.entry), value(slot.entry));
      char* dst = block.data() + s * h.bucket_size;
      encode_bucket(dst, slot.entry, slot.fingerprint, heap_offset);
      if (!is_inline) heap_offset += record_size(slot.entry);
      if (first == nullptr) first = dst;
    }
    if (first == nullptr) first = filler_bucket.data();
    for (uint32_t s = 0; s < bpb; ++s) {
      if (placement.slot(b, s).entry == kEmpty) {
        std::memcpy(block.data() + s * h.bucket_size, first, h.bucket_size);
      }
    }
    bucket_sum.Update(block.data(), block.size());
    ROOST_RETURN_IF_ERROR(file->Append(block));
  }
  if (report->num_keys == 0) h.min_key_length = h.min_value_length = 0;
  report->keys_per_hash.assign(h.keys_per_hash.begin(),
                               h.keys_per_hash.begin() + num_hashes);
  h.buckets = Region{kCuckooHeaderSize, file->size() - kCuckooHeaderSize,
                     bucket_sum.Digest()};

  h.overflow = Region{file->size(), overflow.size(),
                      Checksum64(overflow.data(), overflow.size())};
  ROOST_RETURN_IF_ERROR(file->Append(overflow));

  // Heap records, in the order their buckets were written.
  StreamingChecksum heap_sum;
  const uint64_t heap_start = file->size();
  if (!is_inline) {
    char lengths[2 * kMaxVarint64Length];
    for (uint64_t b = 0; b < num_blocks; ++b) {
      for (uint32_t s = 0; s < bpb; ++s) {
        const uint32_t e = placement.slot(b, s).entry;
        if (e == kEmpty) continue;
        const std::string_view k = key(e), v = value(e);
        char* end = EncodeVarint64(lengths, k.size());
        end = EncodeVarint64(end, v.size());
        const std::string_view prefix(lengths, end - lengths);
        heap_sum.Update(prefix.data(), prefix.size());
        heap_sum.Update(k.data(), k.size());
        heap_sum.Update(v.data(), v.size());
        ROOST_RETURN_IF_ERROR(file->Append(prefix));
        ROOST_RETURN_IF_ERROR(file->Append(k));
        ROOST_RETURN_IF_ERROR(file->Append(v));
      }
    }
  }
  h.heap = Region{heap_start, file->size() - heap_start,
                  is_inline ? Checksum64(nullptr, 0) : heap_sum.Digest()};
  h.file_size = file->size();
  ROOST_RETURN_IF_ERROR(file->WriteAt(0, h.Encode()));
  ROOST_RETURN_IF_ERROR(file->Close());
  report->file_size = h.file_size;
  report->min_key_length = h.min_key_length;
  report->max_key_length = h.max_key_length;
  report->min_value_length = h.min_value_length;
  report->max_value_length = h.max_value_length;
  return absl::OkStatus();
}

}  // namespace roost
