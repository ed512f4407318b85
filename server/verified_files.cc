#include "server/verified_files.h"

#include <algorithm>

namespace roost {
namespace {

bool SameTime(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

bool Unchanged(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino &&
         a.st_size == b.st_size && SameTime(a.st_mtim, b.st_mtim) &&
         SameTime(a.st_ctim, b.st_ctim);
}

}  // namespace

void VerifiedFiles::Note(const std::string& path, const struct stat& st) {
  std::lock_guard lock(mu_);
  std::erase_if(entries_, [&](const Entry& e) { return e.path == path; });
  entries_.push_back({path, st});
  while (entries_.size() > kCapacity) entries_.pop_front();
}

bool VerifiedFiles::Matches(const std::string& path) const {
  struct stat now;
  if (::stat(path.c_str(), &now) != 0) return false;
  std::lock_guard lock(mu_);
  return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) {
    return e.path == path && Unchanged(e.st, now);
  });
}

}  // namespace roost
