#include "storage/cuckoo/cuckoo_placement.h"

#include "storage/hash.h"
#include "util/escape.h"
#include "util/str_cat.h"

namespace roost {

using cuckoo_build::BfsNode;
using cuckoo_build::kEmpty;
using cuckoo_build::kLookahead;

void CuckooTableBuilder::Placement::ComputeCandidates(std::string_view key,
                                                      Candidates* c) const {
  for (int i = 0; i < num_hashes_; ++i) {
    const uint64_t h = Hash64(key, seeds_[i]);
    if (i == 0) c->hash0 = h;
    c->blocks[i] = FastRange64(h, num_blocks_);
  }
}

absl::StatusOr<bool> CuckooTableBuilder::Placement::PlaceAll(
    uint64_t* duplicates) {
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
      Put(home.blocks[0] * bpb_ + free, Slot{entry, CuckooFingerprint(hash0)},
          /*home=*/true);
    } else {
      deferred.push_back(entry);
    }
  }
  // The deferred keys are read kLookahead ahead (their candidate blocks
  // prefetched) and their bytes 2 * kLookahead ahead.
  Candidates ahead[kLookahead];
  auto look_ahead = [&](uint64_t j) {
    if (j + 2 * kLookahead < deferred.size()) {
      __builtin_prefetch(b_.key(deferred[j + 2 * kLookahead]).data());
    }
    if (j + kLookahead < deferred.size()) {
      Candidates& c = ahead[j % kLookahead];
      ComputeCandidates(b_.key(deferred[j + kLookahead]), &c);
      for (int h = 0; h < num_hashes_; ++h) {
        __builtin_prefetch(&slots_[c.blocks[h] * bpb_]);
      }
    }
  };
  for (uint64_t j = 0; j < std::min<uint64_t>(deferred.size(), kLookahead);
       ++j) {
    ComputeCandidates(b_.key(deferred[j]), &ahead[j]);
  }
  for (uint64_t j = 0; j < deferred.size(); ++j) {
    const uint32_t entry = deferred[j];
    const Candidates c = ahead[j % kLookahead];
    look_ahead(j);
    absl::StatusOr<bool> dup =
        HandleDuplicate(entry, c, num_hashes_, duplicates);
    if (!dup.ok()) return dup.status();
    if (*dup) continue;
    if (!Insert(Slot{entry, CuckooFingerprint(c.hash0)}, c)) return false;
  }
  return true;
}

absl::StatusOr<bool> CuckooTableBuilder::Placement::HandleDuplicate(
    uint32_t entry, const Candidates& c, int blocks, uint64_t* duplicates) {
  Slot* dup = FindDuplicate(b_.key(entry), c, blocks);
  if (dup == nullptr) return false;
  switch (b_.options_.on_duplicate) {
    case DuplicatePolicy::kError:
      b_.duplicate_ = Duplicate{std::string(b_.key(entry)), dup->entry, entry};
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

CuckooTableBuilder::Placement::Slot*
CuckooTableBuilder::Placement::FindDuplicate(std::string_view key,
                                             const Candidates& c, int blocks) {
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

uint32_t CuckooTableBuilder::Placement::FreeSlot(uint64_t block) const {
  const Slot* s = &slots_[block * bpb_];
  for (uint32_t i = 0; i < bpb_; ++i) {
    if (s[i].entry == kEmpty) return i;
  }
  return bpb_;
}

bool CuckooTableBuilder::Placement::Insert(Slot slot, const Candidates& c) {
  for (int h = 0; h < num_hashes_; ++h) {
    const uint32_t free = FreeSlot(c.blocks[h]);
    if (free < bpb_) {
      // The first index of a block that is free: blocks[h] is blocks[0] only
      // if that one was free already.
      Put(c.blocks[h] * bpb_ + free, slot, h == 0);
      return true;
    }
  }
  return Displace(slot, c);
}

bool CuckooTableBuilder::Placement::Displace(Slot slot, const Candidates& c) {
  std::vector<BfsNode>& nodes = bfs_nodes_;
  nodes.clear();
  visited_.clear();
  for (int h = 0; h < num_hashes_; ++h) {
    if (visited_.insert(c.blocks[h]).second) {
      nodes.push_back({c.blocks[h], -1, 0, 0, h == 0});
    }
  }
  std::vector<Candidates>& occ = occupants_;
  for (size_t head = 0; head < nodes.size(); ++head) {
    const BfsNode node = nodes[head];
    if (node.depth >= b_.options_.max_displacement_depth) continue;
    const Slot* block = &slots_[node.block * bpb_];
    // The occupants' keys lie at random in the arena and their candidate
    // blocks at random in the buckets: each step's loads are started
    // together, so that their cache misses overlap.
    for (uint32_t s = 0; s < bpb_; ++s) {
      __builtin_prefetch(b_.key(block[s].entry).data());
    }
    for (uint32_t s = 0; s < bpb_; ++s) {
      ComputeCandidates(b_.key(block[s].entry), &occ[s]);
      for (int h = 0; h < num_hashes_; ++h) {
        __builtin_prefetch(&slots_[occ[s].blocks[h] * bpb_]);
      }
    }
    for (uint32_t s = 0; s < bpb_; ++s) {
      for (int h = 0; h < num_hashes_; ++h) {
        const uint64_t target = occ[s].blocks[h];
        if (target == node.block) continue;
        const uint32_t free = FreeSlot(target);
        if (free < bpb_) {
          // Shift every entry on the path one step down, then place. The
          // first index of `target` among the occupant's candidates is h:
          // an earlier one equal to it would have found the same free
          // bucket, or be `node.block`, which is full.
          Move(node.block * bpb_ + s, target * bpb_ + free, h == 0);
          uint32_t free_slot = s;
          int32_t cur = static_cast<int32_t>(head);
          while (nodes[cur].parent >= 0) {
            const BfsNode& parent = nodes[nodes[cur].parent];
            Move(parent.block * bpb_ + nodes[cur].from_slot,
                 nodes[cur].block * bpb_ + free_slot, nodes[cur].home);
            free_slot = nodes[cur].from_slot;
            cur = nodes[cur].parent;
          }
          Put(nodes[cur].block * bpb_ + free_slot, slot, nodes[cur].home);
          return true;
        }
        if (visited_.insert(target).second) {
          nodes.push_back(
              {target, static_cast<int32_t>(head), s, node.depth + 1, h == 0});
        }
      }
    }
  }
  return false;
}

}  // namespace roost
