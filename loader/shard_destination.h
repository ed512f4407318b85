// ShardDestination: `roost-load build --repository URI --table T --shards N
// --shard I --version V`, a Destination (destination.h) that is shard I of
// N of version V of T, claimed beforehand (`roost-load claim`) and
// published afterwards, all shards at once, by `roost-load publish`
// (shard_commands.h). Many of them run at once, one per shard, on as many
// hosts.
//
// Stage opens the repository and checks that V is claimed (its CLAIM is
// there) and not complete (no MANIFEST), before any input is read, and
// makes the staging directory under --temp-dir as RepositoryDestination
// does. The build writes shard I's file alone into it
// (shard-IIII-of-NNNN.sst; which records go there is the build's business,
// table_files.h). Publish checks again that V is not complete, uploads the
// file (TableRepository::UploadFile: read back against its XXH3-64), then
// its part beside it (shard_part.h: shard-IIII-of-NNNN.json, the MANIFEST
// of that shard alone), and writes no MANIFEST and moves no pointer. The
// part is written after the file, so a part in the repository means its
// file was uploaded and read back whole.
//
// Retries: a second attempt of the same shard (a retried or speculative
// task) writes the same object names; since the build of a shard is a
// function of its records (sorted before they are built), it writes the
// same bytes, and each object is replaced whole (a local store renames, S3
// replaces on PUT), so no reader ever sees a mix.
//
// Thread-safety: none (destination.h).
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(auto destination, ShardDestination::Stage(
//       {.uri = "s3://tables/prod", .table = "users", .version = 7,
//        .shard = 1, .shards = 4}));
//   ... write destination->staging_dir() + "/shard-0001-of-0004.sst" ...
//   ROOST_ASSIGN_OR_RETURN(Publication p, destination->Publish(manifest));
//   // p.path == "s3://tables/prod/users/v000007/shard-0001-of-0004.sst"
#ifndef ROOST_LOADER_SHARD_DESTINATION_H_
#define ROOST_LOADER_SHARD_DESTINATION_H_

#include <memory>
#include <string>

#include "loader/destination.h"
#include "repository/object_store.h"
#include "repository/repository.h"

namespace roost {

struct ShardDestinationOptions {
  std::string uri;  // repository/object_store.h's URIs
  std::string table;
  uint64_t version = 0;  // claimed, not complete
  uint32_t shard = 0;    // in [0, shards)
  uint32_t shards = 2;   // in [2, kMaxShards]
  // Where the staging directory is made. The default value is "": the
  // system's temporary directory.
  std::string temp_dir;
};

class ShardDestination final : public Destination {
 public:
  // Errors: InvalidArgument for a bad URI or environment;
  // FailedPrecondition when the version is not claimed or is complete
  // already; what the store says otherwise, naming the repository.
  static absl::StatusOr<std::unique_ptr<ShardDestination>> Stage(
      ShardDestinationOptions options);
  ~ShardDestination() override;

  const std::string& staging_dir() const override { return staging_; }
  // `manifest` is the shard's (one file): uploaded as its part.
  absl::StatusOr<Publication> Publish(Manifest manifest) override;

 private:
  ShardDestination(ShardDestinationOptions options,
                   std::unique_ptr<ObjectStore> store)
      : options_(std::move(options)),
        store_(std::move(store)),
        repository_(store_.get()) {}

  // FailedPrecondition unless the version is claimed and not complete.
  absl::Status CheckOpen();

  ShardDestinationOptions options_;
  std::unique_ptr<ObjectStore> store_;
  TableRepository repository_;  // over store_
  std::string staging_;
};

}  // namespace roost

#endif  // ROOST_LOADER_SHARD_DESTINATION_H_
