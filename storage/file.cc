#include "storage/file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "util/file.h"
#include "util/str_cat.h"

namespace roost {
namespace {

constexpr size_t kWriteBufferSize = 1 << 20;
constexpr size_t kHugePageSize = 2 << 20;

}  // namespace

absl::StatusOr<std::unique_ptr<WritableFile>> WritableFile::Create(
    const std::string& path) {
  const int fd = ::open(
      path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == ELOOP) {
      return absl::PermissionDeniedError(
          StrCat("cannot create ", path, ": a symbolic link is in the way"));
    }
    return ErrnoError("cannot create", path, errno);
  }
  return std::unique_ptr<WritableFile>(new WritableFile(path, fd));
}

WritableFile::WritableFile(std::string path, int fd)
    : path_(std::move(path)), fd_(fd) {
  buffer_.reserve(kWriteBufferSize);
}

WritableFile::~WritableFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
}

absl::Status WritableFile::Append(std::string_view data) {
  size_ += data.size();
  if (buffer_.size() + data.size() <= kWriteBufferSize) {
    buffer_.append(data);
    return absl::OkStatus();
  }
  absl::Status s = Flush();
  if (!s.ok()) return s;
  if (data.size() < kWriteBufferSize) {
    buffer_.append(data);
    return absl::OkStatus();
  }
  return WriteAll(data);
}

absl::Status WritableFile::AppendZeros(size_t n) {
  static const std::string kZeros(4096, '\0');
  while (n > 0) {
    const size_t chunk = std::min(n, kZeros.size());
    absl::Status s = Append(std::string_view(kZeros).substr(0, chunk));
    if (!s.ok()) return s;
    n -= chunk;
  }
  return absl::OkStatus();
}

absl::Status WritableFile::Flush() {
  absl::Status s = WriteAll(buffer_);
  buffer_.clear();
  return s;
}

absl::Status WritableFile::WriteAll(std::string_view data) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("cannot write", path_, errno);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status WritableFile::AppendHole(uint64_t n) {
  absl::Status s = Flush();
  if (!s.ok()) return s;
  size_ += n;
  if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
    return ErrnoError("cannot extend", path_, errno);
  }
  if (::lseek(fd_, static_cast<off_t>(size_), SEEK_SET) < 0) {
    return ErrnoError("cannot seek in", path_, errno);
  }
  return absl::OkStatus();
}

