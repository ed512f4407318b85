// ExternalSorter keeps pairs in arenas with a vector of fixed-size records
// pointing into them, sorts the records, and spills them to run files when
// the memory limit would be passed. Finish() then merges the runs with a
// binary heap, in intermediate passes when there are more than
// kMaxMergeWidth of them.
//
// A run file is a sequence of records in (key, sequence) order, with no
// header or footer (the files live and die with one sorter):
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

#include "loader/sorter.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <filesystem>
#include <limits>
#include <vector>

#include "loader/owned_dir.h"
#include "storage/coding.h"
#include "storage/file.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// Runs merged at once; more take intermediate passes. Bounds open files and
// read buffers.
constexpr size_t kMaxMergeWidth = 64;
// Read buffer per run while merging: memory_limit / runs, within these.
constexpr size_t kMinReadBuffer = 64 << 10;
constexpr size_t kMaxReadBuffer = 1 << 20;
// Arena blocks are memory_limit / 16, within these, so that the last,
// partly filled block is a small part of the limit.
constexpr size_t kMinArenaBlock = 1 << 10;
constexpr size_t kMaxArenaBlock = 4 << 20;
// The longest record header: two varints and the sequence.
constexpr size_t kMaxHeaderSize = 2 * kMaxVarint64Length + 8;

// A pair held in memory. `prefix` is the first 8 key bytes big-endian,
// zero-padded: comparing it decides most comparisons without touching the
// arena.
struct Record {
  uint64_t prefix;
  const char* data;  // key then value, in the arena
  uint32_t key_size;
  uint32_t value_size;
  uint64_t sequence;

  std::string_view key() const { return {data, key_size}; }
  std::string_view value() const { return {data + key_size, value_size}; }
};

uint64_t KeyPrefix(std::string_view key) {
  char buf[8] = {};
  if (!key.empty())
    std::memcpy(buf, key.data(), std::min<size_t>(key.size(), 8));
  return __builtin_bswap64(DecodeFixed64(buf));
}

bool RecordLess(const Record& a, const Record& b) {
  if (a.prefix != b.prefix) return a.prefix < b.prefix;
  // Equal prefixes mean the first min(8, shorter key) bytes are equal.
  const size_t n = std::min(a.key_size, b.key_size);
  if (n > 8) {
    const int c = std::memcmp(a.data + 8, b.data + 8, n - 8);
    if (c != 0) return c < 0;
  }
  if (a.key_size != b.key_size) return a.key_size < b.key_size;
  return a.sequence < b.sequence;
}

// One merged pair; the views live in a RunReader's buffer.
struct Entry {
  std::string_view key;
  std::string_view value;
  uint64_t sequence;
};

bool EntryLess(const Entry& a, const Entry& b) {
  const int c = a.key.compare(b.key);  // bytewise, as unsigned char
  if (c != 0) return c < 0;
  return a.sequence < b.sequence;
}

absl::Status AppendRecord(WritableFile* file, std::string_view key,
                          std::string_view value, uint64_t sequence) {
  char header[kMaxHeaderSize];
  char* p = EncodeVarint64(header, key.size());
  p = EncodeVarint64(p, value.size());
  EncodeFixed64(p, sequence);
  p += 8;
  ROOST_RETURN_IF_ERROR(file->Append(std::string_view(header, p - header)));
  ROOST_RETURN_IF_ERROR(file->Append(key));
  return file->Append(value);
}

// Bump allocation in blocks. Pairs larger than a block get a block of their
// own. Reset() keeps the standard blocks for the next batch.
class Arena {
 public:
  explicit Arena(size_t block_size) : block_size_(block_size) {}

  // Bytes Allocate(n) would add to bytes_in_use().
  size_t BytesToAllocate(size_t n) const {
    if (n <= left_) return 0;
    return std::max(n, block_size_);
  }

