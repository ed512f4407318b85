// PullVersion: read and check the MANIFEST, check free space, download
// into a staging directory, publish by rename. See version_pull.h.
#include "server/version_pull.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>

#include "repository/download_file.h"
#include "repository/repository.h"
#include "storage/cuckoo/region_stream_check.h"
#include "storage/partition.h"
#include "storage/version/data_dir.h"
#include "storage/version/manifest.h"
#include "util/file.h"
#include "util/owned_dir.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kStagingPrefix = ".staging-";

PullOutcome Failed(std::string reason, absl::Status status) {
  return {std::move(status), std::move(reason)};
}

// The file of the MANIFEST this server pulls, or why there is none.
PullOutcome PickFile(const PullJob& job, const Manifest& m,
                     const std::string& what, const ManifestFile** file) {
  if (m.version != job.version) {
    return Failed("manifest", absl::InvalidArgumentError(StrCat(
                                  what, ": names version ", m.version,
                                  " where ", job.version, " was expected")));
  }
  if (m.shards == 0) {
    if (m.files.size() != 1 || m.files[0].name != kTableFileName) {
      return Failed("manifest", absl::InvalidArgumentError(StrCat(
                                    what, ": lists ", m.files.size(),
                                    " files; an unsharded version holds one, ",
                                    kTableFileName)));
    }
    *file = &m.files[0];
    return {};
  }
  if (!job.shard) {
    return Failed("shard", absl::FailedPreconditionError(
                               StrCat(what, ": a sharded version of ", m.shards,
                                      " shards; this server has no --shard")));
  }
  if (*job.shard >= m.shards || m.files.size() != m.shards) {
    return Failed("shard",
                  absl::FailedPreconditionError(StrCat(
                      what, ": a version of ", m.shards, " shards (",
                      m.files.size(), " files) has no shard ", *job.shard)));
  }
  const ManifestFile& f = m.files[*job.shard];
  if (f.shard != *job.shard || f.name != ShardFileName(*job.shard, m.shards)) {
    return Failed("manifest",
                  absl::InvalidArgumentError(
                      StrCat(what, ": lists file ", f.name, " where ",
                             ShardFileName(*job.shard, m.shards), " belongs")));
  }
  *file = &f;
  return {};
}

// OK when `bytes` more leave at least `reserve` free on `dir`'s file system.
absl::Status CheckFreeSpace(const std::string& dir, uint64_t bytes,
                            uint64_t reserve) {
  struct statvfs st;
  if (::statvfs(dir.c_str(), &st) != 0) {
    return ErrnoError("cannot statvfs", dir, errno);
  }
  const uint64_t free_bytes = uint64_t{st.f_bavail} * st.f_frsize;
  if (free_bytes < bytes || free_bytes - bytes < reserve) {
    return absl::ResourceExhaustedError(StrCat(
        "not enough free space in ", dir, ": ", free_bytes, " bytes free, ",
        bytes, " needed and ", reserve, " to keep free (--min-free-bytes)"));
  }
  return absl::OkStatus();
}

// Downloads `key` to `path` in ranges, `job.rate` bytes per second.
absl::Status PacedDownload(const PullJob& job, const std::string& key,
                           const std::string& path,
                           const DownloadOptions& expect) {
  const std::string what = StrCat(job.store->uri(), "/", key);
  ROOST_ASSIGN_OR_RETURN(std::unique_ptr<DownloadFile> file,
                         DownloadFile::Create(path, expect.observer));
  const uint64_t size = expect.expected_size.value_or(0);
  // About four pieces a second, so that the pace is even.
  const uint64_t piece =
      std::clamp<uint64_t>(job.rate / 4, 64 << 10, uint64_t{8} << 20);
  const auto start = Clock::now();
  for (uint64_t offset = 0; offset < size;) {
    const uint64_t length = std::min(piece, size - offset);
    absl::StatusOr<std::string> data =
        job.store->Get(key, ByteRange{offset, length});
    if (absl::IsOutOfRange(data.status()) || (data.ok() && data->empty())) {
      return absl::DataLossError(StrCat(what,
                                        ": size mismatch: ends before byte ",
                                        offset, " of the ", size, " expected"));
    }
    if (!data.ok()) return data.status();
    ROOST_RETURN_IF_ERROR(file->Append(*data));
    offset += data->size();
    if (job.on_bytes) job.on_bytes(data->size());
    const auto due = start + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(
                                     static_cast<double>(offset) / job.rate));
    while (Clock::now() < due) {
      if (job.stop && job.stop->load()) {
        return absl::CancelledError(StrCat(what, ": the server is stopping"));
      }
      std::this_thread::sleep_for(std::min<Clock::duration>(
          due - Clock::now(), std::chrono::milliseconds(50)));
    }
  }
  return file->Commit(expect, what);
}

