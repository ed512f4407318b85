// MakeManifest: the MANIFEST of the version a build wrote
// (docs/format/manifest.md), made from what the build knows once its files
// are written and verified: the files and their checksums, what their keys
// and values are like together, the inputs read, and the build's options.
// What it says is the build's alone; where the version goes (a data
// directory, a repository, a file that has no MANIFEST) is the
// Destination's (destination.h), which sets the version number when it
// publishes.
//
// Example:
//   Manifest m = MakeManifest(job, std::move(files), figures, inputs);
//   ROOST_ASSIGN_OR_RETURN(Publication p, destination->Publish(std::move(m)));
#ifndef ROOST_LOADER_BUILD_MANIFEST_H_
#define ROOST_LOADER_BUILD_MANIFEST_H_

#include <optional>
#include <vector>

#include "loader/build_job.h"
#include "loader/table_files.h"
#include "storage/version/manifest.h"

namespace roost {

// The MANIFEST of the version `job` built: `files` (verified, one per
// shard in shard order, or the one table.sst), `figures` (of all of them
// together), `inputs` (the bytes read of each). Complete but for its
// version number (0); build_time is now. `schema`: with --rows, the
// schema of every value (BuildSummary::schema).
Manifest MakeManifest(const BuildJob& job, std::vector<ManifestFile> files,
                      const FileFigures& figures,
                      std::vector<ManifestInput> inputs,
                      std::optional<RowSchema> schema = std::nullopt);

}  // namespace roost

#endif  // ROOST_LOADER_BUILD_MANIFEST_H_
