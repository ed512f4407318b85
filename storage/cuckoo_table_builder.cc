#include "storage/cuckoo_table_builder.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "storage/coding.h"
#include "storage/file.h"
#include "storage/hash.h"
#include "util/escape.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

constexpr uint32_t kEmpty = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kMaxEntries = kEmpty - 1;
constexpr uint32_t kPpm = 1000000;
// Inserting looks this many keys ahead to prefetch their candidate blocks.
constexpr uint32_t kLookahead = 8;

// One bucket while placing: the entry it holds and that entry's fingerprint,
// so that duplicate checks rarely touch the keys themselves.
struct Slot {
  uint32_t entry = kEmpty;
  uint32_t fingerprint = 0;
};

// A block reached by the displacement search: moving the entry in bucket
// `from_slot` of the parent node's block into this block frees that bucket.
struct BfsNode {
  uint64_t block;
  int32_t parent;  // -1 for a candidate block of the key being inserted
  uint32_t from_slot;
  int depth;
};

// The candidate blocks of one key.
struct Candidates {
  uint64_t hash0 = 0;
  uint64_t blocks[kMaxHashFunctions] = {};
};

}  // namespace

// The bucket array while keys are placed: one attempt at one table size.
class CuckooTableBuilder::Placement {
 public:
  // Attempt `attempt` (0 first) hashes with seeds of its own: keys whose
  // hashes crowd a few blocks at one table size crowd them at every size,
  // since a block is picked from a hash's top bits in proportion to the
  // size, so a retry needs new hashes as well as more blocks.
  Placement(CuckooTableBuilder& builder, uint64_t num_blocks,
            uint32_t buckets_per_block, int attempt)
      : b_(builder),
        num_hashes_(builder.options_.num_hash_functions),
        num_blocks_(num_blocks),
        bpb_(buckets_per_block),
        slots_(num_blocks * buckets_per_block) {
    for (int i = 0; i < num_hashes_; ++i) {
      seeds_[i] = CuckooSeed(builder.options_.seed, attempt, i);
    }
  }

  uint64_t num_blocks() const { return num_blocks_; }
  uint32_t buckets_per_block() const { return bpb_; }
  const uint64_t* seeds() const { return seeds_; }
  const Slot& slot(uint64_t block, uint32_t i) const {
    return slots_[block * bpb_ + i];
  }
  int num_hashes() const { return num_hashes_; }

  void ComputeCandidates(std::string_view key, Candidates* c) const {
    for (int i = 0; i < num_hashes_; ++i) {
      const uint64_t h = Hash64(key, seeds_[i]);
      if (i == 0) c->hash0 = h;
      c->blocks[i] = FastRange64(h, num_blocks_);
    }
  }

