// Files as the table formats see them: a buffered sequential writer, and a
// read-only mapping of a whole file in one of three load modes. (Reading a
// small file whole, and errno as a status, are util/file.h.)
#ifndef ROOST_STORAGE_FILE_H_
#define ROOST_STORAGE_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace roost {

// A file written front to back through a buffer, with one positioned write
// for patching a header at the end.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(auto file, WritableFile::Create(path));
//   ROOST_RETURN_IF_ERROR(file->Append(bytes));
//   ROOST_RETURN_IF_ERROR(file->Close());
//
// The destructor of a file that was not closed removes it, so that an error
// path never leaves a half-written table behind.
class WritableFile {
 public:
  // Creates (or truncates) `path` for writing, never through a symbolic
  // link (ELOOP: an error). Temporary files belong in a directory only
  // their writer can write to (mkdtemp), where nothing can be planted.
  static absl::StatusOr<std::unique_ptr<WritableFile>> Create(
      const std::string& path);
  ~WritableFile();
  WritableFile(const WritableFile&) = delete;
  WritableFile& operator=(const WritableFile&) = delete;

  absl::Status Append(std::string_view data);
  // Appends `n` zero bytes.
  absl::Status AppendZeros(size_t n);
  // Appends `n` bytes that read as zeros until WriteAt fills them, without
  // writing them: a region that threads fill in pieces.
  absl::Status AppendHole(uint64_t n);
  // Writes `data` at `offset`, which must lie within what was appended.
  // After AppendHole, and until the next Append, threads may call it at
  // once for ranges that do not overlap.
  absl::Status WriteAt(uint64_t offset, std::string_view data);
  // Reads `size` bytes written at `offset` into `out`; what is still in the
  // buffer is flushed first. Threads may call it at once, as WriteAt.
  absl::Status ReadAt(uint64_t offset, size_t size, char* out);
  // Bytes appended so far.
  uint64_t size() const { return size_; }
  // Flushes, fsyncs when `sync`, and closes. After a successful Close the file
  // stays; without one it is removed.
  absl::Status Close(bool sync = false);

 private:
  WritableFile(std::string path, int fd);
  absl::Status Flush();
  // Writes all of `data` at the file's position, past the buffer.
  absl::Status WriteAll(std::string_view data);

  std::string path_;
  int fd_;
  std::string buffer_;
  uint64_t size_ = 0;
};

// How a table file is brought into memory.
enum class LoadMode {
  // mmap(2) and let the page cache fault pages in on first touch. Opening
  // costs nothing; the first lookups of each page pay a page fault, and the
  // kernel may evict cold pages under memory pressure. The default.
  kMmap,
  // mmap with MAP_POPULATE, then mlock: every page is read at open and stays
  // resident, so no lookup ever waits on a page fault or on the disk. Needs
  // RLIMIT_MEMLOCK (or CAP_IPC_LOCK) covering the file.
  kMmapLocked,
  // A private anonymous copy in memory advised to use transparent huge pages
  // (2 MiB). Opening reads the whole file; lookups then miss the TLB far less
  // on tables much larger than the TLB reach of 4 KiB pages (a few MiB), which
  // pays on random lookups over large tables. Costs a copy of the file in
  // anonymous memory, not shared with the page cache.
  kAnonymousHugePages,
};

// Parses "mmap", "mmap-locked" or "huge-pages".
absl::StatusOr<LoadMode> ParseLoadMode(std::string_view name);
std::string_view LoadModeName(LoadMode mode);

// A whole file, read-only in memory. Thread-safe: it never changes.
class MappedFile {
 public:
  static absl::StatusOr<std::unique_ptr<MappedFile>> Open(
      const std::string& path, LoadMode mode = LoadMode::kMmap);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // The bytes of the file, valid while this object lives.
  std::string_view data() const { return {base_, size_}; }
  const std::string& path() const { return path_; }
  LoadMode mode() const { return mode_; }
  // Load mode kMmap: advises the kernel that the file is read at random
  // (MADV_RANDOM): a fault reads its page only, with no read-around. Best
  // effort; nothing for the other modes.
  void AdviseRandomAccess() const;

