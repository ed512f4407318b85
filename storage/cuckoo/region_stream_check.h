// RegionStreamCheck: a table file's region checksums, checked as the file's
// bytes go by in order (a download), so that whoever then opens the file
// need not read it all again to check them.
//
// A cuckoo table declares its regions (buckets, overflow bitmap, heap) and
// their XXH3-64 checksums in its header, which comes first: once the header
// has gone by (magic number, major version and header checksum right), each
// region's bytes are hashed as they pass and compared at the region's end.
// Passed() says whether every region matched; it says false for anything
// else (a block table, whose index and footer come last; a file cut short;
// a region past the end), which then is checked at open as always. It
// reports no error: a file it does not pass is not refused here, only
// checked in full later, where the error is named.
//
// CuckooTable::Open with verify_checksums checks exactly these regions of
// exactly these bytes; with a file known to be unchanged since it went by
// here (server/verified_files.h), that pass may be skipped.
//
// Not thread-safe.
//
// Example:
//   RegionStreamCheck check;
//   for (each piece of the file, in order) check.Update(piece);
//   if (check.Passed()) note that the file's regions are checked;
#ifndef ROOST_STORAGE_CUCKOO_REGION_STREAM_CHECK_H_
#define ROOST_STORAGE_CUCKOO_REGION_STREAM_CHECK_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "storage/format.h"
#include "storage/hash.h"

namespace roost {

class RegionStreamCheck {
 public:
  RegionStreamCheck();
  ~RegionStreamCheck();

  // The next bytes of the file.
  void Update(std::string_view bytes);
  // Whether the file so far is a cuckoo table whose every region has gone
  // by and matched its checksum, and that ends with its last region.
  bool Passed() const;

 private:
  // Hashes the bytes of `bytes` (at file offset `at`) that fall in
  // regions, closing each region whose end they reach.
  void HashRegions(std::string_view bytes, uint64_t at);

  uint64_t seen_ = 0;    // bytes fed so far
  std::string header_;   // the first bytes, until the header is whole
  bool failed_ = false;  // not a cuckoo table, or a region mismatched
  bool have_regions_ = false;
  std::array<Region, 3> regions_{};
  size_t current_ = 0;  // the region being hashed; 3 when all are done
  std::unique_ptr<StreamingChecksum> checksum_;
};

}  // namespace roost

#endif  // ROOST_STORAGE_CUCKOO_REGION_STREAM_CHECK_H_
