#include "storage/cuckoo/cuckoo_placement.h"

#include <algorithm>
#include <thread>

#include "storage/hash.h"
#include "util/escape.h"
#include "util/status_macros.h"
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

absl::Status CuckooTableBuilder::Placement::PlaceHomes(uint64_t lo, uint64_t hi,
                                                       HomePass* pass) {
  const uint64_t n = b_.num_added_;
  // About 16% of keys miss their first block at utilization 0.9; room for
  // a fifth of this share up front spares the copies of regrowing.
  const double share = static_cast<double>(hi - lo) /
                       static_cast<double>(std::max<uint64_t>(1, num_blocks_));
  pass->deferred.reserve(
      static_cast<size_t>(static_cast<double>(n) * share / 5) + 16);
  // Each pass hashes every key and keeps those whose first block is its
  // own; their blocks are prefetched kLookahead of its own keys ahead.
  struct Pending {
    uint32_t entry;
    uint64_t hash0;
    uint64_t block;
  };
  Pending ring[kLookahead];
  uint32_t head = 0, pending = 0;
  uint64_t next = 0;  // the next key to hash
  auto look_ahead = [&] {
    while (pending < kLookahead && next < n) {
      const uint64_t hash0 = Hash64(b_.key(next), seeds_[0]);
      const uint64_t block = FastRange64(hash0, num_blocks_);
      if (block >= lo && block < hi) {
        __builtin_prefetch(&slots_[block * bpb_]);
        ring[(head + pending) % kLookahead] = {static_cast<uint32_t>(next),
                                               hash0, block};
        ++pending;
      }
      ++next;
    }
  };
  look_ahead();
  while (pending > 0) {
    const Pending p = ring[head];
    head = (head + 1) % kLookahead;
    --pending;
    look_ahead();
    Candidates home;
    home.hash0 = p.hash0;
    home.blocks[0] = p.block;
    ROOST_ASSIGN_OR_RETURN(
        const bool dup,
        HandleDuplicate(p.entry, home, 1, &pass->duplicates, &pass->duplicate));
    if (dup) continue;
    const uint32_t free = FreeSlot(p.block);
    if (free < bpb_) {
      Put(p.block * bpb_ + free, Slot{p.entry, CuckooFingerprint(p.hash0)},
          /*home=*/true);
    } else {
      pass->deferred.push_back(p.entry);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint32_t>>
CuckooTableBuilder::Placement::PlaceAllHomes(uint64_t* duplicates) {
  // The blocks are cut into one share per thread, at multiples of 64 blocks
  // so that no two threads write one word of home_. A key placed by one
  // share's pass touches that share's blocks alone, and each share sees
  // its keys in add order, so the buckets are those of one pass over all.
  const uint64_t threads =
      cuckoo_build::SharesFor(b_.options_.threads, num_blocks_);
  std::vector<uint64_t> cuts(threads + 1, num_blocks_);
  cuts[0] = 0;
  for (uint64_t t = 1; t < threads; ++t) {
    cuts[t] = num_blocks_ * t / threads / 64 * 64;
  }
  std::vector<HomePass> passes(threads);
  std::vector<absl::Status> status(threads);
  {
    std::vector<std::thread> workers;
    for (uint64_t t = 1; t < threads; ++t) {
      workers.emplace_back(
          [&, t] { status[t] = PlaceHomes(cuts[t], cuts[t + 1], &passes[t]); });
    }
    status[0] = PlaceHomes(cuts[0], cuts[1], &passes[0]);
    for (std::thread& w : workers) w.join();
  }
  // A duplicate under kError: the one a single pass would meet first, the
  // lowest second copy.
  int error = -1;
  for (uint64_t t = 0; t < threads; ++t) {
    if (status[t].ok()) continue;
    if (!passes[t].duplicate) return status[t];
    if (error < 0 ||
        passes[t].duplicate->second < passes[error].duplicate->second) {
      error = static_cast<int>(t);
    }
  }
  if (error >= 0) {
    b_.duplicate_ = std::move(passes[error].duplicate);
    return status[error];
  }
  *duplicates = 0;
  for (const HomePass& p : passes) *duplicates += p.duplicates;
  if (threads == 1) return std::move(passes[0].deferred);
  // The deferred keys in add order: each share's list is in add order.
  size_t total = 0;
  for (const HomePass& p : passes) total += p.deferred.size();
  std::vector<uint32_t> deferred;
  deferred.reserve(total);
  for (HomePass& p : passes) {
    const auto middle =
        deferred.insert(deferred.end(), p.deferred.begin(), p.deferred.end());
    std::inplace_merge(deferred.begin(), middle, deferred.end());
    std::vector<uint32_t>().swap(p.deferred);
  }
  return deferred;
}

absl::StatusOr<bool> CuckooTableBuilder::Placement::PlaceAll(
    uint64_t* duplicates) {
  ROOST_ASSIGN_OR_RETURN(const std::vector<uint32_t> deferred,
                         PlaceAllHomes(duplicates));
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
    ROOST_ASSIGN_OR_RETURN(
        const bool dup,
        HandleDuplicate(entry, c, num_hashes_, duplicates, &b_.duplicate_));
    if (dup) continue;
    if (!Insert(Slot{entry, CuckooFingerprint(c.hash0)}, c)) return false;
  }
  return true;
}

absl::StatusOr<bool> CuckooTableBuilder::Placement::HandleDuplicate(
    uint32_t entry, const Candidates& c, int blocks, uint64_t* duplicates,
    std::optional<Duplicate>* found) {
  Slot* dup = FindDuplicate(b_.key(entry), c, blocks);
  if (dup == nullptr) return false;
  switch (b_.options_.on_duplicate) {
    case DuplicatePolicy::kError:
      *found = Duplicate{std::string(b_.key(entry)), dup->entry, entry};
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
