// Writing a build's table files: reads every input once and writes one
// table file, or, for a sharded build, one file per shard, each key going to
// the shard PartitionOf names (storage/partition.h). Cuckoo tables get one
// builder per shard; block tables sort once, by (shard, key), in the bounded
// memory of one external sort, and write the shards' files one after the
// other as the sorted pairs stream out. Duplicate keys are found within a
// shard (a key has one shard) and reported at their input lines, as in an
// unsharded build.
//
// A build of one shard (BuildJob::shard, `build --shard I`) writes that
// shard's file alone; a record of another shard is a bad record, and its
// records are sorted by key before they are built, in either format, so
// that the file is a function of the set of records (a cuckoo builder
// places keys in the order they come).
//
// Example:
//   std::vector<FileFigures> figures;
//   ROOST_RETURN_IF_ERROR(WriteTableFiles(job, inputs, {dir + "/a.sst",
//       dir + "/b.sst"}, &read, &figures, &summary, &progress));
#ifndef ROOST_LOADER_TABLE_FILES_H_
#define ROOST_LOADER_TABLE_FILES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "loader/build_job.h"
#include "storage/version/manifest.h"

namespace roost {

// What a MANIFEST says of the keys and values of one table file, or of a
// whole version (Merge of its files').
struct FileFigures {
  uint64_t keys = 0;
  bool key_fixed = true, value_fixed = true;  // one length each (keys > 0)
  uint64_t key = 0, value = 0;                // that length
  uint64_t key_bytes = 0, value_bytes = 0;
  uint64_t max_key = 0, max_value = 0;

  void Add(std::string_view k, std::string_view v);
  void Merge(const FileFigures& other);
};

// Reads every one of `inputs` (expanded from job.inputs) and writes the
// table files `paths`, one per shard: paths.size() is the shard count (1 for
// an unsharded build). Fills `read` (bytes read per input), `figures` (one
// per file) and the summary's counts. Errors as RunBuild's.
absl::Status WriteTableFiles(const BuildJob& job,
                             const std::vector<std::string>& inputs,
                             const std::vector<std::string>& paths,
                             std::vector<ManifestInput>* read,
                             std::vector<FileFigures>* figures,
                             BuildSummary* summary, Progress* progress);

}  // namespace roost

#endif  // ROOST_LOADER_TABLE_FILES_H_
