// Run files: what ExternalSorter (loader/sorter.h) spills sorted pairs to
// and merges from. A run file is a sequence of records in (key, sequence)
// order, with no header or footer (the files live and die with one sorter):
//
//   record:
//     key_size:   varint64
//     value_size: varint64
//     sequence:   fixed64 (little-endian)
//     key:        char[key_size]
//     value:      char[value_size]
//
// Order is (key bytewise, then sequence). Sequences are unique, so the order
// is total and the output does not depend on how the input was cut into runs
// or how the runs were grouped for merging.
#ifndef ROOST_LOADER_RUN_FILE_H_
#define ROOST_LOADER_RUN_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/coding.h"
#include "storage/file.h"

namespace roost {

// The longest record header: two varints and the sequence.
constexpr size_t kMaxRunRecordHeaderSize = 2 * kMaxVarint64Length + 8;

// One merged pair; the views live in a RunReader's buffer.
struct RunEntry {
  std::string_view key;
  std::string_view value;
  uint64_t sequence;
};

// The run order: key bytewise, then sequence.
bool RunEntryLess(const RunEntry& a, const RunEntry& b);

// Appends one record to a run file.
absl::Status AppendRunRecord(WritableFile* file, std::string_view key,
                             std::string_view value, uint64_t sequence);

// Reads a run file front to back through its own buffer.
class RunReader {
 public:
  static absl::StatusOr<std::unique_ptr<RunReader>> Open(
      const std::string& path, size_t buffer_size);

  ~RunReader();
  RunReader(const RunReader&) = delete;
  RunReader& operator=(const RunReader&) = delete;

  // Reads the next record into entry(): true, or false at the end of the
  // run. The entry's views stay valid until the next call.
  absl::StatusOr<bool> Next();

  const RunEntry& entry() const { return entry_; }

 private:
  RunReader(std::string path, int fd, uint64_t file_size, size_t capacity)
      : path_(std::move(path)),
        fd_(fd),
        file_size_(file_size),
        buffer_(std::make_unique<char[]>(capacity)),
        capacity_(capacity) {}

  // Makes at least `need` (<= capacity_) bytes available from begin_, unless
  // the file ends first.
  absl::Status Fill(size_t need);

  // For a record larger than the buffer.
  void Grow(size_t capacity);

  absl::Status BadVarint(const char* p, const char* limit,
                         std::string_view field);

  absl::Status Corrupt(std::string_view what) const;

  const std::string path_;
  const int fd_;
  const uint64_t file_size_;
  std::unique_ptr<char[]> buffer_;
  size_t capacity_;
  size_t begin_ = 0;     // the next record starts here
  size_t end_ = 0;       // bytes read into the buffer end here
  uint64_t offset_ = 0;  // file offset of begin_
  bool eof_ = false;
  RunEntry entry_;
};

}  // namespace roost

#endif  // ROOST_LOADER_RUN_FILE_H_
