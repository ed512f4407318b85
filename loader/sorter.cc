// ExternalSorter keeps pairs in arenas with an array of 16-byte records
// pointing into them, sorts the records, and spills them to run files when
// the memory limit would be passed. Finish() then merges the runs with a
// binary heap, in intermediate passes when there are more than
// kMaxMergeWidth of them. The run files are loader/run_file.h.

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
#include <new>
#include <thread>
#include <vector>

#include "loader/run_file.h"
#include "storage/coding.h"
#include "storage/file.h"
#include "util/owned_dir.h"
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

// A pair held in memory: 16 bytes, so that sorting moves little. `prefix` is
// the first 8 key bytes big-endian, zero-padded: comparing it decides most
// comparisons without touching the arena. `entry` points at the pair in the
// arena: varint key size, varint value size, varint sequence, key, value.
struct Record {
  uint64_t prefix;
  const char* entry;
};

// The longest entry header: three varints, the sizes of at most 32 bits.
constexpr size_t kMaxEntryHeader = 5 + 5 + kMaxVarint64Length;

// A record's pair, decoded from its entry.
struct Pair {
  std::string_view key;
  std::string_view value;
  uint64_t sequence;
};

// The arena wrote the header, whole and well formed.
inline Pair DecodeEntry(const char* p) {
  uint64_t key_size = 0, value_size = 0, sequence = 0;
  p = DecodeVarint64(p, p + kMaxVarint64Length, &key_size);
  p = DecodeVarint64(p, p + kMaxVarint64Length, &value_size);
  p = DecodeVarint64(p, p + kMaxVarint64Length, &sequence);
  return {{p, key_size}, {p + key_size, value_size}, sequence};
}

uint64_t KeyPrefix(std::string_view key) {
  char buf[8] = {};
  if (!key.empty())
    std::memcpy(buf, key.data(), std::min<size_t>(key.size(), 8));
  return __builtin_bswap64(DecodeFixed64(buf));
}

// Keys, then sequences. Out of line: only records of equal prefixes (the
// first 8 key bytes, zero-padded) get here.
[[gnu::noinline]] bool EntryLess(const char* a_entry, const char* b_entry) {
  const Pair a = DecodeEntry(a_entry);
  const Pair b = DecodeEntry(b_entry);
  if (a.key != b.key) return a.key < b.key;
  return a.sequence < b.sequence;
}

inline bool RecordLess(const Record& a, const Record& b) {
  if (a.prefix != b.prefix) return a.prefix < b.prefix;
  return EntryLess(a.entry, b.entry);
}

// Sorts [first, last) by RecordLess on `threads` threads: the records are
// partitioned around a key prefix sampled near the median, and each side
// sorted apart (recursively, the threads shared between the sides). Every
// record of the left side has a smaller prefix than every one of the right,
// so the result is the one order RecordLess defines, for any thread count.
template <typename It>
void SortRecords(It first, It last, int threads) {
  constexpr ptrdiff_t kMinShare = 1 << 16;
  const auto less = [](const Record& a, const Record& b) {
    return RecordLess(a, b);
  };
  const ptrdiff_t n = last - first;
  if (threads <= 1 || n < 2 * kMinShare) {
    std::sort(first, last, less);
    return;
  }
  // The median of a sample of prefixes, spread over the range.
  constexpr ptrdiff_t kSample = 1023;
  std::vector<uint64_t> sample(kSample);
  for (ptrdiff_t i = 0; i < kSample; ++i) {
    sample[i] = first[i * (n / kSample)].prefix;
  }
  std::nth_element(sample.begin(), sample.begin() + kSample / 2, sample.end());
  const uint64_t pivot = sample[kSample / 2];
  It middle = std::partition(
      first, last, [pivot](const Record& r) { return r.prefix < pivot; });
  if (middle == first) {
    // Every prefix is at least the pivot (keys crowded on one prefix):
    // split off those above it instead, or sort on one thread.
    middle = std::partition(
        first, last, [pivot](const Record& r) { return r.prefix == pivot; });
    if (middle == last) {
      std::sort(first, last, less);
      return;
    }
  }
  const int left_threads = threads / 2;
  std::thread left(
      [=] { SortRecords(first, middle, std::max(1, left_threads)); });
  SortRecords(middle, last, threads - left_threads);
  left.join();
}

// The batch's records, in one array that grows in place
// (ReallocateLarge: mremap moves the pages, it copies none): no second array
// alive while growing, and untouched capacity costs no memory.
class RecordArray {
 public:
  RecordArray() = default;
  ~RecordArray() { Release(); }
  RecordArray(const RecordArray&) = delete;
  RecordArray& operator=(const RecordArray&) = delete;

