// The displacement search that places a cuckoo table's keys in buckets:
// CuckooTableBuilder::Placement, one attempt at one table size. Only the
// builder includes this; CuckooTableBuilder::Finish (cuckoo_table_builder.cc)
// retries it with more blocks and writes the file from it.
#ifndef ROOST_STORAGE_CUCKOO_CUCKOO_PLACEMENT_H_
#define ROOST_STORAGE_CUCKOO_CUCKOO_PLACEMENT_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "storage/cuckoo/cuckoo_format.h"
#include "storage/cuckoo/cuckoo_table_builder.h"
#include "storage/file.h"
#include "storage/hash.h"

namespace roost {

namespace cuckoo_build {

inline constexpr uint32_t kEmpty = std::numeric_limits<uint32_t>::max();
inline constexpr uint64_t kMaxEntries = kEmpty - 1;
inline constexpr uint32_t kPpm = 1000000;
// Inserting looks this many keys ahead to prefetch their candidate blocks.
inline constexpr uint32_t kLookahead = 16;

// How many shares of its blocks a build on `threads` threads cuts a table
// of `num_blocks` into, for the first pass and for writing: at most one per
// 4,096 blocks, so that a small table is not cut (starting a thread costs
// more than such a share's work).
inline uint64_t SharesFor(int threads, uint64_t num_blocks) {
  return std::clamp<uint64_t>(threads, 1,
                              std::max<uint64_t>(1, num_blocks / 4096));
}

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
  // Whether `block` is the first candidate block of the entry that moves
  // into it (the key being inserted, for a root).
  bool home;
};

// The candidate blocks of one key.
struct Candidates {
  uint64_t hash0 = 0;
  uint64_t blocks[kMaxHashFunctions] = {};
};

}  // namespace cuckoo_build

// The bucket array while keys are placed: one attempt at one table size.
class CuckooTableBuilder::Placement {
 public:
  using Candidates = cuckoo_build::Candidates;
  using Slot = cuckoo_build::Slot;

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
        slots_(num_blocks * buckets_per_block),
        home_((num_blocks * buckets_per_block + 63) / 64),
        occupants_(buckets_per_block) {
    for (int i = 0; i < num_hashes_; ++i) {
      seeds_[i] = CuckooSeed(builder.options_.seed, attempt, i);
    }
  }

  uint64_t num_blocks() const { return num_blocks_; }
  uint32_t buckets_per_block() const { return bpb_; }
  const uint64_t* seeds() const { return seeds_; }
  // Every bucket, block after block: num_blocks() * buckets_per_block().
  const Slot* slots() const { return slots_.data(); }
  // Whether bucket `i` holds an entry in the first of its candidate blocks
  // (so that the writer need not hash its key to learn which one it is in;
  // about 84% of keys at utilization 0.9).
  bool at_home(uint64_t i) const { return (home_[i / 64] >> (i % 64)) & 1; }
  int num_hashes() const { return num_hashes_; }

  void ComputeCandidates(std::string_view key, Candidates* c) const;

  // Places every entry. Returns false if some entry found no bucket (the
  // caller retries with more blocks); an error for a duplicate under kError.
  //
  // Two passes, to put as many keys as possible in their first block (where
  // a lookup finds them with one probe): first every key that fits its first
  // block goes there, in order; then the rest go to another candidate block,
  // displacing keys only when those are full too. A key placed in the first
  // pass can have no earlier duplicate elsewhere: an earlier copy found the
  // same first block with room and is there.
  //
  // The first pass runs on the builder's threads, each over its own share
  // of the blocks; the second, on the calling thread.
  absl::StatusOr<bool> PlaceAll(uint64_t* duplicates);

 private:
  // What the first pass over one share of the blocks did.
  struct HomePass {
    std::vector<uint32_t> deferred;  // in add order
    uint64_t duplicates = 0;
    std::optional<Duplicate> duplicate;  // the error's, under kError
  };

  // The first pass over the keys whose first block is in [lo, hi).
  absl::Status PlaceHomes(uint64_t lo, uint64_t hi, HomePass* pass);
  // The first pass over every key, on the builder's threads: the keys left
  // for the second, in add order.
  absl::StatusOr<std::vector<uint32_t>> PlaceAllHomes(uint64_t* duplicates);

  // Looks for an earlier copy of `entry`'s key in its first `blocks`
  // candidate blocks and applies the duplicate policy. Returns whether the
  // entry was a duplicate (and so is handled); under kError, an error, with
  // the copies in `found`.
  absl::StatusOr<bool> HandleDuplicate(uint32_t entry, const Candidates& c,
                                       int blocks, uint64_t* duplicates,
                                       std::optional<Duplicate>* found);

  Slot* FindDuplicate(std::string_view key, const Candidates& c, int blocks);

  // The first free bucket of `block`, or bpb_ if it is full.
  uint32_t FreeSlot(uint64_t block) const;

  bool Insert(Slot slot, const Candidates& c);

  // Puts `slot` in bucket `i`, recording whether that is its home block.
  void Put(uint64_t i, Slot slot, bool home) {
    slots_[i] = slot;
    const uint64_t bit = uint64_t{1} << (i % 64);
    home_[i / 64] = home ? home_[i / 64] | bit : home_[i / 64] & ~bit;
  }
  // Moves bucket `from`'s entry to bucket `to`, where it is at home or not.
  void Move(uint64_t from, uint64_t to, bool home) {
    Put(to, slots_[from], home);
  }

  // Breadth-first search from the key's candidate blocks for the shortest
  // chain of moves that frees a bucket in one of them. Node n's block was
  // reached by moving the entry in bucket `from_slot` of its parent's block
  // into it.
  bool Displace(Slot slot, const Candidates& c);

  CuckooTableBuilder& b_;
  const int num_hashes_;
  const uint64_t num_blocks_;
  const uint32_t bpb_;
  uint64_t seeds_[kMaxHashFunctions] = {};
  std::vector<Slot, LargeAllocator<Slot>> slots_;
  std::vector<uint64_t> home_;  // a bit per bucket: at_home()
  std::vector<cuckoo_build::BfsNode> bfs_nodes_;
  std::vector<Candidates> occupants_;  // Displace's, one per bucket of a block
  absl::flat_hash_set<uint64_t> visited_;
};

}  // namespace roost

#endif  // ROOST_STORAGE_CUCKOO_CUCKOO_PLACEMENT_H_
