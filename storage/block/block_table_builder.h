// BlockTableBuilder: writes a sorted, block-based table file, streaming.
//
// Keys must arrive in strictly increasing bytewise order. Entries fill data
// blocks of about block_size bytes (prefix-compressed, with restart points
// and optionally a hash index), each compressed on its own and followed by
// a trailer with its compression type and checksum. At Finish() the index
// block (one separator key and handle per data block) and the footer are
// written. Memory is bounded by one block plus the index: a few bytes per
// data block, whatever the number of entries.
//
// With filter_bits_per_key > 0 the file is format 2.0 and holds a Bloom
// filter of every key (filter_block.h), written between the data blocks and
// the index, which lets a lookup of a missing key stop after one cache line.
// Given expected_keys, the filter is sized up front and each key's bits are
// set as it arrives: memory grows by the filter itself, bits_per_key / 8
// bytes a key. Without it, the builder keeps each key's 64-bit hash until
// Finish() (8 bytes a key) and sizes the filter from the real count.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(auto builder,
//                          BlockTableBuilder::Create("/tmp/t.sst", {}));
//   ROOST_RETURN_IF_ERROR(builder->Add("apple", "1"));
//   ROOST_RETURN_IF_ERROR(builder->Add("banana", "2"));
//   ROOST_ASSIGN_OR_RETURN(BlockBuildReport report, builder->Finish());
//
// See docs/format/block_table.md for the file.
#ifndef ROOST_STORAGE_BLOCK_BLOCK_TABLE_BUILDER_H_
#define ROOST_STORAGE_BLOCK_BLOCK_TABLE_BUILDER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/block/block_format.h"
#include "storage/block/data_block_builder.h"
#include "storage/block/filter_block_builder.h"
#include "storage/file.h"

namespace roost {

struct BlockBuildOptions {
  // Target size of a data block before compression, in bytes. The default
  // value is 4096.
  uint32_t block_size = 4096;
  // Entries between restart points (full keys). The default value is 16.
  uint32_t restart_interval = 16;
  // Give data blocks a hash index for one-interval point lookups. The
  // default value is true.
  bool hash_index = true;
  // Entries per hash index bucket, in (0, 1]. The default value is 0.75.
  double hash_index_utilization = 0.75;
  // Per-block compression. The default value is Compression::kNone.
  Compression compression = Compression::kNone;
  // How readers search the index block. The default value is
  // IndexSearch::kAuto.
  IndexSearch index_search = IndexSearch::kAuto;
  // kAuto interpolates when the coefficient of variation of the gaps between
  // index keys is below this. The default value is 0.2.
  double uniformity_threshold = 0.2;
  // Bits a key of the table's Bloom filter, 0 to 32; 0 writes no filter and
  // a format 1.0 file, byte for byte as before filters. 10 gives about 1%
  // false positives. (roost-load's --filter-bits-per-key defaults to 10.)
  // The default value is 0.
  uint32_t filter_bits_per_key = 0;
  // How many keys will be added, when known: the filter is sized for this
  // many and filled as keys arrive. More keys than this raise the filter's
  // false positive rate (never a false negative); fewer leave it larger than
  // needed. 0 means unknown: each key's hash is kept until Finish(). The
  // default value is 0.
  uint64_t expected_keys = 0;
};

// The format version Create() with `options` writes: "1.0", or "2.0" with a
// filter.
std::string BlockFormatVersion(const BlockBuildOptions& options);

struct BlockBuildReport {
  uint64_t num_keys = 0;
  uint64_t num_data_blocks = 0;
  uint64_t compressed_blocks = 0;
  uint64_t raw_bytes = 0;  // keys + values
  uint64_t file_size = 0;
  bool is_uniform = false;
  double uniformity_cv = 0;
  uint64_t filter_bytes = 0;  // the filter's lines; 0 without a filter
  int filter_probes = 0;
};

// InvalidArgument naming the first option out of its range (see above).
// Create() checks the same; a tool can call it before reading any input.
absl::Status ValidateBlockBuildOptions(const BlockBuildOptions& options);

class BlockTableBuilder {
 public:
  // Creates (or truncates) `path`. InvalidArgument for bad options.
  static absl::StatusOr<std::unique_ptr<BlockTableBuilder>> Create(
      const std::string& path, const BlockBuildOptions& options);
  // Abandons the file unless Finish() succeeded.
  ~BlockTableBuilder();

  // REQUIRES: key is greater than the last key added; otherwise
  // InvalidArgument naming the key, and the builder is abandoned. Key and
  // value together must be at most 1 GiB.
  absl::Status Add(std::string_view key, std::string_view value);
  // Writes the index and footer and closes the file (not fsynced).
  absl::StatusOr<BlockBuildReport> Finish();

  // Pairs added so far.
  uint64_t num_added() const { return report_.num_keys; }

 private:
  BlockTableBuilder(std::unique_ptr<WritableFile> file,
                    const BlockBuildOptions& options);
  absl::StatusOr<BlockBuildReport> FinishFile();
  absl::Status FlushDataBlock();
  absl::Status WriteBlock(std::string_view raw, Compression type,
                          BlockHandle* handle);
  // Writes the padding and the filter block; sets footer->filter.
  absl::Status WriteFilter(BlockTableFooter* footer);

  const BlockBuildOptions options_;
  std::unique_ptr<WritableFile> file_;
  DataBlockBuilder data_;
  // The last block's handle and last key, waiting for the first key of the
  // next block to choose a separator.
  bool pending_index_ = false;
  BlockHandle pending_handle_;
  std::string pending_last_key_;
  std::vector<std::string> index_keys_;
  std::vector<BlockHandle> index_handles_;
  std::string last_key_;
  std::string compressed_;
  absl::Status status_;  // sticky
  uint32_t max_key_length_ = 0;
  BlockBuildReport report_;
  uint64_t raw_key_bytes_ = 0;
  uint64_t raw_value_bytes_ = 0;
  // The filter, filled as keys arrive (expected_keys given), or the keys'
  // filter hashes until Finish() (not given).
  std::optional<FilterBlockBuilder> filter_;
  std::vector<uint64_t> filter_hashes_;
};

// A short key s with a <= s < b, by LevelDB's FindShortestSeparator rule:
// `a` cut after the first byte where it differs from `b`, with that byte
// raised by one, when that still sorts before `b`; otherwise `a` itself.
// REQUIRES: a < b.
std::string ShortestSeparator(std::string_view a, std::string_view b);

// Index keys as numbers for interpolation: the 8 bytes after `prefix_length`
// bytes, big-endian, zero-padded on the right (so bytewise order holds).
uint64_t KeyToNumber(std::string_view key, size_t prefix_length);

}  // namespace roost

#endif  // ROOST_STORAGE_BLOCK_BLOCK_TABLE_BUILDER_H_
