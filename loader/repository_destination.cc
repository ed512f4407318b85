#include "loader/repository_destination.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>

#include "loader/schema_change.h"
#include "storage/version/data_dir.h"
#include "util/owned_dir.h"
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

// The store's error, prefixed with what roost-load was doing; the codes
// that mean bad input elsewhere become Aborted (see the header).
absl::Status Annotate(const absl::Status& s, std::string_view doing) {
  if (s.ok()) return s;
  const bool input_code = absl::IsInvalidArgument(s) || absl::IsDataLoss(s) ||
                          absl::IsFailedPrecondition(s);
  return absl::Status(input_code ? absl::StatusCode::kAborted : s.code(),
                      StrCat(doing, ": ", s.message()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<RepositoryDestination>>
RepositoryDestination::Stage(RepositoryDestinationOptions options) {
  ROOST_ASSIGN_OR_RETURN(std::unique_ptr<ObjectStore> store,
                         OpenObjectStore(options.uri));
  std::unique_ptr<RepositoryDestination> destination(
      new RepositoryDestination(std::move(options), std::move(store)));
  const std::string& table = destination->options_.table;
  ROOST_RETURN_IF_ERROR(Annotate(
      destination->repository_.ListVersions(table).status(),
      StrCat("cannot read table ", table, " in ", destination->store_->uri())));
  ROOST_ASSIGN_OR_RETURN(
      destination->staging_,
      MakeOwnedTempDir(destination->options_.temp_dir, "roost-publish-"));
  return destination;
}

RepositoryDestination::~RepositoryDestination() {
  if (!staging_.empty()) RemoveTree(staging_);
}

absl::StatusOr<std::optional<Manifest>> NewestCompleteManifest(
    TableRepository* repository, const std::string& uri,
    const std::string& table, std::optional<uint64_t> before,
    uint64_t* version) {
  ROOST_ASSIGN_OR_RETURN(std::vector<RepositoryVersion> versions,
                         repository->ListVersions(table));
  for (auto it = versions.rbegin(); it != versions.rend(); ++it) {
    if (!it->complete || (before && it->version >= *before)) continue;
    ROOST_ASSIGN_OR_RETURN(std::string text,
                           repository->ReadManifest(table, it->version));
    absl::StatusOr<Manifest> previous = Manifest::Parse(text);
    if (!previous.ok()) {
      return absl::DataLossError(
          StrCat(uri, "/",
                 TableRepository::VersionKey(table, it->version, kManifestName),
                 ": ", previous.status().message()));
    }
    *version = it->version;
    return std::optional<Manifest>(*std::move(previous));
  }
  return std::optional<Manifest>();
}

absl::Status RepositoryDestination::CheckShrink(const Manifest& previous,
                                                uint64_t version,
                                                uint64_t keys) {
  if (!options_.max_shrink) return absl::OkStatus();
  const std::string& table = options_.table;
  const double max_shrink = *options_.max_shrink;
  const double floor = static_cast<double>(previous.keys) * (1 - max_shrink);
  if (static_cast<double>(keys) < floor) {
    return absl::InvalidArgumentError(StrCat(
        "the new version of ", table, " holds ", keys, " keys; ",
        VersionDirName(version), " in ", store_->uri(), " holds ",
        previous.keys, ", and --max-shrink ",
        fmt::format("{:g}", max_shrink * 100), "% allows no fewer than ",
        static_cast<uint64_t>(std::ceil(floor)), "; nothing was published"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Publication> RepositoryDestination::Publish(Manifest manifest) {
  const std::string& table = options_.table;
  uint64_t newest = 0;
  ROOST_ASSIGN_OR_RETURN(std::optional<Manifest> previous,
                         NewestCompleteManifest(&repository_, store_->uri(),
                                                table, std::nullopt, &newest));
  if (previous) {
    ROOST_RETURN_IF_ERROR(CheckShrink(*previous, newest, manifest.keys));
    ROOST_RETURN_IF_ERROR(CheckSchemaChange(
        *previous,
        StrCat(store_->uri(), "/", table, "/", VersionDirName(newest)),
        options_.allow_schema_change, &manifest));
  }
  std::vector<VersionFile> files;
  for (const ManifestFile& f : manifest.files) {
    files.push_back({f.name, StrCat(staging_, "/", f.name), f.xxh3});
  }
  absl::StatusOr<uint64_t> version = repository_.Publish(
      table, files,
      [&](uint64_t v) -> absl::StatusOr<std::string> {
        manifest.version = v;
        return manifest.ToJson();
      },
      PublisherName());
  if (!version.ok()) {
    return Annotate(version.status(),
                    StrCat("cannot publish ", table, " to ", store_->uri()));
  }
  Publication published;
  published.version = *version;
  published.path =
      StrCat(store_->uri(), "/", table, "/", VersionDirName(*version));
  published.repository = store_->uri();
  if (options_.retention) {
    absl::StatusOr<PruneResult> pruned =
        PruneTable(&repository_, table, *options_.retention);
    if (pruned.ok()) {
      published.pruned = *std::move(pruned);
    } else {
      published.pruned = PruneResult();
      published.retention_error = std::string(pruned.status().message());
    }
  }
  return published;
}

}  // namespace roost
