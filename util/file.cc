#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "util/str_cat.h"

namespace roost {

absl::Status ErrnoError(std::string_view what, std::string_view path, int err) {
  std::string message = StrCat(what, " ", path, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    case ENOMEM:
    case ENOSPC:
    case EDQUOT:
      return absl::ResourceExhaustedError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::StatusOr<int> OpenRegularFile(const std::string& path, uint64_t* size,
                                    bool follow_symlinks) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
  // writer. It changes nothing for a regular file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK |
                                          (follow_symlinks ? 0 : O_NOFOLLOW));
  if (fd < 0) {
    if (errno == ELOOP && !follow_symlinks) {
      return absl::FailedPreconditionError(
          StrCat("cannot open ", path, ": a symbolic link, not a file"));
    }
    return ErrnoError("cannot open", path, errno);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return ErrnoError("cannot stat", path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::FailedPreconditionError(
        StrCat("cannot open ", path, ": not a regular file"));
  }
  *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

absl::StatusOr<std::string> ReadRegularFile(const std::string& path,
                                            uint64_t max_size,
                                            bool follow_symlinks) {
  uint64_t size = 0;
  auto fd = OpenRegularFile(path, &size, follow_symlinks);
  if (!fd.ok()) return fd.status();
  std::string out;
  out.reserve(std::min(size, max_size));
  char buf[65536];
  // Reads past the size fstat gave, in case the file grew, but never more
  // than one buffer past the limit.
  while (out.size() <= max_size) {
    const ssize_t n = ::read(*fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(*fd);
      return ErrnoError("cannot read", path, err);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(*fd);
  if (out.size() > max_size) {
    return absl::ResourceExhaustedError(
        StrCat(path, " is larger than ", max_size, " bytes"));
  }
  return out;
}

absl::Status FsyncPath(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot open", path, errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoError("cannot fsync", path, err);
  return absl::OkStatus();
}

absl::Status WriteAll(int fd, std::string_view data, std::string_view path) {
  for (size_t done = 0; done < data.size();) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("cannot write", path, errno);
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path,
                                 std::string_view contents, mode_t mode) {
  const std::filesystem::path target(path);
  const std::filesystem::path dir =
      target.has_parent_path() ? target.parent_path() : ".";
  std::string tmp =
      (dir / StrCat(".", target.filename().string(), ".tmp-XXXXXX")).string();
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot create", tmp, errno);
  int err = 0;
  if (::fchmod(fd, mode) != 0) err = errno;
  for (size_t done = 0; err == 0 && done < contents.size();) {
    const ssize_t n =
        ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) err = errno;
    if (n > 0) done += static_cast<size_t>(n);
  }
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    return ErrnoError("cannot write", path, err);
  }
  return FsyncPath(dir.string());
}

}  // namespace roost
