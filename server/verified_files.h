// VerifiedFiles: table files whose region checksums this server checked as
// it wrote them, so that loading them need not read them all again.
//
// RepositoryPuller downloads a version's file feeding each byte to the
// XXH3-64 its MANIFEST gives (the file is the one published) and, for a
// cuckoo table, to a RegionStreamCheck (storage/cuckoo/region_stream_check.h):
// every region's checksum (the table is whole inside). The registry's load
// would then check those same region checksums of the same bytes again (a
// pass over the whole file, about a tenth of the pull of a large table on
// a fast link). The puller notes a file whose regions all matched, just
// before the version appears in the data directory, with what identifies
// it as it was checked: device, inode, size, and the times of its last
// write and last change (any write, truncate or chmod moves them, and no
// one can set a change time back). A load whose file still matches opens
// it without the region pass (the header and every check against the
// MANIFEST stay); any other file, or one changed since, is checked in full
// as always.
//
// Thread-safe. Holds the newest kCapacity notes.
//
// Example:
//   verified->Note(final_path, st);           // puller, before the rename
//   if (verified->Matches(path)) open.read.verify_checksums = false;
#ifndef ROOST_SERVER_VERIFIED_FILES_H_
#define ROOST_SERVER_VERIFIED_FILES_H_

#include <sys/stat.h>

#include <cstddef>
#include <deque>
#include <mutex>
#include <string>

namespace roost {

class VerifiedFiles {
 public:
  static constexpr size_t kCapacity = 64;

  // Notes that the file `path` will name, as `st` (its stat) describes it,
  // was verified whole.
  void Note(const std::string& path, const struct stat& st);
  // Whether `path` names a noted file that has not changed since.
  bool Matches(const std::string& path) const;

 private:
  struct Entry {
    std::string path;
    struct stat st;
  };
  mutable std::mutex mu_;
  std::deque<Entry> entries_;  // oldest first
};

}  // namespace roost

#endif  // ROOST_SERVER_VERIFIED_FILES_H_