  // Places every entry. Returns false if some entry found no bucket (the
  // caller retries with more blocks); an error for a duplicate under kError.
  //
  // Two passes, to put as many keys as possible in their first block (where
  // a lookup finds them with one probe): first every key that fits its first
  // block goes there, in order; then the rest go to another candidate block,
  // displacing keys only when those are full too. A key placed in the first
  // pass can have no earlier duplicate elsewhere: an earlier copy found the
  // same first block with room and is there.
  absl::StatusOr<bool> PlaceAll(uint64_t* duplicates) {
    const uint64_t n = b_.num_added_;
    *duplicates = 0;
    // About 16% of keys miss their first block at utilization 0.9; room for
    // a fifth up front spares the copies (and peak memory) of regrowing.
    std::vector<uint32_t> deferred;
    deferred.reserve(n / 5 + 16);
    uint64_t ring[kLookahead];
    auto home_of = [&](uint64_t i) {
      const uint64_t hash0 = Hash64(b_.key(i), seeds_[0]);
      __builtin_prefetch(&slots_[FastRange64(hash0, num_blocks_) * bpb_]);
      return hash0;
    };
    for (uint64_t i = 0; i < std::min<uint64_t>(n, kLookahead); ++i) {
      ring[i] = home_of(i);
    }
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t hash0 = ring[i % kLookahead];
      if (i + kLookahead < n) ring[i % kLookahead] = home_of(i + kLookahead);
      Candidates home;
      home.hash0 = hash0;
      home.blocks[0] = FastRange64(hash0, num_blocks_);
      const auto entry = static_cast<uint32_t>(i);
      absl::StatusOr<bool> dup = HandleDuplicate(entry, home, 1, duplicates);
      if (!dup.ok() || *dup) {
        if (!dup.ok()) return dup.status();
        continue;
      }
      const uint32_t free = FreeSlot(home.blocks[0]);
      if (free < bpb_) {
        slots_[home.blocks[0] * bpb_ + free] =
            Slot{entry, CuckooFingerprint(hash0)};
      } else {
        deferred.push_back(entry);
      }
    }
    Candidates c;
    for (const uint32_t entry : deferred) {
      ComputeCandidates(b_.key(entry), &c);
      absl::StatusOr<bool> dup =
          HandleDuplicate(entry, c, num_hashes_, duplicates);
      if (!dup.ok()) return dup.status();
      if (*dup) continue;
      if (!Insert(Slot{entry, CuckooFingerprint(c.hash0)}, c)) return false;
    }
    return true;
  }

 private:
  // Looks for an earlier copy of `entry`'s key in its first `blocks`
  // candidate blocks and applies the duplicate policy. Returns whether the
  // entry was a duplicate (and so is handled).
  absl::StatusOr<bool> HandleDuplicate(uint32_t entry, const Candidates& c,
                                       int blocks, uint64_t* duplicates) {
    Slot* dup = FindDuplicate(b_.key(entry), c, blocks);
    if (dup == nullptr) return false;
    switch (b_.options_.on_duplicate) {
      case DuplicatePolicy::kError:
        b_.duplicate_ =
            Duplicate{std::string(b_.key(entry)), dup->entry, entry};
        return absl::InvalidArgumentError(
            StrCat("duplicate key ", PrintableKey(b_.key(entry)), " (pairs ",
                   dup->entry, " and ", entry, ", counting from 0)"));
      case DuplicatePolicy::kKeepFirst:
        break;
      case DuplicatePolicy::kKeepLast:
        dup->entry = entry;
        break;
    }
    ++*duplicates;
    return true;
  }

  Slot* FindDuplicate(std::string_view key, const Candidates& c, int blocks) {
    const uint32_t fp = CuckooFingerprint(c.hash0);
    for (int h = 0; h < blocks; ++h) {
      Slot* block = &slots_[c.blocks[h] * bpb_];
      for (uint32_t s = 0; s < bpb_; ++s) {
        if (block[s].entry != kEmpty && block[s].fingerprint == fp &&
            b_.key(block[s].entry) == key) {
          return &block[s];
        }
      }
    }
    return nullptr;
  }

  // The first free bucket of `block`, or bpb_ if it is full.
  uint32_t FreeSlot(uint64_t block) const {
    const Slot* s = &slots_[block * bpb_];
    for (uint32_t i = 0; i < bpb_; ++i) {
      if (s[i].entry == kEmpty) return i;
    }
    return bpb_;
  }

  bool Insert(Slot slot, const Candidates& c) {
    for (int h = 0; h < num_hashes_; ++h) {
      const uint32_t free = FreeSlot(c.blocks[h]);
      if (free < bpb_) {
        slots_[c.blocks[h] * bpb_ + free] = slot;
        return true;
      }
    }
    return Displace(slot, c);
  }

  // Breadth-first search from the key's candidate blocks for the shortest
  // chain of moves that frees a bucket in one of them. Node n's block was
  // reached by moving the entry in bucket `from_slot` of its parent's block
  // into it.
  bool Displace(Slot slot, const Candidates& c) {
    std::vector<BfsNode>& nodes = bfs_nodes_;
    nodes.clear();
    visited_.clear();
    for (int h = 0; h < num_hashes_; ++h) {
      if (visited_.insert(c.blocks[h]).second) {
        nodes.push_back({c.blocks[h], -1, 0, 0});
      }
    }
    Candidates occ;
    for (size_t head = 0; head < nodes.size(); ++head) {
      const BfsNode node = nodes[head];
      if (node.depth >= b_.options_.max_displacement_depth) continue;
      for (uint32_t s = 0; s < bpb_; ++s) {
        ComputeCandidates(b_.key(slots_[node.block * bpb_ + s].entry), &occ);
        for (int h = 0; h < num_hashes_; ++h) {
          const uint64_t target = occ.blocks[h];
          if (target == node.block) continue;
          const uint32_t free = FreeSlot(target);
          if (free < bpb_) {
            // Shift every entry on the path one step down, then place.
            slots_[target * bpb_ + free] = slots_[node.block * bpb_ + s];
            uint32_t free_slot = s;
            int32_t cur = static_cast<int32_t>(head);
            while (nodes[cur].parent >= 0) {
              const BfsNode& parent = nodes[nodes[cur].parent];
              slots_[nodes[cur].block * bpb_ + free_slot] =
                  slots_[parent.block * bpb_ + nodes[cur].from_slot];
              free_slot = nodes[cur].from_slot;
              cur = nodes[cur].parent;
            }
            slots_[nodes[cur].block * bpb_ + free_slot] = slot;
            return true;
          }
          if (visited_.insert(target).second) {
            nodes.push_back(
                {target, static_cast<int32_t>(head), s, node.depth + 1});
          }
        }
      }
    }
    return false;
  }

  CuckooTableBuilder& b_;
  const int num_hashes_;
  const uint64_t num_blocks_;
  const uint32_t bpb_;
  uint64_t seeds_[kMaxHashFunctions] = {};
  std::vector<Slot> slots_;
  std::vector<BfsNode> bfs_nodes_;
  absl::flat_hash_set<uint64_t> visited_;
};

CuckooTableBuilder::CuckooTableBuilder(CuckooBuildOptions options)
    : options_(options) {}

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

absl::StatusOr<CuckooBuildReport> CuckooTableBuilder::Finish(
    const std::string& path) {
  ROOST_RETURN_IF_ERROR(ValidateCuckooBuildOptions(options_));
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
      ROOST_RETURN_IF_ERROR(WriteTable(path, placement, &report));
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
