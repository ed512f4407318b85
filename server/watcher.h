// Watcher: wakes the registry's thread when the data directory changes, when
// a writer breaks the lease on a mapped table file, or when another thread
// asks it to. inotify reports new and removed table directories, versions
// renamed into place and files arriving in a version being copied in; where
// inotify cannot be had (or is turned off) the registry still rescans every
// poll interval. Lease breaks arrive as LeaseSignal() (SIGIO when the
// kernel's signal queue overflows), read from a signalfd: both signals must
// be blocked in every thread before any is started.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(auto watcher, Watcher::Create(/*inotify=*/true));
//   watcher->Watch("/data");
//   while (running) {
//     WatchEvents events = watcher->Wait(std::chrono::seconds(1));
//     for (int fd : events.lease_breaks) StopServingFileOf(fd);
//     if (events.changed) Rescan();
//   }
#ifndef ROOST_SERVER_WATCHER_H_
#define ROOST_SERVER_WATCHER_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace roost {

struct WatchEvents {
  // inotify reported something, or Wake() was called.
  bool changed = false;
  // Descriptors of leases a writer asked to break.
  std::vector<int> lease_breaks;
  // Lease signals were lost (SIGIO): check every lease held.
  bool lease_overflow = false;
};

class Watcher {
 public:
  // Without `inotify`, or when inotify_init fails (which is logged), only
  // Wake(), lease breaks and the timeout end a Wait().
  static absl::StatusOr<std::unique_ptr<Watcher>> Create(bool inotify);
  ~Watcher();
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  // Reports changes to the entries of `dir` from now on: entries made,
  // removed and renamed in or out, and with `contents` also files written
  // and closed or changed in their attributes (for a version whose files
  // are still arriving). Returns the watch descriptor, or -1. Watching a
  // directory twice returns the same descriptor; a removed directory stops
  // being watched.
  int Watch(const std::string& dir, bool contents = false);
  // Stops a watch; harmless for one the kernel already dropped.
  void Unwatch(int wd);

  // Waits until one of the events above happens or `timeout` passes.
  WatchEvents Wait(std::chrono::milliseconds timeout);

  // Any thread: makes a Wait() in progress (or the next one) return.
  void Wake();

  bool inotify() const { return inotify_fd_ >= 0; }

 private:
  Watcher(int inotify_fd, int wake_fd, int signal_fd)
      : inotify_fd_(inotify_fd), wake_fd_(wake_fd), signal_fd_(signal_fd) {}
  int inotify_fd_;
  int wake_fd_;    // an eventfd
  int signal_fd_;  // a signalfd for lease breaks, or -1
};

}  // namespace roost

#endif  // ROOST_SERVER_WATCHER_H_
