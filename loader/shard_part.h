// A shard's part: what `roost-load build --shard I --shards N --version V`
// uploads beside shard I's table file, so that `roost-load publish` can
// write the version's MANIFEST without reading any table file whole
// (docs/format/manifest.md, "Shard parts"). A part is a MANIFEST of that
// shard alone: the same JSON (storage/version/manifest.h), with `shards` N,
// the partition, one entry in `files` (shard I's, with its figures), the
// version-level figures (keys, bytes, widths, longest key and value) of
// that one file, the build options and the inputs of that build, and no
// build_time or data_time: a retried or speculative attempt that built the
// same records writes the very same bytes.
//
// It is named shard-IIII-of-NNNN.json, beside shard-IIII-of-NNNN.sst:
// never MANIFEST, so nothing takes it for a version; servers, verify and
// retention only ever read the files a MANIFEST names (retention deletes it
// with its version).
//
// MergeShardParts is publish's check and merge: every part of one version,
// agreeing, into the MANIFEST a one-host `build --shards N` writes, byte for
// byte but for build_time and inputs (each shard's, in shard order).
//
// Example:
//   std::string json = MakeShardPart(manifest);      // in the shard build
//   ROOST_ASSIGN_OR_RETURN(Manifest m, MergeShardParts(parts));  // publish
#ifndef ROOST_LOADER_SHARD_PART_H_
#define ROOST_LOADER_SHARD_PART_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/version/manifest.h"

namespace roost {

// "shard-0002-of-0004.json".
std::string ShardPartName(uint32_t shard, uint32_t shards);

// (I, N) of "shard-IIII-of-NNNN.json" or "shard-IIII-of-NNNN.sst" (the
// suffix given); nullopt for any other name.
struct ShardName {
  uint32_t shard = 0;
  uint32_t shards = 0;
};
std::optional<ShardName> ParseShardName(std::string_view name,
                                        std::string_view suffix);

// The part's JSON: `manifest` (one shard's, as the shard build made it)
// without build_time and data_time.
std::string MakeShardPart(Manifest manifest);

// A part read back from the repository (`name` is its object's name, for
// errors): parsed, and checked to be one shard's part of `table` version
// `version`, for the shard its name says. InvalidArgument naming the part
// and what is wrong.
absl::StatusOr<Manifest> ParseShardPart(std::string_view text,
                                        std::string_view name,
                                        std::string_view table,
                                        uint64_t version);

// The version's MANIFEST from its parts, parts[I] being shard I's (each
// from ParseShardPart): FailedPrecondition naming the first shard that
// disagrees with shard 0 (format, format version, partition, build
// options, loader). The figures are added up as a one-host build adds up
// its shards'; build_time is left unset for the caller.
absl::StatusOr<Manifest> MergeShardParts(const std::vector<Manifest>& parts);

}  // namespace roost

#endif  // ROOST_LOADER_SHARD_PART_H_
