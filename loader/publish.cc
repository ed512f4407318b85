#include "loader/publish.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "util/file.h"
#include "util/owned_dir.h"
#include "util/str_cat.h"

namespace roost {
namespace {

constexpr std::string_view kStagingPrefix = ".staging-";

// Makes the files in `dir` 0444 and `dir` itself 0555.
absl::Status MakeReadOnly(const std::string& dir) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (::chmod(it->path().c_str(), 0444) != 0) {
      return ErrnoError("cannot make read-only", it->path().string(), errno);
    }
  }
  if (ec)
    return absl::InternalError(StrCat("cannot list ", dir, ": ", ec.message()));
  if (::chmod(dir.c_str(), 0555) != 0) {
    return ErrnoError("cannot make read-only", dir, errno);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Publisher>> Publisher::Start(
    const std::string& data_dir, const std::string& table) {
  if (absl::Status s = ValidateTableName(table); !s.ok()) return s;
  const std::string table_dir =
      (std::filesystem::path(data_dir) / table).string();
  std::error_code ec;
  const bool created = std::filesystem::create_directories(table_dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        StrCat("cannot create ", table_dir, ": ", ec.message()));
  }
  // Staging directories whose loader is gone are debris of a failed build.
  absl::StatusOr<std::string> staging = MakeOwnedDir(table_dir, kStagingPrefix);
  if (!staging.ok()) return staging.status();
  // mkdtemp makes it private; a published version is for every reader.
  ::chmod(staging->c_str(), 0755);
  return std::unique_ptr<Publisher>(
      new Publisher(table_dir, *std::move(staging), created));
}

Publisher::~Publisher() {
  if (published_) return;
  RemoveTree(staging_);
  // Only if empty: another loader may have published into it meanwhile.
  if (created_table_dir_) ::rmdir(table_dir_.c_str());
}

absl::StatusOr<PublishedVersion> Publisher::Publish(
    const std::function<absl::Status(uint64_t version)>& write_manifest) {
  auto versions = ListVersions(table_dir_);
  if (!versions.ok()) return versions.status();
  auto next = NextVersion(*versions);
  if (!next.ok()) return next.status();
  uint64_t version = *next;
  std::error_code ec;
  for (int attempt = 0; attempt < 100 && version != 0; ++attempt, ++version) {
    if (absl::Status s = write_manifest(version); !s.ok()) return s;
    for (const auto& entry :
         std::filesystem::directory_iterator(staging_, ec)) {
      if (absl::Status s = FsyncPath(entry.path().string()); !s.ok()) return s;
    }
    // Published versions are immutable: their files and directory are made
    // read-only, so that a cp or rsync --inplace over a served file fails
    // instead of changing it under the server.
    if (absl::Status s = MakeReadOnly(staging_); !s.ok()) return s;
    if (absl::Status s = FsyncPath(staging_); !s.ok()) return s;
    const std::string target =
        (std::filesystem::path(table_dir_) / VersionDirName(version)).string();
    // Never replace a version: RENAME_NOREPLACE fails if the name exists.
    if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target.c_str(),
                    RENAME_NOREPLACE) == 0) {
      published_ = true;
      if (absl::Status s = FsyncPath(table_dir_); !s.ok()) return s;
      return PublishedVersion{version, target};
    }
    if (errno != EEXIST && errno != ENOTEMPTY) {
      return ErrnoError("cannot publish", target, errno);
    }
    // Taken: writable again, for the MANIFEST of the next number.
    ::chmod(staging_.c_str(), 0755);
    ::unlink(
        (std::filesystem::path(staging_) / std::string(kManifestName)).c_str());
  }
  return absl::AbortedError(
      StrCat("cannot find a free version number in ", table_dir_));
}

}  // namespace roost
