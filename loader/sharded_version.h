// What `roost-load inspect`, `verify` and `get` do with a sharded version
// (roost-load build --shards N): one table file per shard, listed in the
// MANIFEST (docs/format/manifest.md), each key in the shard PartitionOf
// names (docs/format/partitioning.md).
//
// Such a version is read whole where roost-load published it, and in part
// where a server keeps it: roost-server --shard I pulls the MANIFEST and
// shard I's file only, and operators inspect those copies (a version rolled
// back from, say). SelectShards decides which shards' files are read: the
// one --shard names, or, without it, the files that are here, when they
// are all of them or exactly one.
//
// Example:
//   if (std::optional<Manifest> m = ShardedManifest(resolved)) {
//     ROOST_ASSIGN_OR_RETURN(ShardSelection selection,
//                            SelectShards(dir, *m, shard_flag));
//     ShardRouter router(dir, *m, selection);
//     if (router.Reads(router.ShardOf(key))) {
//       ROOST_ASSIGN_OR_RETURN(const Table* t, router.TableFor(key));
//     }
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
#include "storage/row/row_schema.h"
#include "storage/table.h"
#include "storage/version/data_dir.h"
#include "storage/version/manifest.h"

namespace roost {

// The MANIFEST of `resolved`'s version when that version is sharded;
// std::nullopt for a bare file or an unsharded version (and for a MANIFEST
// that cannot be read: the unsharded path reports that as it always has).
std::optional<Manifest> ShardedManifest(const ResolvedTable& resolved);

// The shards of a sharded version that are read, and why those.
struct ShardSelection {
  enum class Why {
    kWhole,  // every shard: all their files are here
    kCopy,   // one shard: its file alone is here (a server's copy)
    kFlag,   // one shard: --shard named it
  };
  Why why = Why::kWhole;
  uint32_t shard = 0;  // kCopy, kFlag: the one read
  bool Reads(uint32_t s) const { return why == Why::kWhole || s == shard; }
};

// Which shards of the sharded version `version_dir` (its MANIFEST `m`) to
// read: with `shard` (--shard I), that one, whether its file is here or
// not (opening it says); without, those whose files are here: all of them,
// or exactly one. Errors: FailedPrecondition for a shard the version does
// not have; Unavailable ("incomplete version: ...") when none of the files
// is here, or more than one but not all, naming the first one missing.
absl::StatusOr<ShardSelection> SelectShards(const std::string& version_dir,
                                            const Manifest& m,
                                            std::optional<uint32_t> shard);

// inspect: the version's figures and one line per shard, in Describe()'s
// "name  value" layout: its file, keys and size, read from the file, for a
// shard read; the MANIFEST's figures, and why it is not read, for another.
// A file read that is shorter than its MANIFEST says is Unavailable
// ("incomplete version"), as OpenVersion has it.
absl::StatusOr<std::string> DescribeShards(const std::string& version_dir,
                                           const Manifest& manifest,
                                           const ShardSelection& selection);

// verify: OpenVersion of every shard read, whole-file checksums included.
// The report has one line per shard read, then one for the version (saying
// which shards that was, when not all); the first failure ends it (its
// status names the shard).
absl::StatusOr<std::string> VerifyShards(const std::string& version_dir,
                                         const Manifest& manifest,
                                         const ShardSelection& selection);

// get: each key looked up in its shard's file, opened with `read` (and
// checked as OpenVersion checks it) the first time a key needs it, so that
// the shards share read's block cache. Not thread-safe.
// verify of a version of rows: every value of `table` (the file `file`) a
// row of `schema` (CheckRow), or DataLoss naming the file, the first key
// whose value is not, and what is wrong with it.
absl::Status CheckRows(const Table& table, const std::string& file,
                       const RowSchema& schema);

class ShardRouter {
 public:
  ShardRouter(std::string version_dir, const Manifest& manifest,
              ShardSelection selection, TableReadOptions read = {})
      : dir_(std::move(version_dir)),
        selection_(selection),
        read_(std::move(read)),
        tables_(manifest.shards) {}

  uint32_t ShardOf(std::string_view key) const;
  // Whether keys of shard `s` can be looked up here.
  bool Reads(uint32_t s) const { return selection_.Reads(s); }
  // Why keys of shard `s` cannot: "in shard 2 of 3, whose file is not in
  // DIR (it holds shard 1)", or "in shard 2 of 3, not read (--shard 1)".
  std::string WhyNotRead(uint32_t s) const;

  // The table of `key`'s shard; errors as OpenVersion's. REQUIRES:
  // Reads(ShardOf(key)).
  absl::StatusOr<const Table*> TableFor(std::string_view key);

 private:
  std::string dir_;
  ShardSelection selection_;
  TableReadOptions read_;
  std::vector<std::unique_ptr<Table>> tables_;
};

}  // namespace roost

#endif  // ROOST_LOADER_SHARDED_VERSION_H_
