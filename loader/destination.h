// Destination: where `roost-load build` puts what it built, one
// implementation per place (the shape of Pebble's objstorage.Provider):
//
//   FileDestination        --output FILE: the one table file, renamed over
//                          FILE (file_destination.h)
//   DataDirDestination     --data-dir DIR --table T: DIR/T/v<N>/, renamed
//                          into place (data_dir_destination.h, publish.h)
//   RepositoryDestination  --repository URI --table T: URI/T/v<N>/, then
//                          T/POINTER (repository_destination.h)
//   ShardDestination       ... --shard I --version V: one shard of a
//                          claimed version (shard_destination.h)
//
// A build goes through one in three steps, whatever the place:
//
//   stage     each implementation's Stage() checks that the place can take
//             a version (a repository is reached) and makes a private,
//             empty directory, staging_dir(), for the build to write its
//             table files into, all before any input is read;
//   publish   Publish(manifest) turns the staged files into what the place
//             serves, whole or not at all: the MANIFEST last where the
//             place keeps one, then the name that makes the version seen
//             (a rename, a pointer moved);
//   clean up  destroying the Destination removes what was staged and not
//             published, the staging directory always; a build killed
//             mid-way leaves its directory to the next one (owned_dir.h).
//
// The build (RunBuild, build_job.h) knows no place: it writes its files
// into staging_dir() (table.sst, or one shard-IIII-of-NNNN.sst per shard),
// verifies them, describes them in their MANIFEST (MakeManifest,
// build_manifest.h) and hands that to Publish. OpenDestination, in
// build_job.cc, is the one function that reads which flag names the place.
//
// ShardDestination (issue 32) was added without touching the other three:
// its Publish uploads shard I's file into claimed version V with its part,
// and writes no MANIFEST and moves no pointer. The build writes shard I's
// file alone into its staging directory (which records go there is the
// build's business, table_files.h). Publishing the version is no
// Destination's: `roost-load publish` (shard_commands.h)
// checks the N parts against the uploaded files, merges them into the
// MANIFEST (shard_part.h), writes it last and moves the pointer.
//
// Thread-safety: none; a build uses its Destination from one thread.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(std::unique_ptr<Destination> destination,
//                          DataDirDestination::Stage("/srv/roost", "users"));
//   ... write destination->staging_dir() + "/table.sst", verify it ...
//   ROOST_ASSIGN_OR_RETURN(Publication p, destination->Publish(
//       MakeManifest(job, files, figures, inputs)));
//   // p.path == "/srv/roost/users/v000004"
#ifndef ROOST_LOADER_DESTINATION_H_
#define ROOST_LOADER_DESTINATION_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "repository/retention.h"
#include "storage/version/manifest.h"

namespace roost {

// What Publish made, for the build's summary.
struct Publication {
  // The file, the version directory, or the version's URI
  // (".../T/v000007").
  std::string path;
  // The version's number; std::nullopt for a file.
  std::optional<uint64_t> version;
  // A repository's URI; "" for other places.
  std::string repository;
  // With retention asked for (--keep-versions): what it deleted (empty
  // when it failed), and why it failed ("" when it ran). The version is
  // published either way.
  std::optional<PruneResult> pruned;
  std::string retention_error;
};

class Destination {
 public:
  // Removes what was staged and not published (clean up).
  virtual ~Destination() = default;

  // The private directory the build writes its table files into; it
  // exists, empty, once Stage() returns.
  virtual const std::string& staging_dir() const = 0;

  // Publishes the files of staging_dir() that `manifest` names, as the
  // version `manifest` describes (complete but for its number, which the
  // place decides). Once only. An error before the last step (the rename,
  // the MANIFEST) leaves nothing published: no file replaced, no new
  // version directory, a repository's claimed version incomplete (debris
  // for retention) and its pointer where it was. Errors: InvalidArgument
  // when the place refuses the version (--max-shrink); the place's own
  // otherwise, with a message naming it.
  virtual absl::StatusOr<Publication> Publish(Manifest manifest) = 0;
};

}  // namespace roost

#endif  // ROOST_LOADER_DESTINATION_H_
