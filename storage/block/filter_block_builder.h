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

  void AddHash(uint64_t hash);
  // The filter block's contents: the lines, then the params. Call once.
  std::string Finish();

  uint64_t num_lines() const { return num_lines_; }
  int num_probes() const { return num_probes_; }

 private:
  const uint64_t num_lines_;
  const uint32_t bits_per_key_;
  const int num_probes_;
  std::string lines_;
};

}  // namespace roost

#endif  // ROOST_STORAGE_BLOCK_FILTER_BLOCK_BUILDER_H_
