#include "loader/data_dir_destination.h"

#include <fmt/format.h>

#include <cmath>

#include "loader/schema_change.h"
#include "storage/file.h"
#include "storage/version/data_dir.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// The newest complete version of the table in `table_dir` (its number in
// *version), if there is one. A MANIFEST that does not parse is an error,
// unless `skip_unreadable`: then that directory is not a version (as the
// server sees it) and the one before is looked at.
absl::StatusOr<std::optional<Manifest>> NewestManifest(
    const std::string& table_dir, bool skip_unreadable, uint64_t* version) {
  auto versions = ListVersions(table_dir);
  if (!versions.ok()) return versions.status();
  for (auto it = versions->rbegin(); it != versions->rend(); ++it) {
    if (!it->complete) continue;
    auto previous = ReadManifest(it->path + "/" + std::string(kManifestName));
    if (!previous.ok() && skip_unreadable) continue;
    if (!previous.ok()) return previous.status();
    *version = it->version;
    return std::optional<Manifest>(*std::move(previous));
  }
  return std::optional<Manifest>();  // the first version
}

// With --max-shrink: refuses `keys` when `previous` (version `version` of
// `table`) had more than it by over the allowed share.
absl::Status CheckShrink(const std::string& table, double max_shrink,
                         const Manifest& previous, uint64_t version,
                         uint64_t keys) {
  const double floor = static_cast<double>(previous.keys) * (1 - max_shrink);
  if (static_cast<double>(keys) < floor) {
    return absl::InvalidArgumentError(StrCat(
        "the new version of ", table, " holds ", keys, " keys; ",
        VersionDirName(version), " holds ", previous.keys,
        ", and --max-shrink ", fmt::format("{:g}", max_shrink * 100),
        "% allows no fewer than ", static_cast<uint64_t>(std::ceil(floor)),
        "; nothing was published"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<DataDirDestination>> DataDirDestination::Stage(
    const std::string& data_dir, const std::string& table,
    std::optional<double> max_shrink, bool allow_schema_change) {
  ROOST_ASSIGN_OR_RETURN(std::unique_ptr<Publisher> publisher,
                         Publisher::Start(data_dir, table));
  return std::unique_ptr<DataDirDestination>(new DataDirDestination(
      std::move(publisher), table, max_shrink, allow_schema_change));
}

absl::StatusOr<Publication> DataDirDestination::Publish(Manifest manifest) {
  uint64_t newest = 0;
  if (max_shrink_) {
    ROOST_ASSIGN_OR_RETURN(
        std::optional<Manifest> previous,
        NewestManifest(publisher_->table_dir(), false, &newest));
    if (previous) {
      ROOST_RETURN_IF_ERROR(
          CheckShrink(table_, *max_shrink_, *previous, newest, manifest.keys));
    }
  }
  // The schema follows the newest version a server could serve: a version
  // whose MANIFEST does not parse is none.
  ROOST_ASSIGN_OR_RETURN(
      std::optional<Manifest> previous,
      NewestManifest(publisher_->table_dir(), true, &newest));
  if (previous) {
    ROOST_RETURN_IF_ERROR(CheckSchemaChange(
        *previous, StrCat(table_, " ", VersionDirName(newest)),
        allow_schema_change_, &manifest));
  }
  ROOST_ASSIGN_OR_RETURN(
      PublishedVersion published,
      publisher_->Publish([&](uint64_t version) -> absl::Status {
        manifest.version = version;
        ROOST_ASSIGN_OR_RETURN(
            std::unique_ptr<WritableFile> file,
            WritableFile::Create(publisher_->staging_dir() + "/" +
                                 std::string(kManifestName)));
        ROOST_RETURN_IF_ERROR(file->Append(manifest.ToJson()));
        return file->Close(/*sync=*/true);
      }));
  Publication publication;
  publication.path = published.path;
  publication.version = published.version;
  return publication;
}

}  // namespace roost