  Record* begin() const { return data_; }
  Record* end() const { return data_ + size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const Record& operator[](size_t i) const { return data_[i]; }

  void push_back(const Record& r) {
    if (size_ == capacity_) Grow();
    data_[size_++] = r;
  }

  // Forgets the records; keeps the memory for the next batch.
  void clear() { size_ = 0; }

  void Release() {
    FreeLarge(data_, capacity_ * sizeof(Record));
    data_ = nullptr;
    size_ = capacity_ = 0;
  }

 private:
  // 2 MiB at first (a huge page), then doubling.
  void Grow() {
    constexpr size_t kFirst = (size_t{2} << 20) / sizeof(Record);
    const size_t capacity = capacity_ == 0 ? kFirst : 2 * capacity_;
    void* p = ReallocateLarge(data_, capacity_ * sizeof(Record),
                              capacity * sizeof(Record));
    if (p == nullptr) throw std::bad_alloc();
    data_ = static_cast<Record*>(p);
    capacity_ = capacity;
  }

  Record* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

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
      // On huge pages: the sorted pairs are read back at random.
      absl::StatusOr<AnonymousBuffer> block =
          AnonymousBuffer::Allocate(block_size_);
      if (!block.ok()) throw std::bad_alloc();
      blocks_.push_back(std::move(*block));
    } else {
      blocks_.push_back(std::move(spare_.back()));
      spare_.pop_back();
    }
    in_use_ += block_size_;
    next_ = blocks_.back().data() + n;
    left_ = block_size_ - n;
    return blocks_.back().data();
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
  std::vector<AnonymousBuffer> blocks_;
  std::vector<AnonymousBuffer> spare_;
  std::vector<std::unique_ptr<char[]>> oversized_;
  char* next_ = nullptr;
  size_t left_ = 0;
  uint64_t in_use_ = 0;
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
  absl::StatusOr<bool> Next(const RunEntry** entry) {
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
    return RunEntryLess(readers_[a]->entry(), readers_[b]->entry());
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
    RemoveDeadOwnersDirs(TempParent(options_.temp_dir), kSpillDirPrefix);
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
    char header[kMaxEntryHeader];
    char* end = EncodeVarint64(header, key.size());
    end = EncodeVarint64(end, value.size());
    end = EncodeVarint64(end, num_added_);
    const size_t header_size = end - header;
    const size_t size = header_size + key.size() + value.size();
    // The records counted as they are touched: the array grows in place.
    const uint64_t record_bytes = (records_.size() + 1) * sizeof(Record);
    if (!records_.empty() &&
        arena_.bytes_in_use() + arena_.BytesToAllocate(size) + record_bytes >
            options_.memory_limit) {
      if (absl::Status s = Spill(); !s.ok()) return status_ = s;
    }
    char* entry = arena_.Allocate(size);
    std::memcpy(entry, header, header_size);
    if (!key.empty()) std::memcpy(entry + header_size, key.data(), key.size());
    if (!value.empty()) {
      std::memcpy(entry + header_size + key.size(), value.data(), value.size());
    }
    records_.push_back({KeyPrefix(key), entry});
    ++num_added_;
    return absl::OkStatus();
  }

  absl::Status Finish() {
    if (!status_.ok()) return status_;
    if (finished_) {
      return absl::FailedPreconditionError("ExternalSorter::Finish twice");
    }
    finished_ = true;
    if (runs_spilled_ == 0) {
      SortRecords(records_.begin(), records_.end(), options_.threads);
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
      PrefetchAhead(next_record_);
      const Pair pair = DecodeEntry(records_[next_record_++].entry);
      *key = pair.key;
      *value = pair.value;
      *sequence = pair.sequence;
      return true;
    }
    const RunEntry* entry;
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
  // Sorted, the records point into the arena at random: reading them in
  // order misses the cache on every pair unless its bytes are asked for
  // ahead. Called before reading record i.
  void PrefetchAhead(size_t i) const {
    constexpr size_t kAhead = 16;
    if (i + kAhead < records_.size()) {
      // The entry's first line, and the next one should the header and a
      // small pair cross into it.
      const char* entry = records_[i + kAhead].entry;
      __builtin_prefetch(entry);
      __builtin_prefetch(entry + 31);
    }
  }

  // Sorts the batch in memory and writes it as a run file.
  absl::Status Spill() {
    if (dir_.empty()) ROOST_RETURN_IF_ERROR(MakeTempDir());
    SortRecords(records_.begin(), records_.end(), options_.threads);
    const std::string path = NewRunPath();
    ROOST_ASSIGN_OR_RETURN(auto file, WritableFile::Create(path));
    for (size_t i = 0; i < records_.size(); ++i) {
      PrefetchAhead(i);
      const Pair pair = DecodeEntry(records_[i].entry);
      ROOST_RETURN_IF_ERROR(
          AppendRunRecord(file.get(), pair.key, pair.value, pair.sequence));
    }
    ROOST_RETURN_IF_ERROR(file->Close());
    runs_.push_back(path);
    ++runs_spilled_;
    records_.clear();  // keeps its capacity for the next batch
    arena_.Reset();
    return absl::OkStatus();
  }

  // In a directory roost-sort-<pid>-XXXXXX, so that the next sorter can
  // remove those of a killed build: they can be as large as the input.
  absl::Status MakeTempDir() {
    ROOST_ASSIGN_OR_RETURN(
        dir_, MakeOwnedTempDir(options_.temp_dir, kSpillDirPrefix));
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
    records_.Release();
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
        const RunEntry* e;
        ROOST_ASSIGN_OR_RETURN(bool more, merger->Next(&e));
        if (!more) break;
        ROOST_RETURN_IF_ERROR(
            AppendRunRecord(file.get(), e->key, e->value, e->sequence));
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
  // The batch in memory, on huge pages.
  RecordArray records_;
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
