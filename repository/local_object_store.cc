#include "repository/local_object_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <utility>
#include <vector>

#include "repository/download_file.h"
#include "util/file.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

namespace fs = std::filesystem;

// Names of the store's own temporary files.
constexpr std::string_view kReserved = ".roost-";
constexpr size_t kChunk = 1 << 20;

// Reads up to `size` bytes at `offset`; fewer only at the end of the file.
absl::StatusOr<std::string> ReadAt(int fd, uint64_t offset, uint64_t size,
                                   const std::string& path) {
  std::string out(size, '\0');
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, out.data() + done, size - done,
                              static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("cannot read", path, errno);
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  return out;
}

// Adds every object key under `dir` (the key prefix `key_prefix`) to `keys`.
void Walk(const fs::path& dir, const std::string& key_prefix,
          std::vector<std::string>* keys) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, kReserved.size(), kReserved) == 0) continue;
    std::error_code type_ec;
    if (it->is_directory(type_ec) && !it->is_symlink(type_ec)) {
      Walk(it->path(), key_prefix + name + "/", keys);
    } else if (it->is_regular_file(type_ec)) {
      keys->push_back(key_prefix + name);
    }
  }
}

// Opens the file of an object; NotFound also when a directory on the way is
// a file (ENOTDIR), as a missing object of S3 would be.
absl::StatusOr<int> OpenObject(const std::string& path, std::string_view what,
                               uint64_t* size) {
  absl::StatusOr<int> fd = OpenRegularFile(path, size);
  if (fd.ok()) return fd;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
    return absl::NotFoundError(StrCat(what, ": no such object"));
  }
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::NotFoundError(StrCat(what, ": no such object (a directory)"));
  }
  return fd.status();
}

}  // namespace

LocalObjectStore::LocalObjectStore(std::string root,
                                   const std::atomic<bool>* stop)
    : root_(std::move(root)), stop_(stop) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string LocalObjectStore::uri() const {
  std::error_code ec;  // (absolute() without one may throw)
  const fs::path path = fs::absolute(root_, ec);
  return StrCat("file://",
                (ec ? fs::path(root_) : path).lexically_normal().string());
}

absl::StatusOr<std::string> LocalObjectStore::PathOf(
    std::string_view key) const {
  ROOST_RETURN_IF_ERROR(ValidateObjectKey(key));
  for (size_t start = 0; start <= key.size();) {
    size_t end = key.find('/', start);
    if (end == std::string_view::npos) end = key.size();
    if (key.substr(start, end - start).substr(0, kReserved.size()) ==
        kReserved) {
      return absl::InvalidArgumentError(
          StrCat("object key \"", key, "\": names starting with \"", kReserved,
                 "\" are reserved in a local store"));
    }
    start = end + 1;
  }
  return StrCat(root_, "/", key);
}