 private:
  MappedFile(std::string path, LoadMode mode, const char* base, size_t size,
             size_t mapped_size)
      : path_(std::move(path)),
        mode_(mode),
        base_(base),
        size_(size),
        mapped_size_(mapped_size) {}

  std::string path_;
  LoadMode mode_;
  const char* base_;
  size_t size_;
  size_t mapped_size_;  // what to munmap; 0 when nothing is mapped
};

// Bytes of `data` (a range of a MappedFile's data()) resident in memory
// now, from mincore(2); 0 when it cannot tell.
uint64_t ResidentBytes(std::string_view data);

// The pages of a mapped file (load mode kMmap) a batch of lookups is about
// to read, asked of the kernel all at once: Add() each range, then Issue()
// sorts them, merges neighbours and makes one madvise(MADV_WILLNEED) call
// per run of pages, each of which starts reading its pages that are not in
// memory without waiting for them. On a table not resident in memory the
// lookups' page faults then wait for reads already in flight together,
// rather than for one read after another. Each call costs a system call
// even when its pages are resident: for tables that mostly are not.
// Best effort: a call that fails is ignored. Not thread-safe; one per
// batch.
//
// Example:
//   PageRequests pages;
//   for (const Record& r : batch) pages.Add(r.data, r.size);
//   pages.Issue();
class PageRequests {
 public:
  void Add(const char* data, size_t size);
  // Makes the calls and forgets the ranges; returns how many calls.
  size_t Issue();

 private:
  std::vector<std::pair<uintptr_t, uintptr_t>> pages_;  // [first, last]
};

// Memory for large arrays read at random, where 4 KiB pages would miss the
// TLB on most reads: from AllocateLarge (below), so that pages are taken as
// they are first written, huge where the kernel gives them. Move-only.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(AnonymousBuffer buffer,
//                          AnonymousBuffer::Allocate(64 << 20));
//   std::memcpy(buffer.data(), bytes.data(), bytes.size());
class AnonymousBuffer {
 public:
  // ResourceExhausted naming the size when the memory cannot be mapped.
  static absl::StatusOr<AnonymousBuffer> Allocate(size_t size);
  AnonymousBuffer(AnonymousBuffer&& other) noexcept
      : data_(other.data_), size_(other.size_) {
    other.data_ = nullptr;
    other.size_ = 0;
  }
  AnonymousBuffer& operator=(AnonymousBuffer&& other) = delete;
  ~AnonymousBuffer();

  char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  AnonymousBuffer(char* data, size_t size) : data_(data), size_(size) {}

  char* data_;
  size_t size_;
};

// Memory of `size` bytes, from mmap(2) advised to use transparent huge pages
// when it is at least 2 MiB, else from operator new; nullptr when none is
// left. Free it with FreeLarge(p, size).
void* AllocateLarge(size_t size);
void FreeLarge(void* p, size_t size);
// Memory from AllocateLarge(old_size) grown or shrunk to `new_size` bytes,
// its first min(old_size, new_size) bytes kept: a mapping is moved by
// mremap(2), which copies no page (so no second copy is alive while it
// grows); smaller memory is copied. nullptr (and `p` still valid) when none
// is left. Free the result with FreeLarge(result, new_size).
void* ReallocateLarge(void* p, size_t old_size, size_t new_size);

// A std::allocator for large arrays read at random (a cuckoo build's
// entries and buckets): std::vector<T, LargeAllocator<T>>.
template <typename T>
struct LargeAllocator {
  using value_type = T;
  LargeAllocator() = default;
  template <typename U>
  LargeAllocator(const LargeAllocator<U>&) {}
  T* allocate(size_t n) {
    void* p = AllocateLarge(n * sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) { FreeLarge(p, n * sizeof(T)); }
  friend bool operator==(const LargeAllocator&, const LargeAllocator&) {
    return true;
  }
};

}  // namespace roost

#endif  // ROOST_STORAGE_FILE_H_
