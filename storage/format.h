// What both table formats share on disk: region descriptors and the checks
// a reader runs on them before trusting an offset.
#ifndef ROOST_STORAGE_FORMAT_H_
#define ROOST_STORAGE_FORMAT_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"

namespace roost {

// The unit of memory traffic the formats are laid out for.
inline constexpr uint32_t kCacheLineSize = 64;

// A contiguous byte range of a table file and the XXH3-64 of its bytes.
//
// On disk (24 bytes): offset fixed64, size fixed64, checksum fixed64.
struct Region {
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t checksum = 0;

  static constexpr int kEncodedLength = 24;
  void EncodeTo(char* dst) const;
  static Region DecodeFrom(const char* src);

  // The region's bytes within `file`. REQUIRES: IsWithin(file.size()).
  std::string_view In(std::string_view file) const {
    return file.substr(offset, size);
  }
  // Whether [offset, offset + size) lies in a file of `file_size` bytes,
  // without overflowing.
  bool IsWithin(uint64_t file_size) const {
    return offset <= file_size && size <= file_size - offset;
  }
  uint64_t end() const { return offset + size; }
};

// DataLoss naming the file and what is wrong with it, lowercase and short:
// CorruptionError(path, "bad magic number").
absl::Status CorruptionError(std::string_view path, std::string_view what);

// Checks `region`'s bytes in `file` against its checksum.
absl::Status VerifyRegion(std::string_view path, std::string_view file,
                          const Region& region, std::string_view name);

}  // namespace roost

#endif  // ROOST_STORAGE_FORMAT_H_
