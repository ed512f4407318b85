#include "server/watcher.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "server/file_lease.h"
#include "server/log.h"
#include "util/str_cat.h"

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
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, LeaseSignal());
  sigaddset(&signals, SIGIO);
  const int signal_fd = ::signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd < 0) {
    Log("signalfd unavailable (", std::strerror(errno),
        "); lease breaks will go unnoticed");
  }
  return std::unique_ptr<Watcher>(new Watcher(inotify_fd, wake_fd, signal_fd));
}

Watcher::~Watcher() {
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
  if (signal_fd_ >= 0) ::close(signal_fd_);
  ::close(wake_fd_);
}

int Watcher::Watch(const std::string& dir, bool contents) {
  if (inotify_fd_ < 0) return -1;
  // Versions arrive by rename (IN_MOVED_TO); a version copied in file by
  // file (rsync, cp -r) is watched with `contents` until it loads.
  uint32_t mask = IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
                  IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;
  if (contents) mask |= IN_CLOSE_WRITE | IN_ATTRIB;
  const int wd = ::inotify_add_watch(inotify_fd_, dir.c_str(), mask);
  if (wd < 0 && errno != ENOENT) {
    Log("cannot watch ", dir, ": ", std::strerror(errno));
  }
  return wd;
}

void Watcher::Unwatch(int wd) {
  if (inotify_fd_ >= 0 && wd >= 0) ::inotify_rm_watch(inotify_fd_, wd);
}

WatchEvents Watcher::Wait(std::chrono::milliseconds timeout) {
  WatchEvents events;
  pollfd fds[3] = {
      {wake_fd_, POLLIN, 0}, {signal_fd_, POLLIN, 0}, {inotify_fd_, POLLIN, 0}};
  const int n = ::poll(fds, 3, static_cast<int>(timeout.count()));
  if (n <= 0) return events;
  // Drain all; what changed is found by rescanning, not from the events.
  uint64_t count;
  while (::read(wake_fd_, &count, sizeof(count)) > 0) events.changed = true;
  if (signal_fd_ >= 0) {
    signalfd_siginfo info;
    while (::read(signal_fd_, &info, sizeof(info)) ==
           static_cast<ssize_t>(sizeof(info))) {
      if (static_cast<int>(info.ssi_signo) == LeaseSignal()) {
        events.lease_breaks.push_back(info.ssi_fd);
      } else {
        events.lease_overflow = true;
      }
    }
  }
  if (inotify_fd_ >= 0) {
    alignas(inotify_event) char buf[4096];
    while (::read(inotify_fd_, buf, sizeof(buf)) > 0) events.changed = true;
  }
  return events;
}

void Watcher::Wake() {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

}  // namespace roost
