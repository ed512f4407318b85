// BlockTable: a read-only, memory-mapped block-based table.
//
// Open() maps a file written by BlockTableBuilder, validates its footer and
// every block handle in the index against the file, and by default verifies
// every block checksum. A lookup in a table with a filter (format 2.0) tests
// the key's line of the Bloom filter, read while the index is searched, and a
// key the filter rules out misses before any data block is read. It finds the
// data block through the index (a search tree over the index keys as numbers,
// kept in memory, or interpolation), then the key inside it (one restart
// interval through the hash index, or a binary search of the restarts).
// Uncompressed blocks are read in place; compressed ones are decompressed into
// the block cache (block_cache.h), which the process's tables share, keyed by
// an id this table draws from it at Open. Thread-safe.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(auto table, BlockTable::Open("/data/t.sst"));
//   BlockTable::Value value;
//   ROOST_ASSIGN_OR_RETURN(bool found, table->Get("apple", &value));
//   if (found) Use(value.view());
//   std::unique_ptr<TableIterator> it = table->NewIterator();
//   for (it->Seek("a"); it->Valid(); it->Next()) ...
#ifndef ROOST_STORAGE_BLOCK_BLOCK_TABLE_H_
#define ROOST_STORAGE_BLOCK_BLOCK_TABLE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/block/block_cache.h"
#include "storage/block/block_format.h"
#include "storage/block/data_block.h"
#include "storage/block/filter_block.h"
#include "storage/block/search_tree.h"
#include "storage/file.h"
#include "storage/table.h"

namespace roost {

class BlockTable final : public Table {
 public:
  // A looked-up value: a view valid while this object and the table live
  // (it pins a decompressed block, if the value sits in one).
  class Value {
   public:
    std::string_view view() const { return view_; }

   private:
    friend class BlockTable;
    std::string_view view_;
    std::shared_ptr<const std::string> pin_;
  };

  // Opens `path` with `options`' load_mode, verify_checksums, block_cache,
  // index_search, use_hash_index and use_filter (read_options.h).
  static absl::StatusOr<std::unique_ptr<BlockTable>> Open(
      const std::string& path, const TableReadOptions& options = {});

  // Looks `key` up: true and *value on a hit, false on a miss, DataLoss for
  // a damaged block.
  absl::StatusOr<bool> Get(std::string_view key, Value* value) const;

  // Table: each key as Get() finds it, its decompressed block (if any)
  // pinned in *pins. Keys go through in groups of 16, each step for the
  // whole group before the next (hash and prefetch the filter lines; test
  // the filter, search the index and prefetch the data blocks; look the
  // keys up in their blocks), so that their cache misses overlap.
  absl::Status MultiGet(std::span<const std::string_view> keys,
                        std::span<LookupResult> results,
                        ValuePins* pins) const override;
  using Table::Get;
  // Table: the data block of each key the filter does not rule out, found
  // through the index (both in memory: resident_index_and_filter).
  size_t RequestPages(std::span<const std::string_view> keys) const override;

  // Table: a scan in key order, block by block (a compressed block pinned
  // while the iterator is in it). DataLoss in status() when it meets a
  // damaged block.
  std::unique_ptr<TableIterator> NewIterator() const override;

  const BlockTableFooter& footer() const { return footer_; }
  TableFormat format() const override { return TableFormat::kBlock; }
  uint64_t num_keys() const override { return footer_.num_entries; }
  uint32_t max_key_length() const override { return footer_.max_key_length; }
  // The block cache this table's decompressed blocks go into: the one
  // TableReadOptions::block_cache gave, or the table's own.
  const BlockCache& cache() const { return *cache_; }
  std::string_view file_data() const override { return file_->data(); }
  const std::string& path() const override { return file_->path(); }
  TableProperties properties() const override;
  std::string Describe() const override;
  // The index search in use.
  IndexSearch index_search() const { return index_search_; }
  // The table's filter, or null (format 1.0).
  const FilterBlock* filter() const { return filter_ ? &*filter_ : nullptr; }

  // Checks every block's checksum. DataLoss on a mismatch.
  absl::Status VerifyChecksums() const override;

 private:
  class Iterator final : public TableIterator {
   public:
    void SeekToFirst() override;
    void Seek(std::string_view target) override;
    void Next() override;
    bool Valid() const override { return valid_; }
    absl::Status status() const override { return status_; }
    std::string_view key() const override { return entry_->key(); }
    std::string_view value() const override { return entry_->value(); }

   private:
    friend class BlockTable;
    explicit Iterator(const BlockTable* table) : table_(table) {}
    // Loads data block `index` and positions before its first entry.
    bool LoadBlock(uint64_t index);
    void SkipExhaustedBlocks();

    const BlockTable* table_;
    uint64_t block_index_ = 0;
    std::shared_ptr<const std::string> pin_;
    std::optional<DataBlock> block_;
    std::optional<DataBlock::Iterator> entry_;
    bool valid_ = false;
    absl::Status status_;
  };

  BlockTable(std::unique_ptr<MappedFile> file, const BlockTableFooter& footer,
             const TableReadOptions& options, DataBlock index);
  absl::Status ValidateIndex();
  // The first data block whose separator is >= key; num_data_blocks if none.
  absl::StatusOr<uint64_t> FindBlock(std::string_view key) const;
  // Data block `index`: in place, or decompressed and pinned.
  absl::StatusOr<DataBlock> LoadBlock(
      uint64_t index, std::shared_ptr<const std::string>* pin) const;
  // Starts reading the tail of data block `index`, if it is read in place.
  void PrefetchBlock(uint64_t index) const;
  BlockHandle Handle(uint64_t index) const;

  std::unique_ptr<MappedFile> file_;
  // The index block and the filter, copied (resident_index_and_filter):
  // index_ and filter_ view these bytes rather than the mapping's.
  std::optional<AnonymousBuffer> resident_;
  BlockTableFooter footer_;
  TableReadOptions options_;
  DataBlock index_;  // the index block, written in the data blocks' grammar
  IndexSearch index_search_;
  bool interpolate_;         // use interpolation for this table
  size_t index_prefix_ = 0;  // common prefix of the first and last index keys
  std::string_view first_index_key_, last_index_key_;  // in the mapping
  // KeyToNumber of each index key after index_prefix_, in order, and the
  // search tree above them.
  SearchTree index_numbers_;
  std::optional<FilterBlock> filter_;
  const FilterBlock* filter_in_use_ = nullptr;  // null: no filter, or unused
  std::vector<uint64_t> block_offsets_;  // handle offsets, validated at Open
  // Each data block's compression, from its trailer, read once at Open so
  // that a lookup does not miss the cache on the trailer's line.
  std::vector<Compression> block_types_;
  // The most a data block can hold uncompressed (MaxBlockContents).
  uint64_t max_block_contents_;
  const std::shared_ptr<BlockCache> cache_;
  const uint64_t cache_id_;  // this table's blocks' key in cache_
};

}  // namespace roost

#endif  // ROOST_STORAGE_BLOCK_BLOCK_TABLE_H_