// Makes the files in `dir` 0444 and `dir` 0555, as roost-load publishes.
absl::Status MakeReadOnly(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (::chmod(entry.path().c_str(), 0444) != 0) {
      return ErrnoError("cannot make read-only", entry.path().string(), errno);
    }
  }
  if (ec)
    return absl::InternalError(StrCat("cannot list ", dir, ": ", ec.message()));
  if (::chmod(dir.c_str(), 0555) != 0) {
    return ErrnoError("cannot make read-only", dir, errno);
  }
  return absl::OkStatus();
}

// Checks the table file's region checksums as it downloads
// (storage/cuckoo/region_stream_check.h).
class RegionObserver : public DownloadObserver {
 public:
  void Data(std::string_view bytes) override { check_->Update(bytes); }
  void Restart() override { check_ = std::make_unique<RegionStreamCheck>(); }
  bool Passed() const { return check_->Passed(); }

 private:
  std::unique_ptr<RegionStreamCheck> check_ =
      std::make_unique<RegionStreamCheck>();
};

// Removes the staging directory unless it was published.
struct StagingDir {
  std::string path;
  bool published = false;
  ~StagingDir() {
    if (!published && !path.empty()) RemoveTree(path);
  }
};

}  // namespace

std::string LocalFailureReason(const absl::Status& status) {
  return absl::IsResourceExhausted(status) ? "no_space" : "local";
}

std::string StoreFailureReason(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return "unreachable";
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
      return "denied";
    case absl::StatusCode::kNotFound:
      return "missing";
    case absl::StatusCode::kDataLoss:
      return "corrupt";
    default:
      return "local";
  }
}

