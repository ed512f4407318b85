// Files read whole, and errno as a status: what the loader, the server and
// the clients share for their small files (MANIFEST, ROLLBACK, policies,
// certificates, tokens). The table formats' own files are storage/file.h.
#ifndef ROOST_UTIL_FILE_H_
#define ROOST_UTIL_FILE_H_

#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace roost {

// "WHAT PATH: strerror(err)" with a code for the cause: NotFound (ENOENT),
// PermissionDenied (EACCES, EPERM), ResourceExhausted (ENOMEM, and a full
// disk or quota: ENOSPC, EDQUOT), else Internal.
//
// Example:
//   if (::fsync(fd) != 0) return ErrnoError("cannot fsync", path, errno);
absl::Status ErrnoError(std::string_view what, std::string_view path, int err);

// Opens `path` read-only, refusing anything but a regular file: a FIFO, a
// device or a socket where a table, MANIFEST or ROLLBACK file should be is
// an error at once (the open never blocks), not a read that waits forever
// or never ends. With `follow_symlinks` false a symbolic link is refused
// too. Returns the descriptor (close-on-exec) and fills *size. Errors:
// NotFound, PermissionDenied, FailedPrecondition (not a regular file).
absl::StatusOr<int> OpenRegularFile(const std::string& path, uint64_t* size,
                                    bool follow_symlinks = true);

// Reads a whole regular file of at most `max_size` bytes (OpenRegularFile);
// ResourceExhausted naming the limit when it is larger.
absl::StatusOr<std::string> ReadRegularFile(const std::string& path,
                                            uint64_t max_size,
                                            bool follow_symlinks = true);

// fsync(2) of a file or a directory.
absl::Status FsyncPath(const std::string& path);

// A file descriptor, closed when it goes out of scope (-1 holds none).
class ScopedFd {
 public:
  explicit ScopedFd(int fd = -1) : fd_(fd) {}
  ~ScopedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ScopedFd& operator=(ScopedFd&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// write(2) until the whole of `data` is written, again after EINTR.
// Errors name `path` ("cannot write PATH: ...").
absl::Status WriteAll(int fd, std::string_view data, std::string_view path);

// Replaces `path` with a file holding `contents` (mode `mode`) such that a
// reader, or a crash at any moment, sees the old file whole or the new one
// whole: written to a new temporary file beside it (created O_EXCL, so
// nothing planted under the name is opened), fsynced, renamed over `path`,
// and the directory fsynced so that the rename itself survives a crash.
// The temporary file is removed on failure.
absl::Status WriteFileAtomically(const std::string& path,
                                 std::string_view contents, mode_t mode = 0644);

}  // namespace roost

#endif  // ROOST_UTIL_FILE_H_
