#include "server/watcher.h"

#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "server/log.h"
#include "storage/str_cat.h"

namespace roost {

absl::StatusOr<std::unique_ptr<Watcher>> Watcher::Create(bool inotify) {
  const int wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd < 0) {
    return absl::InternalError(StrCat("eventfd: ", std::strerror(errno)));
  }
  int inotify_fd = -1;
  if (inotify) {
    inotify_fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (inotify_fd < 0) {
      Log("inotify unavailable (", std::strerror(errno), "); polling only");
    }
  }
  return std::unique_ptr<Watcher>(new Watcher(inotify_fd, wake_fd));
}

Watcher::~Watcher() {
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
  ::close(wake_fd_);
}

void Watcher::Watch(const std::string& dir) {
  if (inotify_fd_ < 0) return;
  // Versions arrive by rename (IN_MOVED_TO); a MANIFEST written in place by
  // hand arrives by IN_CLOSE_WRITE in the version directory, which the next
  // poll finds.
  constexpr uint32_t kMask = IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM |
                             IN_DELETE | IN_DELETE_SELF | IN_ONLYDIR;
  if (::inotify_add_watch(inotify_fd_, dir.c_str(), kMask) < 0 &&
      errno != ENOENT) {
    Log("cannot watch ", dir, ": ", std::strerror(errno));
  }
}

bool Watcher::Wait(std::chrono::milliseconds timeout) {
  pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {inotify_fd_, POLLIN, 0}};
  const int n =
      ::poll(fds, inotify_fd_ >= 0 ? 2 : 1, static_cast<int>(timeout.count()));
  if (n <= 0) return false;
  // Drain both; what changed is found by rescanning, not from the events.
  uint64_t count;
  while (::read(wake_fd_, &count, sizeof(count)) > 0) {
  }
  if (inotify_fd_ >= 0) {
    alignas(inotify_event) char buf[4096];
    while (::read(inotify_fd_, buf, sizeof(buf)) > 0) {
    }
  }
  return true;
}

void Watcher::Wake() {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

}  // namespace roost
