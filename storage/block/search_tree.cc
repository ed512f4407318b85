#include "storage/block/search_tree.h"

#include <algorithm>
#include <limits>
#include <new>

namespace roost {
namespace {

constexpr size_t kLineWords = 8;
constexpr std::align_val_t kLineAlignment{64};

size_t Lines(size_t words) { return (words + kLineWords - 1) / kLineWords; }

}  // namespace

void SearchTree::Free::operator()(uint64_t* p) const {
  ::operator delete[](p, kLineAlignment);
}

SearchTree::SearchTree(std::span<const uint64_t> sorted)
    : size_(sorted.size()) {
  if (sorted.empty()) return;
  max_ = sorted.back();
  // Level sizes, in words: each a whole number of lines; the last is one.
  std::vector<size_t> sizes{kLineWords * Lines(sorted.size())};
  while (sizes.back() > kLineWords) {
    sizes.push_back(kLineWords * Lines(sizes.back() / kLineWords));
  }
  for (const size_t s : sizes) words_ += s;
  memory_.reset(static_cast<uint64_t*>(
      ::operator new[](words_ * sizeof(uint64_t), kLineAlignment)));
  std::fill_n(memory_.get(), words_, std::numeric_limits<uint64_t>::max());
  uint64_t* at = memory_.get();
  std::copy(sorted.begin(), sorted.end(), at);
  levels_.push_back(at);
  for (size_t level = 1; level < sizes.size(); ++level) {
    uint64_t* const below = at;
    at += sizes[level - 1];
    // The last number of each line below (UINT64_MAX for a padded one).
    for (size_t line = 0; line < sizes[level - 1] / kLineWords; ++line) {
      at[line] = below[kLineWords * line + kLineWords - 1];
    }
    levels_.push_back(at);
  }
}

}  // namespace roost
