// The block-based table's on-disk pieces: block handles, the block trailer
// (compression type and checksum), compression, and the fixed-size footer.
// docs/format/block_table.md has the byte map.
//
//   data block 0 | trailer | data block 1 | trailer | ...
//   [2.0: zero padding to a multiple of 64 | filter block | trailer]
//   index block | trailer
//   footer (128 bytes, ends with the XXH3-64 of its first 120 bytes)
#ifndef ROOST_STORAGE_BLOCK_BLOCK_FORMAT_H_
#define ROOST_STORAGE_BLOCK_BLOCK_FORMAT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace roost {

inline constexpr std::string_view kBlockTableMagic = "roostBT\x01";
// Format versions: 1.0, data blocks and an index; 2.0, the same with a
// filter block between them (its handle in the footer's reserved bytes). A
// writer writes 1.0 unless asked for a filter; a reader reads both.
inline constexpr uint16_t kBlockTableMajorVersion = 1;
inline constexpr uint16_t kBlockTableFilterMajorVersion = 2;
inline constexpr uint16_t kBlockTableMinorVersion = 0;
inline constexpr uint32_t kBlockTableFooterSize = 128;
// After every block: compression type (1 byte) and the XXH3-64 of the stored
// block bytes followed by that type byte (8 bytes).
inline constexpr uint32_t kBlockTrailerSize = 9;

enum class Compression : uint8_t { kNone = 0, kSnappy = 1, kZstd = 2 };

std::string_view CompressionName(Compression c);
absl::StatusOr<Compression> ParseCompression(std::string_view name);

// How the index block is searched for the data block that may hold a key.
enum class IndexSearch : uint8_t {
  kBinary = 0,
  // Interpolation on the 8 bytes after the keys' common prefix, a bounded
  // number of steps, then binary search.
  kInterpolation = 1,
  // Interpolation where the writer found the index keys evenly spread
  // (is_uniform in the footer), binary search elsewhere.
  kAuto = 2,
};

std::string_view IndexSearchName(IndexSearch s);
absl::StatusOr<IndexSearch> ParseIndexSearch(std::string_view name);

// Where a block sits: `size` bytes at `offset`, not counting its trailer.
struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;

  // Two varints.
  void EncodeTo(std::string* dst) const;
  // Decodes from [p, limit); returns the byte after, or nullptr.
  const char* DecodeFrom(const char* p, const char* limit);
};

// Compresses `raw` with `type` into *out. Returns the type actually used:
// kNone when compression saves less than 1/8 of the block.
Compression CompressBlock(Compression type, std::string_view raw,
                          std::string* out);

// Appends the trailer for `stored` (the bytes as written) to *dst.
void AppendBlockTrailer(std::string_view stored, Compression type,
                        std::string* dst);

// Names a block in errors ("index block", "data block 7"); the text is made
// only when an error is, not on every block read.
struct BlockName {
  BlockName(const char* kind) : kind(kind) {}  // NOLINT: "index block"
  static BlockName Data(uint64_t number) {
    BlockName name("data block");
    name.number = number;
    return name;
  }
  std::string Text() const;

  const char* kind;
  std::optional<uint64_t> number;
};

// Checks the trailer after `stored` (which must be followed by
// kBlockTrailerSize bytes) and returns the compression type.
absl::StatusOr<Compression> CheckBlockTrailer(std::string_view path,
                                              const char* stored, uint64_t size,
                                              BlockName block);

// Decompresses `stored` of `type` into *out. A block that states more than
// `max_size` bytes uncompressed is refused before anything is allocated.
absl::Status DecompressBlock(std::string_view path, BlockName block,
                             Compression type, std::string_view stored,
                             uint64_t max_size, std::string* out);

// Where a 2.0 table's filter block starts: data_end rounded up to a
// multiple of 64 (kCacheLineSize), so that each filter line is one cache
// line of the mapping.
uint64_t FilterOffset(uint64_t data_end);

struct BlockTableFooter {
  uint16_t major_version = kBlockTableMajorVersion;
  uint16_t minor_version = kBlockTableMinorVersion;
  uint64_t file_size = 0;
  IndexSearch index_search = IndexSearch::kAuto;
  bool is_uniform = false;  // index keys evenly spread (see IndexSearch)
  bool hash_index = false;  // data blocks may carry a hash index
  Compression compression = Compression::kNone;  // as requested
  uint32_t block_size = 0;
  uint32_t restart_interval = 0;
  uint64_t num_entries = 0;
  uint64_t num_data_blocks = 0;
  uint64_t raw_key_bytes = 0;
  uint64_t raw_value_bytes = 0;
  uint64_t data_end = 0;  // where the index block starts
  BlockHandle index;
  double uniformity_cv = 0;  // coefficient of variation the writer measured
  uint32_t max_key_length = 0;
  // 2.0: the filter block, after zero padding from data_end to a multiple
  // of 64. Size 0 in 1.0.
  BlockHandle filter;

  bool has_filter() const {
    return major_version == kBlockTableFilterMajorVersion;
  }

  std::string Encode() const;
  // Decodes and validates the footer at the end of `file` (1.0 or 2.0).
  static absl::StatusOr<BlockTableFooter> Decode(std::string_view path,
                                                 std::string_view file);
};

}  // namespace roost

#endif  // ROOST_STORAGE_BLOCK_BLOCK_FORMAT_H_
