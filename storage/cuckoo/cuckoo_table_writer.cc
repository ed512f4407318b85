#include "storage/cuckoo/cuckoo_table_writer.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "storage/coding.h"
#include "util/status_macros.h"

namespace roost {

using cuckoo_build::Candidates;
using cuckoo_build::kEmpty;
using cuckoo_build::kPpm;
using cuckoo_build::Slot;

namespace {

// Blocks and heap records are written in pieces of about this many bytes.
constexpr size_t kPiece = size_t{1} << 20;

// Adds `size` bytes of `file` from `offset` on to `sum`.
absl::Status ChecksumWritten(WritableFile& file, uint64_t offset, uint64_t size,
                             StreamingChecksum* sum) {
  std::string buffer(std::min<uint64_t>(size, kPiece), '\0');
  while (size > 0) {
    const size_t n = std::min<uint64_t>(size, buffer.size());
    ROOST_RETURN_IF_ERROR(file.ReadAt(offset, n, buffer.data()));
    sum->Update(buffer.data(), n);
    offset += n;
    size -= n;
  }
  return absl::OkStatus();
}

}  // namespace

// A walk over the occupied buckets in order that, at each Step(), prefetches
// the entry (where the pair lies) of the pair kFar occupied buckets ahead and
// the first `lines` cache lines of the pair kNear ahead, whose entry is in
// the cache by then.
class CuckooTableBuilder::Writer::PairLookahead {
 public:
  PairLookahead(const CuckooTableBuilder& builder, const Slot* slots,
                uint64_t num_slots, uint32_t lines)
      : b_(builder), slots_(slots), num_slots_(num_slots), lines_(lines) {
    for (int i = 0; i < kFar; ++i) StepFar();
    for (int i = 0; i < kNear; ++i) StepNear();
  }

  // Call once before reading each occupied bucket, in order.
  void Step() {
    StepFar();
    StepNear();
  }

 private:
  static constexpr int kFar = 32;
  static constexpr int kNear = 16;

  uint32_t Next(uint64_t* cursor) const {
    while (*cursor < num_slots_ && slots_[*cursor].entry == kEmpty) ++*cursor;
    return *cursor < num_slots_ ? slots_[(*cursor)++].entry : kEmpty;
  }
  void StepFar() {
    const uint32_t e = Next(&far_);
    if (e != kEmpty) b_.PrefetchEntry(e);
  }
  void StepNear() {
    if (lines_ == 0) return;
    const uint32_t e = Next(&near_);
    if (e != kEmpty) b_.PrefetchPair(e, lines_);
  }

