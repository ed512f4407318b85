// FileLease: a read lease (fcntl F_SETLEASE) on a table file the server maps.
//
// A mapped file that someone truncates kills the mapping process with
// SIGBUS on its next read of a page past the new end, and one that someone
// overwrites in place changes under its readers. Published versions are
// immutable by contract, but the server must survive a broken contract
// (cp or rsync --inplace over a served file, truncate). With a read lease
// the kernel holds any open for writing and any truncate of the file, and
// sends the lease holder a signal (LeaseSignal(), with the file descriptor);
// the writer waits until the holder releases the lease or
// /proc/sys/fs/lease-break-time (45 s by default) passes. The registry stops
// serving the version, waits for its last in-flight request, unmaps it and
// only then releases the lease, so that no request ever reads a page the
// writer is about to take away.
//
// A lease can be had only on a regular file of a local filesystem that is
// not open for writing, by its owner or a process with CAP_LEASE.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(auto lease, FileLease::Take(path));
//   ... map and verify `path`, check lease->SameFile(mapped inode) ...
//   // when LeaseSignal() arrives for lease->fd(): stop serving, unmap,
//   // then destroy the lease.
#ifndef ROOST_SERVER_FILE_LEASE_H_
#define ROOST_SERVER_FILE_LEASE_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace roost {

// The real-time signal lease breaks arrive as (SIGIO when the kernel's
// queue of real-time signals overflows). Both must be blocked in every
// thread, before any is started, and read with a signalfd.
int LeaseSignal();

class FileLease {
 public:
  // Takes a read lease on `path`. Unavailable when a writer has the file
  // open (a copy still in progress); FailedPrecondition when no lease can be
  // had here (not the owner, a filesystem without leases); the message
  // says why.
  static absl::StatusOr<std::unique_ptr<FileLease>> Take(
      const std::string& path);
  // Releases the lease (closes its descriptor).
  ~FileLease();
  FileLease(const FileLease&) = delete;
  FileLease& operator=(const FileLease&) = delete;

  int fd() const { return fd_; }
  // Still held: false once a writer has asked for the file.
  bool Held() const;
  // Whether the lease is on the file `path` names now.
  bool SameFile(const std::string& path) const;

 private:
  FileLease(int fd, dev_t dev, ino_t ino) : fd_(fd), dev_(dev), ino_(ino) {}
  int fd_;
  dev_t dev_;
  ino_t ino_;
};

}  // namespace roost

#endif  // ROOST_SERVER_FILE_LEASE_H_