PullOutcome PullVersion(const PullJob& job) {
  TableRepository repository(job.store);
  const std::string version_name = VersionDirName(job.version);
  const std::string manifest_what = StrCat(
      job.store->uri(), "/",
      TableRepository::VersionKey(job.table, job.version, kManifestName));
  absl::StatusOr<std::string> text =
      repository.ReadManifest(job.table, job.version);
  if (!text.ok()) {
    if (absl::IsNotFound(text.status())) {
      return Failed("missing",
                    absl::NotFoundError(StrCat(
                        "the POINTER of ", job.table, " names ", version_name,
                        ", which is not a complete version in ",
                        job.store->uri(), ": ", text.status().message())));
    }
    // Larger than any MANIFEST: refused from its size, never downloaded.
    if (absl::IsResourceExhausted(text.status())) {
      return Failed("manifest", text.status());
    }
    return Failed(StoreFailureReason(text.status()), text.status());
  }
  absl::StatusOr<Manifest> manifest = Manifest::Parse(*text);
  if (!manifest.ok()) {
    return Failed("manifest",
                  absl::InvalidArgumentError(StrCat(
                      manifest_what, ": ", manifest.status().message())));
  }
  const ManifestFile* file = nullptr;
  if (PullOutcome picked = PickFile(job, *manifest, manifest_what, &file);
      !picked.status.ok()) {
    return picked;
  }

  const std::string table_dir = (fs::path(job.data_dir) / job.table).string();
  std::error_code ec;
  fs::create_directories(table_dir, ec);
  if (ec) {
    return Failed("local",
                  absl::PermissionDeniedError(
                      StrCat("cannot create ", table_dir, ": ", ec.message())));
  }
  if (absl::Status s = CheckFreeSpace(table_dir, file->size + text->size(),
                                      job.min_free_bytes);
      !s.ok()) {
    return Failed(absl::IsResourceExhausted(s) ? "no_space" : "local", s);
  }
  StagingDir staging;
  {
    absl::StatusOr<std::string> dir = MakeOwnedDir(table_dir, kStagingPrefix);
    if (!dir.ok()) {
      return Failed(LocalFailureReason(dir.status()), dir.status());
    }
    staging.path = *dir;
    ::chmod(staging.path.c_str(), 0755);
  }

  const std::string key =
      TableRepository::VersionKey(job.table, job.version, file->name);
  const std::string path = (fs::path(staging.path) / file->name).string();
  DownloadOptions expect;
  expect.expected_size = file->size;
  expect.expected_xxh3 = file->xxh3;
  RegionObserver regions;
  if (job.verified != nullptr) expect.observer = &regions;
  absl::Status downloaded;
  if (job.rate == 0) {
    downloaded = job.store->GetToFile(key, path, expect);
    if (downloaded.ok() && job.on_bytes) job.on_bytes(file->size);
  } else {
    downloaded = PacedDownload(job, key, path, expect);
  }
  if (!downloaded.ok()) {
    if (absl::IsCancelled(downloaded)) return Failed("local", downloaded);
    // A store's errors are its own codes; ResourceExhausted is the disk
    // filling up (or a quota) as the bytes were written.
    if (absl::IsResourceExhausted(downloaded)) {
      return Failed("no_space", downloaded);
    }
    return Failed(StoreFailureReason(downloaded), downloaded);
  }

  // The MANIFEST last, then the version appears whole by one rename.
  const std::string target = (fs::path(table_dir) / version_name).string();
  absl::Status published = [&]() -> absl::Status {
    const std::string manifest_path =
        (fs::path(staging.path) / std::string(kManifestName)).string();
    // The shard file is durable already (GetToFile and PacedDownload commit
    // through DownloadFile, which fsyncs it and its directory).
    ROOST_RETURN_IF_ERROR(WriteFileAtomically(manifest_path, *text, 0444));
    ROOST_RETURN_IF_ERROR(MakeReadOnly(staging.path));
    ROOST_RETURN_IF_ERROR(FsyncPath(staging.path));
    // Noted as it is now, before the rename lets the registry see it: the
    // rename changes the directory, not the file.
    struct stat st;
    if (job.verified != nullptr && regions.Passed() &&
        ::stat(path.c_str(), &st) == 0) {
      job.verified->Note((fs::path(target) / file->name).string(), st);
    }
    if (::renameat2(AT_FDCWD, staging.path.c_str(), AT_FDCWD, target.c_str(),
                    RENAME_NOREPLACE) == 0) {
      staging.published = true;
      return FsyncPath(table_dir);
    }
    if (errno != EEXIST || !job.replace) {
      return ErrnoError(StrCat("cannot rename ", staging.path, " to"), target,
                        errno);
    }
    // The version there is not the repository's: swapped for the new one in
    // one step (a reader sees either whole), then removed from its new
    // name, a staging one (debris for the next pull should this stop).
    if (::renameat2(AT_FDCWD, staging.path.c_str(), AT_FDCWD, target.c_str(),
                    RENAME_EXCHANGE) != 0) {
      return ErrnoError(StrCat("cannot exchange ", staging.path, " and"),
                        target, errno);
    }
    staging.published = true;
    RemoveTree(staging.path);
    return FsyncPath(table_dir);
  }();
  if (!published.ok()) {
    return Failed(LocalFailureReason(published), published);
  }
  return {};
}

}  // namespace roost
