// Watcher: wakes the registry's thread when the data directory changes, or
// when another thread asks it to. inotify reports new and removed table
// directories and versions renamed into place; where inotify cannot be had
// (or is turned off) the registry still rescans every poll interval.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(auto watcher, Watcher::Create(/*inotify=*/true));
//   watcher->Watch("/data");
//   while (running) {
//     watcher->Wait(std::chrono::seconds(5));
//     Rescan();
//   }
#ifndef ROOST_SERVER_WATCHER_H_
#define ROOST_SERVER_WATCHER_H_

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace roost {

class Watcher {
 public:
  // Without `inotify`, or when inotify_init fails (which is logged), Wait()
  // returns only on Wake() or its timeout.
  static absl::StatusOr<std::unique_ptr<Watcher>> Create(bool inotify);
  ~Watcher();
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  // Reports changes to the entries of `dir` from now on. Watching a
  // directory twice is harmless; a removed directory stops being watched.
  void Watch(const std::string& dir);

  // Waits until something changed, Wake() was called, or `timeout` passed;
  // true unless it timed out.
  bool Wait(std::chrono::milliseconds timeout);

  // Any thread: makes a Wait() in progress (or the next one) return.
  void Wake();

  bool inotify() const { return inotify_fd_ >= 0; }

 private:
  Watcher(int inotify_fd, int wake_fd)
      : inotify_fd_(inotify_fd), wake_fd_(wake_fd) {}
  int inotify_fd_;
  int wake_fd_;  // an eventfd
};

}  // namespace roost

#endif  // ROOST_SERVER_WATCHER_H_
