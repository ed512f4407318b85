// SearchTree: a sorted array of 64-bit numbers, and above it a small static
// B+tree for lower_bound searches that touch one cache line a level.
//
// Level 0 is the numbers themselves, in order, 64-byte aligned and padded
// with UINT64_MAX to a whole number of lines (8 numbers each). Level k + 1
// holds the last (largest) number of each line of level k, padded the same
// way, up to a root of one line. A search reads the root, counts the
// numbers below the target (8 comparisons, no branch), and goes down into
// that line of the level below, and so on: log8(n) lines in all. The levels
// above 0 hold one number in 8 of the level below, 1/7 of the numbers in
// all, so for the block table's index (one number a data block) they stay
// in cache and a search misses it about once, on level 0, where a binary
// search over the sorted array misses it at nearly every probe of its last
// half.
//
// The block table builds one at Open from its index keys (KeyToNumber); it
// is in memory only, not in the file. Thread-safe once built.
//
// Example:
//   SearchTree tree(std::vector<uint64_t>{1, 5, 9});
//   tree.LowerBound(6);  // 2
//   tree.data()[2];      // 9
#ifndef ROOST_STORAGE_BLOCK_SEARCH_TREE_H_
#define ROOST_STORAGE_BLOCK_SEARCH_TREE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace roost {

class SearchTree {
 public:
  SearchTree() = default;
  // REQUIRES: `sorted` is in non-decreasing order.
  explicit SearchTree(std::span<const uint64_t> sorted);

  // The first i with data()[i] >= target; size() if there is none.
  size_t LowerBound(uint64_t target) const {
    if (size_ == 0 || target > max_) return size_;
    size_t group = 0;  // the line of the current level to look in
    for (size_t level = levels_.size(); level-- > 0;) {
      const uint64_t* line = levels_[level] + 8 * group;
      size_t below = 0;
      for (int i = 0; i < 8; ++i) below += line[i] < target;
      group = 8 * group + below;
    }
    return group;
  }

  // The numbers in order (level 0), padded after size() with UINT64_MAX to
  // a multiple of 8.
  const uint64_t* data() const { return size_ ? levels_[0] : nullptr; }
  size_t size() const { return size_; }
  // Bytes held, all levels.
  size_t memory_bytes() const { return 8 * words_; }

 private:
  struct Free {
    void operator()(uint64_t* p) const;
  };
  std::unique_ptr<uint64_t[], Free> memory_;
  size_t words_ = 0;
  size_t size_ = 0;
  uint64_t max_ = 0;
  std::vector<const uint64_t*> levels_;  // levels_[0] is the numbers
};

}  // namespace roost

#endif  // ROOST_STORAGE_BLOCK_SEARCH_TREE_H_
