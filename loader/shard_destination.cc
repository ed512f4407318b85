#include "loader/shard_destination.h"

#include "loader/shard_part.h"
#include "storage/partition.h"
#include "storage/version/data_dir.h"
#include "util/owned_dir.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// The store's error, prefixed with what roost-load was doing; the codes
// that mean bad input elsewhere become Aborted (as RepositoryDestination's:
// the input and the build were good).
absl::Status Annotate(const absl::Status& s, std::string_view doing) {
  if (s.ok()) return s;
  const bool input_code = absl::IsInvalidArgument(s) || absl::IsDataLoss(s) ||
                          absl::IsFailedPrecondition(s);
  return absl::Status(input_code ? absl::StatusCode::kAborted : s.code(),
                      StrCat(doing, ": ", s.message()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<ShardDestination>> ShardDestination::Stage(
    ShardDestinationOptions options) {
  ROOST_ASSIGN_OR_RETURN(std::unique_ptr<ObjectStore> store,
                         OpenObjectStore(options.uri));
  std::unique_ptr<ShardDestination> destination(
      new ShardDestination(std::move(options), std::move(store)));
  ROOST_RETURN_IF_ERROR(destination->CheckOpen());
  ROOST_ASSIGN_OR_RETURN(
      destination->staging_,
      MakeOwnedTempDir(destination->options_.temp_dir, "roost-shard-"));
  return destination;
}

ShardDestination::~ShardDestination() {
  if (!staging_.empty()) RemoveTree(staging_);
}

absl::Status ShardDestination::CheckOpen() {
  const std::string& table = options_.table;
  const uint64_t v = options_.version;
  const std::string where =
      StrCat(store_->uri(), "/", table, "/", VersionDirName(v));
  const std::string doing = StrCat("cannot read ", table, " ",
                                   VersionDirName(v), " in ", store_->uri());
  absl::StatusOr<ObjectInfo> claim =
      store_->Head(TableRepository::VersionKey(table, v, kClaimName));
  if (absl::IsNotFound(claim.status())) {
    return absl::FailedPreconditionError(
        StrCat(where,
               " is not claimed: roost-load claim gives the version "
               "number the shards of a new version are built for"));
  }
  ROOST_RETURN_IF_ERROR(Annotate(claim.status(), doing));
  absl::StatusOr<ObjectInfo> manifest =
      store_->Head(TableRepository::VersionKey(table, v, kManifestName));
  if (manifest.ok()) {
    return absl::FailedPreconditionError(
        StrCat(where,
               " is published already (it has its MANIFEST): a shard is "
               "built only into a claimed version not yet published; claim "
               "a new one"));
  }
  if (!absl::IsNotFound(manifest.status())) {
    return Annotate(manifest.status(), doing);
  }
  return absl::OkStatus();
}

absl::StatusOr<Publication> ShardDestination::Publish(Manifest manifest) {
  ROOST_RETURN_IF_ERROR(CheckOpen());
  const std::string& table = options_.table;
  const uint64_t v = options_.version;
  manifest.version = v;
  const std::string file = ShardFileName(options_.shard, options_.shards);
  const std::string doing =
      StrCat("cannot upload shard ", options_.shard, " of ", table, " ",
             VersionDirName(v), " to ", store_->uri());
  if (manifest.files.size() != 1 || manifest.files[0].name != file) {
    return absl::InternalError(StrCat(doing, ": the build wrote no ", file));
  }
  ROOST_RETURN_IF_ERROR(
      Annotate(repository_.UploadFile(
                   table, v,
                   {file, StrCat(staging_, "/", file), manifest.files[0].xxh3}),
               doing));
  // The part last: there, it vouches for the file beside it.
  ROOST_RETURN_IF_ERROR(Annotate(
      store_->Put(TableRepository::VersionKey(
                      table, v, ShardPartName(options_.shard, options_.shards)),
                  MakeShardPart(std::move(manifest))),
      doing));
  Publication published;
  published.version = v;
  published.path =
      StrCat(store_->uri(), "/", table, "/", VersionDirName(v), "/", file);
  published.repository = store_->uri();
  return published;
}

}  // namespace roost