absl::Status WritableFile::WriteAt(uint64_t offset, std::string_view data) {
  if (!buffer_.empty()) {
    absl::Status s = Flush();
    if (!s.ok()) return s;
  }
  if (offset + data.size() > size_) {
    return absl::InvalidArgumentError("WriteAt past the end of " + path_);
  }
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::pwrite(fd_, data.data() + done, data.size() - done,
                               static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("cannot write", path_, errno);
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status WritableFile::ReadAt(uint64_t offset, size_t size, char* out) {
  if (!buffer_.empty()) {
    absl::Status s = Flush();
    if (!s.ok()) return s;
  }
  if (offset + size > size_) {
    return absl::InvalidArgumentError("ReadAt past the end of " + path_);
  }
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd_, out + done, size - done,
                              static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("cannot read back", path_, errno);
    if (n == 0) {
      return absl::DataLossError(
          StrCat(path_, " is shorter than what was written to it"));
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status WritableFile::Close(bool sync) {
  absl::Status s = Flush();
  if (s.ok() && sync && ::fsync(fd_) != 0) {
    s = ErrnoError("cannot fsync", path_, errno);
  }
  if (!s.ok()) return s;  // the destructor removes the file
  if (::close(fd_) != 0) {
    const int err = errno;
    fd_ = -1;
    ::unlink(path_.c_str());
    return ErrnoError("cannot close", path_, err);
  }
  fd_ = -1;
  return absl::OkStatus();
}

absl::StatusOr<LoadMode> ParseLoadMode(std::string_view name) {
  if (name == "mmap") return LoadMode::kMmap;
  if (name == "mmap-locked") return LoadMode::kMmapLocked;
  if (name == "huge-pages") return LoadMode::kAnonymousHugePages;
  return absl::InvalidArgumentError(
      StrCat("unknown load mode \"", name,
             "\" (expected mmap, mmap-locked or huge-pages)"));
}

std::string_view LoadModeName(LoadMode mode) {
  switch (mode) {
    case LoadMode::kMmap:
      return "mmap";
    case LoadMode::kMmapLocked:
      return "mmap-locked";
    case LoadMode::kAnonymousHugePages:
      return "huge-pages";
  }
  return "unknown";
}

absl::StatusOr<std::unique_ptr<MappedFile>> MappedFile::Open(
    const std::string& path, LoadMode mode) {
  uint64_t file_size = 0;
  auto opened = OpenRegularFile(path, &file_size);
  if (!opened.ok()) return opened.status();
  const int fd = *opened;
  const size_t size = static_cast<size_t>(file_size);
  if (size == 0) {
    ::close(fd);
    return std::unique_ptr<MappedFile>(
        new MappedFile(path, mode, nullptr, 0, 0));
  }

  void* base = MAP_FAILED;
  size_t mapped_size = size;
  if (mode == LoadMode::kAnonymousHugePages) {
    mapped_size = (size + kHugePageSize - 1) / kHugePageSize * kHugePageSize;
    base = ::mmap(nullptr, mapped_size, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base != MAP_FAILED) {
      // Best effort: without THP the copy still works, on 4 KiB pages.
      ::madvise(base, mapped_size, MADV_HUGEPAGE);
      size_t done = 0;
      while (done < size) {
        const ssize_t n = ::pread(fd, static_cast<char*>(base) + done,
                                  size - done, static_cast<off_t>(done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          const int err = n < 0 ? errno : EIO;
          ::munmap(base, mapped_size);
          ::close(fd);
          return ErrnoError("cannot read", path, err);
        }
        done += static_cast<size_t>(n);
      }
      ::mprotect(base, mapped_size, PROT_READ);
    }
  } else {
    const int flags =
        MAP_SHARED | (mode == LoadMode::kMmapLocked ? MAP_POPULATE : 0);
    base = ::mmap(nullptr, size, PROT_READ, flags, fd, 0);
  }
  const int map_errno = errno;
  ::close(fd);
  if (base == MAP_FAILED) return ErrnoError("cannot map", path, map_errno);
  if (mode == LoadMode::kMmapLocked && ::mlock(base, size) != 0) {
    const int err = errno;
    ::munmap(base, mapped_size);
    return absl::ResourceExhaustedError(
        StrCat("cannot lock ", path, " in memory: ", std::strerror(err),
               " (raise RLIMIT_MEMLOCK, or use load mode mmap)"));
  }
  return std::unique_ptr<MappedFile>(new MappedFile(
      path, mode, static_cast<const char*>(base), size, mapped_size));
}

void MappedFile::AdviseRandomAccess() const {
  if (mode_ == LoadMode::kMmap && mapped_size_ > 0) {
    ::madvise(const_cast<char*>(base_), mapped_size_, MADV_RANDOM);
  }
}

MappedFile::~MappedFile() {
  if (mapped_size_ > 0) ::munmap(const_cast<char*>(base_), mapped_size_);
}

uint64_t ResidentBytes(std::string_view data) {
  if (data.empty()) return 0;
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin =
      reinterpret_cast<uintptr_t>(data.data()) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(data.data()) + data.size();
  const size_t pages = (end - begin + page - 1) / page;
  std::vector<unsigned char> vec(pages);
  if (::mincore(reinterpret_cast<void*>(begin), end - begin, vec.data()) != 0) {
    return 0;
  }
  uint64_t resident = 0;
  for (unsigned char c : vec) resident += c & 1;
  return std::min<uint64_t>(resident * page, data.size());
}

void PageRequests::Add(const char* data, size_t size) {
  if (size == 0) return;
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto at = reinterpret_cast<uintptr_t>(data);
  pages_.emplace_back(at / page, (at + size - 1) / page);
}

size_t PageRequests::Issue() {
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  std::sort(pages_.begin(), pages_.end());
  size_t calls = 0;
  for (size_t i = 0; i < pages_.size();) {
    const uintptr_t first = pages_[i].first;
    uintptr_t last = pages_[i].second;
    for (++i; i < pages_.size() && pages_[i].first <= last + 1; ++i) {
      last = std::max(last, pages_[i].second);
    }
    ::madvise(reinterpret_cast<void*>(first * page), (last - first + 1) * page,
              MADV_WILLNEED);
    ++calls;
  }
  pages_.clear();
  return calls;
}

absl::StatusOr<AnonymousBuffer> AnonymousBuffer::Allocate(size_t size) {
  void* p = AllocateLarge(size);
  if (p == nullptr) {
    return absl::ResourceExhaustedError(
        StrCat("cannot allocate ", size, " bytes of memory"));
  }
  return AnonymousBuffer(static_cast<char*>(p), size);
}

AnonymousBuffer::~AnonymousBuffer() { FreeLarge(data_, size_); }

void* AllocateLarge(size_t size) {
  if (size < kHugePageSize) return ::operator new(size, std::nothrow);
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  // Best effort: without THP the memory still works, on 4 KiB pages.
  ::madvise(p, size, MADV_HUGEPAGE);
  return p;
}

void* ReallocateLarge(void* p, size_t old_size, size_t new_size) {
  if (p == nullptr) return AllocateLarge(new_size);
  if (old_size >= kHugePageSize && new_size >= kHugePageSize) {
    void* q = ::mremap(p, old_size, new_size, MREMAP_MAYMOVE);
    if (q == MAP_FAILED) return nullptr;
    // As AllocateLarge. mremap keeps the mapping's advice as it grows it;
    // giving it again over the whole range costs one call a doubling.
    ::madvise(q, new_size, MADV_HUGEPAGE);
    return q;
  }
  void* q = AllocateLarge(new_size);
  if (q == nullptr) return nullptr;
  std::memcpy(q, p, std::min(old_size, new_size));
  FreeLarge(p, old_size);
  return q;
}

void FreeLarge(void* p, size_t size) {
  if (p == nullptr) return;
  if (size < kHugePageSize) {
    ::operator delete(p);
  } else {
    ::munmap(p, size);
  }
}

}  // namespace roost
