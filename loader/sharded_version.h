// What `roost-load inspect`, `verify` and `get` do with a sharded version
// (roost-load build --shards N): one table file per shard, listed in the
// MANIFEST (docs/format/manifest.md), each key in the shard PartitionOf
// names (docs/format/partitioning.md).
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(std::optional<Manifest> m,
//                          ShardedManifest(resolved));
//   if (m) {
//     ShardRouter router(*resolved.version_dir, *m);
//     ROOST_ASSIGN_OR_RETURN(const Table* t, router.TableFor(key));
//   }
#ifndef ROOST_LOADER_SHARDED_VERSION_H_
#define ROOST_LOADER_SHARDED_VERSION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/data_dir.h"
#include "storage/manifest.h"
#include "storage/table.h"

namespace roost {

// The MANIFEST of `resolved`'s version when that version is sharded;
// std::nullopt for a bare file or an unsharded version (and for a MANIFEST
// that cannot be read: the unsharded path reports that as it always has).
std::optional<Manifest> ShardedManifest(const ResolvedTable& resolved);

// inspect: the version's figures and one line per shard (its file, keys
// and size, read from the file), in Describe()'s "name  value" layout.
absl::StatusOr<std::string> DescribeShards(const std::string& version_dir,
                                           const Manifest& manifest);

// verify: OpenVersion of every shard, whole-file checksums included. The
// report has one line per shard, then one for the version; the first
// failure ends it (its status names the shard).
absl::StatusOr<std::string> VerifyShards(const std::string& version_dir,
                                         const Manifest& manifest);

// get: each key looked up in its shard's file, opened (and checked as
// OpenVersion checks it) the first time a key needs it. Not thread-safe.
class ShardRouter {
 public:
  ShardRouter(std::string version_dir, uint32_t shards)
      : dir_(std::move(version_dir)), tables_(shards) {}

  // The table of `key`'s shard; errors as OpenVersion's.
  absl::StatusOr<const Table*> TableFor(std::string_view key);

 private:
  std::string dir_;
  std::vector<std::unique_ptr<Table>> tables_;
};

}  // namespace roost

#endif  // ROOST_LOADER_SHARDED_VERSION_H_
