// DataBlock: reads one block written by DataBlockBuilder (see
// data_block_builder.h for the grammar), in place: a DataBlock is a view and
// copies nothing.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(DataBlock block, DataBlock::Parse(path, contents));
//   std::string_view value;
//   if (block.Get("apple", /*use_hash=*/true, &value) == DataBlock::kFound) ...
//
// Every offset and length read from the block is checked against its size:
// a damaged block reads as kCorrupt, never outside the block.
#ifndef ROOST_STORAGE_BLOCK_DATA_BLOCK_H_
#define ROOST_STORAGE_BLOCK_DATA_BLOCK_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace roost {

class DataBlock {
 public:
  enum Result { kFound, kNotFound, kCorrupt };

  // Parses the restart array and hash index at the end of `contents`, which
  // must outlive the DataBlock. `path` names the file in errors.
  static absl::StatusOr<DataBlock> Parse(std::string_view path,
                                         std::string_view contents);

  // Looks `key` up. With `use_hash` and a hash index, decodes only the
  // restart interval the index names; otherwise binary-searches the
  // restarts. On kFound sets *value to a view into the block.
  Result Get(std::string_view key, bool use_hash,
             std::string_view* value) const;

  uint32_t num_restarts() const { return num_restarts_; }
  bool has_hash_index() const { return buckets_ != nullptr; }

  // The entry at restart `i` (whose key is stored whole). For blocks with a
  // restart interval of 1, such as the index block, that is entry i.
  // REQUIRES: i < num_restarts().
  Result RestartEntry(uint32_t i, std::string_view* key,
                      std::string_view* value) const;

  // Walks the entries in key order.
  class Iterator {
   public:
    explicit Iterator(const DataBlock& block) : block_(&block) {}
    void SeekToFirst();
    // Positions at the first entry whose key is >= target.
    void Seek(std::string_view target);
    // REQUIRES: Valid().
    void Next();
    bool Valid() const { return valid_; }
    // Whether iteration stopped on a damaged entry.
    bool corrupt() const { return corrupt_; }
    // REQUIRES: Valid(). key() lives until the next move; value() as long as
    // the block's contents.
    std::string_view key() const { return key_; }
    std::string_view value() const { return value_; }

   private:
    // Decodes the entry at next_, making it current; with `check_order`,
    // treats a key not greater than the current one as damage.
    bool ParseNext(bool check_order = false);
    void SeekToRestart(uint32_t i);

    const DataBlock* block_;
    uint32_t next_ = 0;  // offset of the entry after the current one
    std::string key_;
    std::string_view value_;
    bool valid_ = false;
    bool corrupt_ = false;
  };

 private:
  DataBlock() = default;
  uint32_t RestartOffset(uint32_t i) const;
  // Index of the last restart whose key is <= key (0 if none is).
  Result FindRestart(std::string_view key, uint32_t* index) const;
  // Scans restart interval i (REQUIRES: i < num_restarts_) for `key`, its
  // lines asked for at once first.
  Result ScanInterval(std::string_view key, uint32_t i,
                      std::string_view* value) const;
  // Scans entries from `offset` up to `limit` for `key`.
  Result ScanFor(std::string_view key, uint32_t offset, uint32_t limit,
                 std::string_view* value) const;

  const char* data_ = nullptr;
  uint32_t entries_size_ = 0;  // entries occupy [0, entries_size_)
  const char* restarts_ = nullptr;
  uint32_t num_restarts_ = 0;
  const uint8_t* buckets_ = nullptr;  // hash index, or null
  uint32_t num_buckets_ = 0;
};

}  // namespace roost

#endif  // ROOST_STORAGE_BLOCK_DATA_BLOCK_H_
