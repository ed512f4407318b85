// Files read whole, and errno as a status: what the loader, the server and
// the clients share for their small files (MANIFEST, ROLLBACK, policies,
// certificates, tokens). The table formats' own files are storage/file.h.
#ifndef ROOST_UTIL_FILE_H_
#define ROOST_UTIL_FILE_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace roost {

// "WHAT PATH: strerror(err)" with a code for the cause: NotFound (ENOENT),
// PermissionDenied (EACCES, EPERM), ResourceExhausted (ENOMEM), else
// Internal.
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
