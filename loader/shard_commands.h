// The two commands around `roost-load build --shard I` that let a cluster (a
// Spark job, a shell loop over hosts) build the shards of one version in
// parallel and publish them all or nothing:
//
//   roost-load claim   --repository URI --table T [--output-format json]
//   roost-load build   ... --repository URI --table T --shards N
//                          --shard I --version V  (once per shard, anywhere)
//   roost-load publish --repository URI --table T --version V [--shards N]
//                      [--keep-versions K] [--data-timestamp TIME]
//
// `claim` takes the next version number (TableRepository::ClaimVersion, the
// conditional CLAIM every publisher takes) and prints it ("v000007"), for
// the driver to hand to its tasks. Each shard build uploads its table file
// and its part (shard_destination.h, shard_part.h). `publish` reads every
// part, checks that all N shards are there (naming each missing one) and
// agree, that each shard's object has its part's size and, read back
// (streamed, several shards at once), its XXH3-64, then writes the MANIFEST
// (MergeShardParts: what a one-host `build --shards N` writes), moves the
// pointer forward by compare-and-swap, deletes the parts and, with
// --keep-versions, runs retention. Any refusal leaves the version
// incomplete and the pointer where it was: nothing is served, and
// retention deletes the claim once it has been silent for
// --abandoned-after, as any abandoned claim.
//
// Thread-safety: none needed; commands run in main()'s thread (publish's
// read-backs run on threads of their own, each with its own requests).
//
// Example:
//   Command publish = AddPublishCommand(app);  // in main()
#ifndef ROOST_LOADER_SHARD_COMMANDS_H_
#define ROOST_LOADER_SHARD_COMMANDS_H_

#include <string>

#include "absl/status/status.h"
#include "loader/command.h"

namespace roost {

struct ShardCommandFlags {
  std::string repository;
  std::string table;
  std::string output_format = "text";
  // publish: as the flags give them (checked by ValidatePublish).
  std::string version;
  std::string shards;  // "" to take N from the parts
  std::string keep_versions;
  std::string abandoned_after = "24h";
  std::string data_timestamp;
  bool data_timestamp_given = false;
  // publish: over a newest complete version whose schema of rows this
  // one's may not follow (schema_change.h). The default value is false.
  bool allow_schema_change = false;
  bool quiet = false;
};

// The usage errors of each: a missing flag, a bad table name, version,
// shard count, count, duration or time.
absl::Status ValidateClaim(const ShardCommandFlags& f);
absl::Status ValidatePublish(const ShardCommandFlags& f);

// Each prints its result (claim: the version name on stdout; publish: a
// summary on stderr) or, with --output-format json, a JSON object on
// stdout, and returns OK, or the error for roost-load to report.
absl::Status RunClaim(const ShardCommandFlags& f);
absl::Status RunPublish(const ShardCommandFlags& f);

Command AddClaimCommand(CLI::App& app);
Command AddPublishCommand(CLI::App& app);

}  // namespace roost

#endif  // ROOST_LOADER_SHARD_COMMANDS_H_