  char* Allocate(size_t n) {
    if (n <= left_) {
      char* p = next_;
      next_ += n;
      left_ -= n;
      return p;
    }
    if (n > block_size_) {
      oversized_.push_back(std::make_unique<char[]>(n));
      in_use_ += n;
      return oversized_.back().get();
    }
    if (spare_.empty()) {
      blocks_.push_back(std::make_unique<char[]>(block_size_));
    } else {
      blocks_.push_back(std::move(spare_.back()));
      spare_.pop_back();
    }
    in_use_ += block_size_;
    next_ = blocks_.back().get() + n;
    left_ = block_size_ - n;
    return blocks_.back().get();
  }

  // Bytes of the blocks that hold pairs.
  uint64_t bytes_in_use() const { return in_use_; }

  // Forgets every pair; keeps standard blocks for reuse.
  void Reset() {
    for (auto& block : blocks_) spare_.push_back(std::move(block));
    blocks_.clear();
    oversized_.clear();
    next_ = nullptr;
    left_ = 0;
    in_use_ = 0;
  }

  // Forgets every pair and frees all memory.
  void Release() {
    Reset();
    spare_.clear();
  }

 private:
  const size_t block_size_;
  std::vector<std::unique_ptr<char[]>> blocks_;
  std::vector<std::unique_ptr<char[]>> spare_;
  std::vector<std::unique_ptr<char[]>> oversized_;
  char* next_ = nullptr;
  size_t left_ = 0;
  uint64_t in_use_ = 0;
};

