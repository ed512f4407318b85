#include "loader/repository_destination.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>

#include "storage/data_dir.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// "roost-load pid 1234 on build-7", recorded in the CLAIM for people.
std::string PublisherName() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return StrCat("roost-load pid ", ::getpid(), " on ",
                host[0] != '\0' ? host : "unknown host");
}

// The store's error, prefixed with what roost-load was doing. The input
// and the build were good by now: whatever the store answers is a failure
// to store the version (roost-load's I/O exit code), so the codes that
// mean bad input elsewhere (a local store's FailedPrecondition for a path
// under a file, an upload read back wrong) become Aborted; the others
// (Unavailable, PermissionDenied, NotFound) keep theirs.
absl::Status Annotate(const absl::Status& s, std::string_view doing) {
  if (s.ok()) return s;
  const bool input_code = absl::IsInvalidArgument(s) || absl::IsDataLoss(s) ||
                          absl::IsFailedPrecondition(s);
  return absl::Status(input_code ? absl::StatusCode::kAborted : s.code(),
                      StrCat(doing, ": ", s.message()));
}

}  // namespace

absl::StatusOr<RepositoryTarget> OpenRepositoryTarget(const BuildJob& job) {
  RepositoryTarget target;
  ROOST_ASSIGN_OR_RETURN(target.store, OpenObjectStore(job.repository));
  target.repository = std::make_unique<TableRepository>(target.store.get());
  ROOST_RETURN_IF_ERROR(Annotate(
      target.repository->ListVersions(job.table).status(),
      StrCat("cannot read table ", job.table, " in ", target.store->uri())));
  return target;
}

absl::Status CheckRepositoryShrink(RepositoryTarget& target,
                                   const BuildJob& job, uint64_t keys) {
  if (!job.max_shrink) return absl::OkStatus();
  ROOST_ASSIGN_OR_RETURN(std::vector<RepositoryVersion> versions,
                         target.repository->ListVersions(job.table));
  for (auto it = versions.rbegin(); it != versions.rend(); ++it) {
    if (!it->complete) continue;
    ROOST_ASSIGN_OR_RETURN(std::string text, target.repository->ReadManifest(
                                                 job.table, it->version));
    absl::StatusOr<Manifest> previous = Manifest::Parse(text);
    if (!previous.ok()) {
      return absl::DataLossError(StrCat(
          target.store->uri(), "/",
          TableRepository::VersionKey(job.table, it->version, kManifestName),
          ": ", previous.status().message()));
    }
    const double floor =
        static_cast<double>(previous->keys) * (1 - *job.max_shrink);
    if (static_cast<double>(keys) < floor) {
      return absl::InvalidArgumentError(StrCat(
          "the new version of ", job.table, " holds ", keys, " keys; ",
          VersionDirName(it->version), " in ", target.store->uri(), " holds ",
          previous->keys, ", and --max-shrink ",
          fmt::format("{:g}", *job.max_shrink * 100), "% allows no fewer than ",
          static_cast<uint64_t>(std::ceil(floor)), "; nothing was published"));
    }
    return absl::OkStatus();
  }
  return absl::OkStatus();
}

absl::StatusOr<RepositoryPublished> PublishToRepository(
    RepositoryTarget& target, const BuildJob& job, const std::string& dir,
    Manifest manifest) {
  std::vector<VersionFile> files;
  for (const ManifestFile& f : manifest.files) {
    files.push_back({f.name, StrCat(dir, "/", f.name), f.xxh3});
  }
  RepositoryPublished published;
  absl::StatusOr<uint64_t> version = target.repository->Publish(
      job.table, files,
      [&](uint64_t v) -> absl::StatusOr<std::string> {
        manifest.version = v;
        return manifest.ToJson();
      },
      PublisherName());
  if (!version.ok()) {
    return Annotate(version.status(), StrCat("cannot publish ", job.table,
                                             " to ", target.store->uri()));
  }
  published.version = *version;
  published.uri = StrCat(target.store->uri(), "/", job.table, "/",
                         VersionDirName(*version));
  if (job.keep_versions) {
    RetentionOptions retention;
    retention.keep_versions = *job.keep_versions;
    retention.abandoned_after = job.abandoned_after;
    absl::StatusOr<PruneResult> pruned =
        PruneTable(target.repository.get(), job.table, retention);
    if (pruned.ok()) {
      published.pruned = *std::move(pruned);
    } else {
      published.retention_error = std::string(pruned.status().message());
    }
  }
  return published;
}

}  // namespace roost