template <typename Fill>
absl::Status LocalObjectStore::Write(std::string_view key,
                                     const PutOptions& options, Fill fill) {
  ROOST_ASSIGN_OR_RETURN(const std::string path, PathOf(key));
  ROOST_RETURN_IF_ERROR(ValidatePutOptions(options));
  const fs::path target(path);
  const std::string dir = target.parent_path().string();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return absl::FailedPreconditionError(StrCat("put ", uri(), "/", key,
                                                ": cannot create directory ",
                                                dir, ": ", ec.message()));
  }
  std::string tmp = StrCat(dir, "/", kReserved, "put-",
                           target.filename().string(), "-XXXXXX");
  ScopedFd fd(::mkostemp(tmp.data(), O_CLOEXEC));
  if (fd.get() < 0) return ErrnoError("cannot create", tmp, errno);
  absl::Status status = [&]() -> absl::Status {
    if (::fchmod(fd.get(), 0644) != 0) {
      return ErrnoError("cannot chmod", tmp, errno);
    }
    ROOST_RETURN_IF_ERROR(fill(fd.get(), tmp));
    if (::fsync(fd.get()) != 0) return ErrnoError("cannot fsync", tmp, errno);
    if (::close(fd.release()) != 0) {
      return ErrnoError("cannot close", tmp, errno);
    }
    if (options.if_absent) {
      // link(2) fails with EEXIST when the name is taken: the one atomic
      // "create if absent" for a file that is already whole.
      if (::link(tmp.c_str(), path.c_str()) != 0) {
        if (errno == EEXIST) {
          return absl::AlreadyExistsError(
              StrCat("put ", uri(), "/", key,
                     ": the object exists (another writer put it first)"));
        }
        return ErrnoError("cannot link", path, errno);
      }
      return absl::OkStatus();
    }
    ScopedFd lock;
    if (!options.if_match.empty()) {
      // Conditional writers of one key take turns on a lock file beside it,
      // so that the check of the ETag and the rename are one step.
      const std::string lock_path =
          StrCat(dir, "/", kReserved, "lock-", target.filename().string());
      lock = ScopedFd(
          ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
      if (lock.get() < 0) return ErrnoError("cannot open", lock_path, errno);
      while (::flock(lock.get(), LOCK_EX) != 0) {
        if (errno != EINTR) return ErrnoError("cannot lock", lock_path, errno);
      }
      absl::StatusOr<ObjectInfo> now = Head(key);
      if (!now.ok() && !absl::IsNotFound(now.status())) return now.status();
      if (!now.ok() || now->etag != options.if_match) {
        return absl::FailedPreconditionError(
            StrCat("put ", uri(), "/", key,
                   ": the object is not the one expected (another writer "
                   "changed or removed it)"));
      }
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
      const int err = errno;
      if (err == EISDIR || err == ENOTEMPTY || err == EEXIST) {
        return absl::FailedPreconditionError(
            StrCat("put ", uri(), "/", key,
                   ": the key is a directory of other objects"));
      }
      return ErrnoError("cannot rename into place", path, err);
    }
    return absl::OkStatus();
  }();
  ::unlink(tmp.c_str());  // after link, or after a failure; gone after rename
  if (!status.ok()) return status;
  return FsyncPath(dir);
}

absl::Status LocalObjectStore::Put(std::string_view key,
                                   std::string_view contents,
                                   const PutOptions& options) {
  return Write(key, options, [&](int fd, const std::string& tmp) {
    return WriteAll(fd, contents, tmp);
  });
}

absl::Status LocalObjectStore::PutFile(std::string_view key,
                                       const std::string& path,
                                       const PutOptions& options) {
  uint64_t size = 0;
  ROOST_ASSIGN_OR_RETURN(const int raw_fd, OpenRegularFile(path, &size));
  ScopedFd in(raw_fd);
  return Write(
      key, options, [&](int fd, const std::string& tmp) -> absl::Status {
        for (uint64_t offset = 0;;) {
          ROOST_ASSIGN_OR_RETURN(std::string chunk,
                                 ReadAt(in.get(), offset, kChunk, path));
          if (chunk.empty()) return absl::OkStatus();
          ROOST_RETURN_IF_ERROR(WriteAll(fd, chunk, tmp));
          offset += chunk.size();
        }
      });
}

absl::StatusOr<std::string> LocalObjectStore::Get(
    std::string_view key, std::optional<ByteRange> range) {
  ROOST_ASSIGN_OR_RETURN(const std::string path, PathOf(key));
  uint64_t size = 0;
  ROOST_ASSIGN_OR_RETURN(
      const int raw_fd,
      OpenObject(path, StrCat("get ", uri(), "/", key), &size));
  ScopedFd fd(raw_fd);
  if (!range) return ReadAt(fd.get(), 0, size, path);
  if (range->length == 0) {
    return absl::InvalidArgumentError(
        StrCat("get ", uri(), "/", key, ": empty byte range"));
  }
  if (range->offset >= size) {
    return absl::OutOfRangeError(StrCat("get ", uri(), "/", key,
                                        ": range starts at ", range->offset,
                                        ", past the end (", size, " bytes)"));
  }
  return ReadAt(fd.get(), range->offset,
                std::min(range->length, size - range->offset), path);
}