  const CuckooTableBuilder& b_;
  const Slot* const slots_;
  const uint64_t num_slots_;
  const uint32_t lines_;
  uint64_t far_ = 0;
  uint64_t near_ = 0;
};

CuckooTableBuilder::Writer::Writer(const CuckooTableBuilder& builder,
                                   const Placement& placement,
                                   CuckooBuildReport* report)
    : b_(builder),
      placement_(placement),
      report_(report),
      is_inline_(report->layout == CuckooLayout::kInline),
      bpb_(placement.buckets_per_block()),
      num_slots_(placement.num_blocks() * placement.buckets_per_block()) {
  const uint64_t num_blocks = placement.num_blocks();
  const int num_hashes = placement.num_hashes();
  const uint32_t overflow_bits = builder.options_.overflow_bits_per_block;
  h_.layout = report->layout;
  h_.num_hashes = static_cast<uint8_t>(num_hashes);
  h_.overflow_bits = static_cast<uint8_t>(overflow_bits);
  h_.bucket_size =
      is_inline_ ? builder.key_width_ + builder.value_width_ : kHeapBucketSize;
  const BlockGeometry geometry = BlockGeometryFor(h_.bucket_size);
  h_.buckets_per_block = geometry.buckets_per_block;
  h_.block_size = geometry.block_size;
  h_.key_width = is_inline_ ? builder.key_width_ : 0;
  h_.value_width = is_inline_ ? builder.value_width_ : 0;
  h_.num_blocks = num_blocks;
  h_.num_keys = report->num_keys;
  h_.requested_utilization_ppm =
      static_cast<uint32_t>(std::lround(builder.options_.utilization * kPpm));
  h_.built_utilization_ppm = static_cast<uint32_t>(
      std::lround(static_cast<double>(report->num_keys) * kPpm /
                  std::max<uint64_t>(1, num_slots_)));
  for (int i = 0; i < num_hashes; ++i) h_.seeds[i] = placement.seeds()[i];
  overflow_.assign((num_blocks * overflow_bits + 7) / 8, '\0');
}

void CuckooTableBuilder::Writer::Tally::Merge(const Tally& other) {
  for (size_t i = 0; i < keys_per_hash.size(); ++i) {
    keys_per_hash[i] += other.keys_per_hash[i];
  }
  key_bytes += other.key_bytes;
  value_bytes += other.value_bytes;
  min_key = std::min(min_key, other.min_key);
  max_key = std::max(max_key, other.max_key);
  min_value = std::min(min_value, other.min_value);
  max_value = std::max(max_value, other.max_value);
}

void CuckooTableBuilder::Writer::Account(uint64_t slot, std::string_view k,
                                         std::string_view v, Tally* tally) {
  if (placement_.at_home(slot)) {
    ++tally->keys_per_hash[0];  // and no overflow bit: no block comes before
  } else {
    const uint64_t block = slot / bpb_;
    Candidates c;
    placement_.ComputeCandidates(k, &c);
    int choice = 0;
    while (c.blocks[choice] != block) ++choice;
    ++tally->keys_per_hash[choice];
    const uint32_t bits = h_.overflow_bits;
    const uint32_t tag = CuckooOverflowTag(c.hash0, bits);
    for (int j = 0; j < choice; ++j) {
      std::atomic_ref<char>(overflow_[CuckooOverflowByte(c.blocks[j], bits)])
          .fetch_or(
              static_cast<char>(CuckooOverflowMask(c.blocks[j], bits, tag)),
              std::memory_order_relaxed);
    }
  }
  tally->key_bytes += k.size();
  tally->value_bytes += v.size();
  tally->min_key = std::min<uint32_t>(tally->min_key, k.size());
  tally->max_key = std::max<uint32_t>(tally->max_key, k.size());
  tally->min_value = std::min<uint32_t>(tally->min_value, v.size());
  tally->max_value = std::max<uint32_t>(tally->max_value, v.size());
}

void CuckooTableBuilder::Writer::EncodeBucket(char* dst, const Slot& slot,
                                              uint64_t heap_offset) const {
  if (is_inline_) {
    const std::string_view k = b_.key(slot.entry), v = b_.value(slot.entry);
    std::memcpy(dst, k.data(), k.size());
    std::memcpy(dst + k.size(), v.data(), v.size());
  } else {
    EncodeFixed32(dst, slot.fingerprint);
    EncodeFixed64(dst + 4, heap_offset);
  }
}

template <typename Sink>
absl::Status CuckooTableBuilder::Writer::WriteBlocks(uint64_t lo, uint64_t hi,
                                                     std::string_view filler,
                                                     Tally* tally, Sink sink) {
  // An empty bucket holds a copy of an occupied bucket of the same block (or
  // of the table's first occupied bucket): a lookup that compares against
  // the copy either finds that key's own value or no match, so no key is
  // reserved to mean "empty".
  const Slot* slots = placement_.slots();
  // The heap layout reads only the pairs' lengths here (the heap pass reads
  // their bytes); the inline layout copies the pairs into their buckets.
  const uint32_t lines =
      is_inline_ ? static_cast<uint32_t>((h_.bucket_size + 63) / 64) : 0;
  PairLookahead ahead(b_, slots + lo * bpb_, (hi - lo) * bpb_, lines);
  const uint64_t block_size = h_.block_size;
  const uint64_t blocks_per_piece = std::max<uint64_t>(1, kPiece / block_size);
  std::string piece;
  uint64_t heap_offset = 0;  // the heap layout has one share: lo is 0
  for (uint64_t first = lo; first < hi; first += blocks_per_piece) {
    const uint64_t last = std::min(hi, first + blocks_per_piece);
    piece.assign((last - first) * block_size, '\0');
    for (uint64_t b = first; b < last; ++b) {
      char* block = piece.data() + (b - first) * block_size;
      const Slot* block_slots = slots + b * bpb_;
      const char* copy = nullptr;
      for (uint32_t s = 0; s < bpb_; ++s) {
        const Slot& slot = block_slots[s];
        if (slot.entry == kEmpty) continue;
        ahead.Step();
        char* dst = block + s * h_.bucket_size;
        EncodeBucket(dst, slot, heap_offset);
        if (is_inline_) {
          Account(b * bpb_ + s, b_.key(slot.entry), b_.value(slot.entry),
                  tally);
        } else {
          const uint64_t klen = b_.key_length(slot.entry);
          const uint64_t vlen = b_.value_length(slot.entry);
          heap_offset += VarintLength(klen) + VarintLength(vlen) + klen + vlen;
        }
        if (copy == nullptr) copy = dst;
      }
      if (copy == nullptr) copy = filler.data();
      for (uint32_t s = 0; s < bpb_; ++s) {
        if (block_slots[s].entry == kEmpty) {
          std::memcpy(block + s * h_.bucket_size, copy, h_.bucket_size);
        }
      }
    }
    ROOST_RETURN_IF_ERROR(sink(std::string_view(piece), first));
  }
  return absl::OkStatus();
}

absl::Status CuckooTableBuilder::Writer::WriteBuckets(WritableFile& file,
                                                      int threads) {
  const Slot* slots = placement_.slots();
  std::string filler(h_.bucket_size, '\0');
  for (uint64_t i = 0; i < num_slots_; ++i) {
    if (slots[i].entry != kEmpty) {
      EncodeBucket(filler.data(), slots[i], 0);
      break;
    }
  }
  const uint64_t num_blocks = placement_.num_blocks();
  const uint64_t shares =
      is_inline_ ? cuckoo_build::SharesFor(threads, num_blocks) : 1;
  if (shares == 1) {
    return WriteBlocks(0, num_blocks, filler, &tally_,
                       [&](std::string_view piece, uint64_t) {
                         bucket_sum_.Update(piece.data(), piece.size());
                         return file.Append(piece);
                       });
  }
  // Each share writes its blocks in place; the first checksums its own as
  // it goes, and the rest are read back for the checksum (from the page
  // cache: a fraction of the time encoding them took).
  const uint64_t start = file.size();
  const uint64_t block_size = h_.block_size;
  ROOST_RETURN_IF_ERROR(file.AppendHole(num_blocks * block_size));
  std::vector<uint64_t> cuts(shares + 1, num_blocks);
  cuts[0] = 0;
  for (uint64_t t = 1; t < shares; ++t) cuts[t] = num_blocks * t / shares;
  std::vector<Tally> tallies(shares);
  std::vector<absl::Status> status(shares);
  auto write_share = [&](uint64_t t) {
    status[t] =
        WriteBlocks(cuts[t], cuts[t + 1], filler, &tallies[t],
                    [&](std::string_view piece, uint64_t first) {
                      if (t == 0)
                        bucket_sum_.Update(piece.data(), piece.size());
                      return file.WriteAt(start + first * block_size, piece);
                    });
  };
  {
    std::vector<std::thread> workers;
    for (uint64_t t = 1; t < shares; ++t) workers.emplace_back(write_share, t);
    write_share(0);
    for (std::thread& w : workers) w.join();
  }
  for (uint64_t t = 0; t < shares; ++t) {
    ROOST_RETURN_IF_ERROR(status[t]);
    tally_.Merge(tallies[t]);
  }
  return ChecksumWritten(file, start + cuts[1] * block_size,
                         (num_blocks - cuts[1]) * block_size, &bucket_sum_);
}

absl::Status CuckooTableBuilder::Writer::WriteHeap(WritableFile& file) {
  // Records are gathered into pieces of kPiece bytes that are
  // checksummed and written whole.
  const Slot* slots = placement_.slots();
  std::string piece;
  piece.reserve(kPiece);
  auto write_piece = [&]() {
    heap_sum_.Update(piece.data(), piece.size());
    absl::Status s = file.Append(piece);
    piece.clear();
    return s;
  };
  char lengths[2 * kMaxVarint64Length];
  PairLookahead ahead(b_, slots, num_slots_, /*lines=*/4);
  for (uint64_t i = 0; i < num_slots_; ++i) {
    const uint32_t e = slots[i].entry;
    if (e == kEmpty) continue;
    ahead.Step();
    const std::string_view k = b_.key(e), v = b_.value(e);
    Account(i, k, v, &tally_);
    char* end = EncodeVarint64(lengths, k.size());
    end = EncodeVarint64(end, v.size());
    piece.append(lengths, end - lengths);
    piece.append(k);
    piece.append(v);
    if (piece.size() >= kPiece) ROOST_RETURN_IF_ERROR(write_piece());
  }
  return write_piece();
}

absl::Status CuckooTableBuilder::Writer::Write(const std::string& path) {
  ROOST_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file,
                         WritableFile::Create(path));
  ROOST_RETURN_IF_ERROR(file->AppendZeros(kCuckooHeaderSize));
  ROOST_RETURN_IF_ERROR(WriteBuckets(*file, b_.options_.threads));
  h_.buckets = Region{kCuckooHeaderSize, file->size() - kCuckooHeaderSize,
                      bucket_sum_.Digest()};
  // The heap pass fills the overflow bitmap in the heap layout: it is
  // written over these zeros afterwards.
  const uint64_t overflow_offset = file->size();
  ROOST_RETURN_IF_ERROR(file->AppendZeros(overflow_.size()));
  const uint64_t heap_start = file->size();
  if (!is_inline_) ROOST_RETURN_IF_ERROR(WriteHeap(*file));
  h_.overflow = Region{overflow_offset, overflow_.size(),
                       Checksum64(overflow_.data(), overflow_.size())};
  h_.heap = Region{heap_start, file->size() - heap_start,
                   is_inline_ ? Checksum64(nullptr, 0) : heap_sum_.Digest()};
  h_.file_size = file->size();
  h_.keys_per_hash = tally_.keys_per_hash;
  h_.min_key_length = tally_.min_key;
  h_.max_key_length = tally_.max_key;
  h_.min_value_length = tally_.min_value;
  h_.max_value_length = tally_.max_value;
  report_->key_bytes = tally_.key_bytes;
  report_->value_bytes = tally_.value_bytes;
  if (report_->num_keys == 0) h_.min_key_length = h_.min_value_length = 0;
  ROOST_RETURN_IF_ERROR(file->WriteAt(overflow_offset, overflow_));
  ROOST_RETURN_IF_ERROR(file->WriteAt(0, h_.Encode()));
  ROOST_RETURN_IF_ERROR(file->Close());
  report_->keys_per_hash.assign(h_.keys_per_hash.begin(),
                                h_.keys_per_hash.begin() + h_.num_hashes);
  report_->file_size = h_.file_size;
  report_->min_key_length = h_.min_key_length;
  report_->max_key_length = h_.max_key_length;
  report_->min_value_length = h_.min_value_length;
  report_->max_value_length = h_.max_value_length;
  return absl::OkStatus();
}

}  // namespace roost
