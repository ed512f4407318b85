// FilterBlockBuilder: builds the block table's filter (see filter_block.h
// for what it is and its bytes): a fixed number of 64-byte lines, chosen up
// front, and each key's bits set as it arrives. Memory: the lines alone
// (bits_per_key / 8 bytes a key).
//
// Example:
//   FilterBlockBuilder b(FilterLines(expected_keys, 10), /*bits_per_key=*/10);
//   b.AddHash(FilterHash("apple"));
//   std::string contents = b.Finish();  // lines, then the params
#ifndef ROOST_STORAGE_BLOCK_FILTER_BLOCK_BUILDER_H_
#define ROOST_STORAGE_BLOCK_FILTER_BLOCK_BUILDER_H_

#include <cstdint>
#include <string>

#include "storage/block/filter_block.h"

namespace roost {

class FilterBlockBuilder {
 public:
  // REQUIRES: num_lines >= 1, 1 <= bits_per_key <= kMaxFilterBitsPerKey.
  FilterBlockBuilder(uint64_t num_lines, uint32_t bits_per_key);

  // Sets the hash's bits, a few calls later: the line it falls in is
  // fetched meanwhile (a filter of millions of keys is far larger than the
  // cache, and each key's line is one at random).
  void AddHash(uint64_t hash) {
    __builtin_prefetch(LineFor(hash));
    uint64_t& slot = pending_[added_++ % kPending];
    if (added_ > kPending) SetBits(slot);
    slot = hash;
  }
  // The filter block's contents: the lines, then the params. Call once.
  std::string Finish();

  uint64_t num_lines() const { return num_lines_; }
  int num_probes() const { return num_probes_; }

 private:
  static constexpr uint64_t kPending = 16;

  char* LineFor(uint64_t hash);
  void SetBits(uint64_t hash);

  const uint64_t num_lines_;
  const uint32_t bits_per_key_;
  const int num_probes_;
  std::string lines_;
  uint64_t pending_[kPending] = {};
  uint64_t added_ = 0;
};

}  // namespace roost

#endif  // ROOST_STORAGE_BLOCK_FILTER_BLOCK_BUILDER_H_