// Reads a run file front to back through its own buffer.
class RunReader {
 public:
  static absl::StatusOr<std::unique_ptr<RunReader>> Open(
      const std::string& path, size_t buffer_size) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return absl::InternalError(
          StrCat("cannot open run file ", path, ": ", std::strerror(errno)));
    }
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      return absl::InternalError(
          StrCat("cannot stat run file ", path, ": ", std::strerror(err)));
    }
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    return std::unique_ptr<RunReader>(
        new RunReader(path, fd, static_cast<uint64_t>(st.st_size),
                      std::max(buffer_size, kMaxHeaderSize)));
  }

  ~RunReader() { ::close(fd_); }
  RunReader(const RunReader&) = delete;
  RunReader& operator=(const RunReader&) = delete;

  // Reads the next record into entry(): true, or false at the end of the
  // run. The entry's views stay valid until the next call.
  absl::StatusOr<bool> Next() {
    ROOST_RETURN_IF_ERROR(Fill(kMaxHeaderSize));
    if (begin_ == end_) return false;
    const char* const start = buffer_.get() + begin_;
    const char* const limit = buffer_.get() + end_;
    uint64_t key_size, value_size;
    const char* p = DecodeVarint64(start, limit, &key_size);
    if (p == nullptr) return BadVarint(start, limit, "key size");
    const char* q = DecodeVarint64(p, limit, &value_size);
    if (q == nullptr) return BadVarint(p, limit, "value size");
    if (limit - q < 8) return Corrupt("truncated record header");
    const uint64_t sequence = DecodeFixed64(q);
    const size_t header_size = q + 8 - start;
    // The whole record must lie within the file; this also refuses sizes
    // that would make us allocate a huge buffer.
    if (header_size > file_size_ - offset_) {
      return Corrupt("run file changed while reading");
    }
    const uint64_t left_in_file = file_size_ - offset_ - header_size;
    if (key_size > left_in_file || value_size > left_in_file - key_size) {
      return Corrupt(StrCat("record of ", key_size, "+", value_size,
                            " bytes runs past the end of the file"));
    }
    const size_t record_size = header_size + key_size + value_size;
    if (record_size > capacity_) Grow(record_size);
    ROOST_RETURN_IF_ERROR(Fill(record_size));
    if (end_ - begin_ < record_size) return Corrupt("truncated record");
    const char* data = buffer_.get() + begin_ + header_size;
    entry_.key = std::string_view(data, key_size);
    entry_.value = std::string_view(data + key_size, value_size);
    entry_.sequence = sequence;
    begin_ += record_size;
    offset_ += record_size;
    return true;
  }

  const Entry& entry() const { return entry_; }

 private:
  RunReader(std::string path, int fd, uint64_t file_size, size_t capacity)
      : path_(std::move(path)),
        fd_(fd),
        file_size_(file_size),
        buffer_(std::make_unique<char[]>(capacity)),
        capacity_(capacity) {}

  // Makes at least `need` (<= capacity_) bytes available from begin_, unless
  // the file ends first.
  absl::Status Fill(size_t need) {
    if (end_ - begin_ >= need || eof_) return absl::OkStatus();
    std::memmove(buffer_.get(), buffer_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
    while (end_ < need) {
      const ssize_t n = ::read(fd_, buffer_.get() + end_, capacity_ - end_);
      if (n < 0) {
        if (errno == EINTR) continue;
        return absl::InternalError(
            StrCat("cannot read run file ", path_, ": ", std::strerror(errno)));
      }
      if (n == 0) {
        eof_ = true;
        break;
      }
      end_ += static_cast<size_t>(n);
    }
    return absl::OkStatus();
  }

  // For a record larger than the buffer.
  void Grow(size_t capacity) {
    auto bigger = std::make_unique<char[]>(capacity);
    std::memcpy(bigger.get(), buffer_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
    buffer_ = std::move(bigger);
    capacity_ = capacity;
  }

  absl::Status BadVarint(const char* p, const char* limit,
                         std::string_view field) {
    // Running out of bytes in the middle of a varint is truncation.
    const bool truncated =
        limit - p < kMaxVarint64Length &&
        std::all_of(p, limit, [](char c) { return (c & 0x80) != 0; });
    return Corrupt(StrCat(truncated ? "truncated " : "bad varint for ", field));
  }

  absl::Status Corrupt(std::string_view what) const {
    return absl::DataLossError(
        StrCat("corrupt run file ", path_, " at offset ", offset_, ": ", what));
  }

  const std::string path_;
  const int fd_;
  const uint64_t file_size_;
  std::unique_ptr<char[]> buffer_;
  size_t capacity_;
  size_t begin_ = 0;     // the next record starts here
  size_t end_ = 0;       // bytes read into the buffer end here
  uint64_t offset_ = 0;  // file offset of begin_
  bool eof_ = false;
  Entry entry_;
};

// Merges runs with a binary min-heap of readers keyed by their entries.
class Merger {
 public:
  static absl::StatusOr<std::unique_ptr<Merger>> Open(
      const std::vector<std::string>& paths, size_t buffer_size) {
    auto merger = std::unique_ptr<Merger>(new Merger);
    for (const std::string& path : paths) {
      ROOST_ASSIGN_OR_RETURN(auto reader, RunReader::Open(path, buffer_size));
      ROOST_ASSIGN_OR_RETURN(bool more, reader->Next());
      if (!more) continue;
      merger->heap_.push_back(merger->readers_.size());
      merger->readers_.push_back(std::move(reader));
    }
    for (size_t i = merger->heap_.size() / 2; i-- > 0;) merger->SiftDown(i);
    return merger;
  }

  // The smallest entry not yet returned, valid until the next call; false
  // at the end.
  absl::StatusOr<bool> Next(const Entry** entry) {
    if (advance_top_) {
      advance_top_ = false;
      ROOST_ASSIGN_OR_RETURN(bool more, readers_[heap_[0]]->Next());
      if (!more) {
        heap_[0] = heap_.back();
        heap_.pop_back();
      }
      if (!heap_.empty()) SiftDown(0);
    }
    if (heap_.empty()) return false;
    *entry = &readers_[heap_[0]]->entry();
    advance_top_ = true;
    return true;
  }

 private:
  Merger() = default;

  bool Less(size_t a, size_t b) const {
    return EntryLess(readers_[a]->entry(), readers_[b]->entry());
  }

  void SiftDown(size_t i) {
    const size_t n = heap_.size();
    while (true) {
      size_t smallest = i;
      const size_t left = 2 * i + 1;
      const size_t right = left + 1;
      if (left < n && Less(heap_[left], heap_[smallest])) smallest = left;
      if (right < n && Less(heap_[right], heap_[smallest])) smallest = right;
      if (smallest == i) return;
      std::swap(heap_[i], heap_[smallest]);
      i = smallest;
    }
  }

  std::vector<std::unique_ptr<RunReader>> readers_;
  std::vector<size_t> heap_;  // indices into readers_
  bool advance_top_ = false;  // the top entry was returned
};

constexpr std::string_view kSpillDirPrefix = "roost-sort-";

}  // namespace

