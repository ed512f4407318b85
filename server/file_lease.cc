#include "server/file_lease.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "util/str_cat.h"

namespace roost {

int LeaseSignal() { return SIGRTMIN + 4; }

absl::StatusOr<std::unique_ptr<FileLease>> FileLease::Take(
    const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return absl::NotFoundError(
        StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::FailedPreconditionError(
        StrCat("cannot lease ", path, ": not a regular file"));
  }
  // The signal carries the descriptor (si_fd) only when set with F_SETSIG.
  if (::fcntl(fd, F_SETSIG, LeaseSignal()) != 0 ||
      ::fcntl(fd, F_SETLEASE, F_RDLCK) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EAGAIN || err == EBUSY) {
      return absl::UnavailableError(
          StrCat(path, " is open for writing (a copy still in progress?)"));
    }
    return absl::FailedPreconditionError(
        StrCat("cannot lease ", path, ": ", std::strerror(err)));
  }
  return std::unique_ptr<FileLease>(new FileLease(fd, st.st_dev, st.st_ino));
}

FileLease::~FileLease() { ::close(fd_); }

bool FileLease::Held() const { return ::fcntl(fd_, F_GETLEASE) == F_RDLCK; }

bool FileLease::SameFile(const std::string& path) const {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && st.st_dev == dev_ &&
         st.st_ino == ino_;
}

}  // namespace roost