absl::Status LocalObjectStore::GetToFile(std::string_view key,
                                         const std::string& path,
                                         const DownloadOptions& options) {
  ROOST_ASSIGN_OR_RETURN(const std::string source, PathOf(key));
  const std::string what = StrCat("get ", uri(), "/", key);
  uint64_t size = 0;
  ROOST_ASSIGN_OR_RETURN(const int raw_fd, OpenObject(source, what, &size));
  ScopedFd fd(raw_fd);
  if (options.expected_size && *options.expected_size != size) {
    return absl::DataLossError(StrCat(what, ": size mismatch: expected ",
                                      *options.expected_size, " bytes, got ",
                                      size));
  }
  ROOST_ASSIGN_OR_RETURN(std::unique_ptr<DownloadFile> file,
                         DownloadFile::Create(path, options.observer));
  for (uint64_t offset = 0;;) {
    if (stop_ != nullptr && stop_->load()) {
      return absl::CancelledError(StrCat(what, ": stopped before the end"));
    }
    ROOST_ASSIGN_OR_RETURN(std::string chunk,
                           ReadAt(fd.get(), offset, kChunk, source));
    if (chunk.empty()) break;
    ROOST_RETURN_IF_ERROR(file->Append(chunk));
    offset += chunk.size();
  }
  return file->Commit(options, what);
}

absl::StatusOr<ObjectInfo> LocalObjectStore::Head(std::string_view key) {
  ROOST_ASSIGN_OR_RETURN(const std::string path, PathOf(key));
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return absl::NotFoundError(
          StrCat("head ", uri(), "/", key, ": no such object"));
    }
    return ErrnoError(StrCat("head ", uri(), "/", key, ": cannot stat"), path,
                      errno);
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::NotFoundError(
        StrCat("head ", uri(), "/", key, ": no such object (a directory)"));
  }
  const uint64_t mtime_ns =
      static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000u +
      static_cast<uint64_t>(st.st_mtim.tv_nsec);
  return ObjectInfo{
      std::string(key), static_cast<uint64_t>(st.st_size),
      fmt::format("{:x}-{:x}-{:x}", st.st_ino, st.st_size, mtime_ns),
      static_cast<int64_t>(st.st_mtim.tv_sec)};
}

absl::StatusOr<ListPage> LocalObjectStore::List(const ListOptions& options) {
  if (options.max_keys < 1 || options.max_keys > 1000) {
    return absl::InvalidArgumentError(
        StrCat("list ", uri(), ": max_keys must be 1 to 1000, not ",
               options.max_keys));
  }
  // Walk only the directory the prefix is certainly in.
  const size_t slash = options.prefix.rfind('/');
  const std::string dir_key =
      slash == std::string::npos ? "" : options.prefix.substr(0, slash + 1);
  std::vector<std::string> keys;
  Walk(dir_key.empty() ? fs::path(root_) : fs::path(root_) / dir_key, dir_key,
       &keys);
  std::sort(keys.begin(), keys.end());

  ListPage page;
  std::string last;  // the last key or common prefix on the page
  int count = 0;
  for (const std::string& key : keys) {
    if (key.compare(0, options.prefix.size(), options.prefix) != 0) continue;
    std::string item = key;
    bool rolled_up = false;
    if (options.group_by_slash) {
      const size_t next = key.find('/', options.prefix.size());
      if (next != std::string::npos) {
        item = key.substr(0, next + 1);
        rolled_up = true;
      }
    }
    if (!options.page_token.empty() && item <= options.page_token) continue;
    if (rolled_up && item == last) continue;
    if (count == options.max_keys) {
      page.next_page_token = last;
      break;
    }
    if (rolled_up) {
      page.common_prefixes.push_back(item);
    } else {
      absl::StatusOr<ObjectInfo> info = Head(key);
      if (absl::IsNotFound(info.status())) continue;  // deleted meanwhile
      if (!info.ok()) return info.status();
      page.objects.push_back(*std::move(info));
    }
    last = std::move(item);
    ++count;
  }
  return page;
}

absl::Status LocalObjectStore::Delete(std::string_view key) {
  ROOST_ASSIGN_OR_RETURN(const std::string path, PathOf(key));
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoError(StrCat("delete ", uri(), "/", key, ": cannot remove"),
                      path, errno);
  }
  return absl::OkStatus();
}

}  // namespace roost