class ExternalSorter::Impl {
 public:
  explicit Impl(SorterOptions options)
      : options_(std::move(options)),
        arena_(std::clamp<uint64_t>(options_.memory_limit / 16, kMinArenaBlock,
                                    kMaxArenaBlock)) {
    // Whether or not this sort spills, what killed builds left goes.
    RemoveDeadOwnersDirs(TempBase(), kSpillDirPrefix);
  }

  ~Impl() {
    merger_.reset();  // close the run files before removing them
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  absl::Status Add(std::string_view key, std::string_view value) {
    if (!status_.ok()) return status_;
    if (finished_) {
      return absl::FailedPreconditionError("ExternalSorter::Add after Finish");
    }
    if (key.size() > std::numeric_limits<uint32_t>::max() ||
        value.size() > std::numeric_limits<uint32_t>::max()) {
      return absl::InvalidArgumentError(
          StrCat("pair too large to sort: key of ", key.size(),
                 " bytes, value of ", value.size(), " bytes (at most 4 GiB)"));
    }
    const size_t size = key.size() + value.size();
    // A full record vector is about to grow: count the old array and the new
    // (libstdc++ doubles it) as both alive during the copy.
    const uint64_t capacity = records_.capacity();
    const uint64_t record_bytes =
        (records_.size() < capacity
             ? capacity
             : capacity + std::max<uint64_t>(2 * capacity, 1)) *
        sizeof(Record);
    if (!records_.empty() &&
        arena_.bytes_in_use() + arena_.BytesToAllocate(size) + record_bytes >
            options_.memory_limit) {
      if (absl::Status s = Spill(); !s.ok()) return status_ = s;
    }
    char* data = arena_.Allocate(size);
    if (!key.empty()) std::memcpy(data, key.data(), key.size());
    if (!value.empty())
      std::memcpy(data + key.size(), value.data(), value.size());
    records_.push_back({KeyPrefix(key), data, static_cast<uint32_t>(key.size()),
                        static_cast<uint32_t>(value.size()), num_added_++});
    return absl::OkStatus();
  }

  absl::Status Finish() {
    if (!status_.ok()) return status_;
    if (finished_) {
      return absl::FailedPreconditionError("ExternalSorter::Finish twice");
    }
    finished_ = true;
    if (runs_spilled_ == 0) {
      std::sort(records_.begin(), records_.end(), RecordLess);
      return absl::OkStatus();
    }
    absl::Status s = FinishRuns();
    if (!s.ok()) status_ = s;
    return s;
  }

  absl::StatusOr<bool> Next(std::string_view* key, std::string_view* value,
                            uint64_t* sequence) {
    if (!status_.ok()) return status_;
    if (!finished_) {
      return absl::FailedPreconditionError(
          "ExternalSorter::Next before Finish");
    }
    if (merger_ == nullptr) {
      if (next_record_ == records_.size()) return false;
      const Record& r = records_[next_record_++];
      *key = r.key();
      *value = r.value();
      *sequence = r.sequence;
      return true;
    }
    const Entry* entry;
    absl::StatusOr<bool> more = merger_->Next(&entry);
    if (!more.ok()) {
      status_ = more.status();
      return status_;
    }
    if (!*more) return false;
    *key = entry->key;
    *value = entry->value;
    *sequence = entry->sequence;
    return true;
  }

  uint64_t num_added() const { return num_added_; }
  uint64_t runs_spilled() const { return runs_spilled_; }

 private:
  // Sorts the batch in memory and writes it as a run file.
  absl::Status Spill() {
    if (dir_.empty()) ROOST_RETURN_IF_ERROR(MakeTempDir());
    std::sort(records_.begin(), records_.end(), RecordLess);
    const std::string path = NewRunPath();
    ROOST_ASSIGN_OR_RETURN(auto file, WritableFile::Create(path));
    for (const Record& r : records_) {
      ROOST_RETURN_IF_ERROR(
          AppendRecord(file.get(), r.key(), r.value(), r.sequence));
    }
    ROOST_RETURN_IF_ERROR(file->Close());
    runs_.push_back(path);
    ++runs_spilled_;
    records_.clear();  // keeps its capacity for the next batch
    arena_.Reset();
    return absl::OkStatus();
  }

  std::string TempBase() const {
    if (!options_.temp_dir.empty()) return options_.temp_dir;
    std::error_code ec;
    const std::string base = std::filesystem::temp_directory_path(ec).string();
    return ec ? "/tmp" : base;
  }

  // In a directory roost-sort-<pid>-XXXXXX, so that the next sorter can
  // remove those of a killed build: they can be as large as the input.
  absl::Status MakeTempDir() {
    ROOST_ASSIGN_OR_RETURN(dir_, MakeOwnedDir(TempBase(), kSpillDirPrefix));
    return absl::OkStatus();
  }

  std::string NewRunPath() { return StrCat(dir_, "/run-", next_run_number_++); }

  size_t ReadBufferSize(size_t runs) const {
    return std::clamp<uint64_t>(
        options_.memory_limit / std::max<size_t>(runs, 1), kMinReadBuffer,
        kMaxReadBuffer);
  }

  // Spills the last batch, merges runs until at most kMaxMergeWidth are
  // left, and opens the final merge.
  absl::Status FinishRuns() {
    if (!records_.empty()) ROOST_RETURN_IF_ERROR(Spill());
    std::vector<Record>().swap(records_);
    arena_.Release();
    while (runs_.size() > kMaxMergeWidth) {
      // Merge just enough of the oldest (smallest) runs that kMaxMergeWidth
      // are left; the merged run goes to the back.
      const size_t width =
          std::min(kMaxMergeWidth, runs_.size() - kMaxMergeWidth + 1);
      std::vector<std::string> inputs(runs_.begin(), runs_.begin() + width);
      runs_.erase(runs_.begin(), runs_.begin() + width);
      ROOST_ASSIGN_OR_RETURN(auto merger,
                             Merger::Open(inputs, ReadBufferSize(width)));
      const std::string path = NewRunPath();
      ROOST_ASSIGN_OR_RETURN(auto file, WritableFile::Create(path));
      while (true) {
        const Entry* e;
        ROOST_ASSIGN_OR_RETURN(bool more, merger->Next(&e));
        if (!more) break;
        ROOST_RETURN_IF_ERROR(
            AppendRecord(file.get(), e->key, e->value, e->sequence));
      }
      ROOST_RETURN_IF_ERROR(file->Close());
      merger.reset();
      for (const std::string& input : inputs) ::unlink(input.c_str());
      runs_.push_back(path);
    }
    std::vector<std::string> inputs(runs_.begin(), runs_.end());
    ROOST_ASSIGN_OR_RETURN(merger_,
                           Merger::Open(inputs, ReadBufferSize(inputs.size())));
    return absl::OkStatus();
  }

  const SorterOptions options_;
  Arena arena_;
  std::vector<Record> records_;  // the batch in memory
  uint64_t num_added_ = 0;
  uint64_t runs_spilled_ = 0;
  bool finished_ = false;
  absl::Status status_;  // sticky: the first error

  // In memory after Finish: the next record to return.
  size_t next_record_ = 0;

  // Runs: a fresh directory, made on the first spill.
  std::string dir_;
  std::deque<std::string> runs_;  // not yet merged, oldest first
  uint64_t next_run_number_ = 0;
  std::unique_ptr<Merger> merger_;  // the final merge, after Finish
};

ExternalSorter::ExternalSorter(SorterOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

ExternalSorter::~ExternalSorter() = default;

absl::Status ExternalSorter::Add(std::string_view key, std::string_view value) {
  return impl_->Add(key, value);
}

absl::Status ExternalSorter::Finish() { return impl_->Finish(); }

absl::StatusOr<bool> ExternalSorter::Next(std::string_view* key,
                                          std::string_view* value,
                                          uint64_t* sequence) {
  return impl_->Next(key, value, sequence);
}

uint64_t ExternalSorter::num_added() const { return impl_->num_added(); }

uint64_t ExternalSorter::runs_spilled() const { return impl_->runs_spilled(); }

}  // namespace roost
