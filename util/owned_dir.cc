#include "util/owned_dir.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstring>
#include <filesystem>
#include <optional>

#include "absl/status/status.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// The pid in "<prefix><pid>-...", if `name` has that shape.
std::optional<pid_t> OwnerPid(std::string_view name, std::string_view prefix) {
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  name.remove_prefix(prefix.size());
  pid_t pid = 0;
  const auto [end, ec] =
      std::from_chars(name.data(), name.data() + name.size(), pid);
  if (ec != std::errc() || pid <= 0 || end == name.data() + name.size() ||
      *end != '-') {
    return std::nullopt;
  }
  return pid;
}

bool ProcessIsGone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

}  // namespace

void RemoveTree(const std::string& path) {
  // A staging directory is made read-only (0555) just before it is
  // published, which would keep its files from being unlinked.
  ::chmod(path.c_str(), 0755);
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

void RemoveDeadOwnersDirs(const std::string& parent, std::string_view prefix) {
  std::error_code ec;
  std::filesystem::directory_iterator it(parent, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const auto pid = OwnerPid(it->path().filename().string(), prefix);
    if (pid && ProcessIsGone(*pid)) RemoveTree(it->path().string());
  }
}

absl::StatusOr<std::string> MakeOwnedDir(const std::string& parent,
                                         std::string_view prefix) {
  RemoveDeadOwnersDirs(parent, prefix);
  std::string dir =
      (std::filesystem::path(parent) / StrCat(prefix, ::getpid(), "-XXXXXX"))
          .string();
  if (::mkdtemp(dir.data()) == nullptr) {
    return absl::PermissionDeniedError(
        StrCat("cannot create a directory under ", parent, ": ",
               std::strerror(errno)));
  }
  return dir;
}

std::string TempParent(const std::string& temp_dir) {
  if (!temp_dir.empty()) return temp_dir;
  // Without the error_code, a $TMPDIR that is no directory throws.
  std::error_code ec;
  const std::string system = std::filesystem::temp_directory_path(ec).string();
  return ec ? "/tmp" : system;
}

absl::StatusOr<std::string> MakeOwnedTempDir(const std::string& temp_dir,
                                             std::string_view prefix) {
  return MakeOwnedDir(TempParent(temp_dir), prefix);
}

}  // namespace roost
