// BuildJob: roost-load build, end to end. Stages the place the job names
// (a Destination, destination.h: a file, a data directory or a table
// repository), reads every input, builds a table of either format (sorting
// first for the block format, in bounded memory), or with `shards` > 1 one
// table file per shard (table_files.h), into the staging directory,
// verifies every file it wrote, describes them in their MANIFEST
// (build_manifest.h), and has the Destination publish them. Nothing is
// published unless every step succeeded.
#ifndef ROOST_LOADER_BUILD_JOB_H_
#define ROOST_LOADER_BUILD_JOB_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "loader/progress.h"
#include "loader/record_reader.h"
#include "storage/block/block_table_builder.h"
#include "storage/cuckoo/cuckoo_table_builder.h"
#include "storage/row/row_schema.h"
#include "storage/table.h"
#include "util/json.h"

namespace roost {

// roost-load's --filter-bits-per-key by default: about 1% false positives
// for 1.25 bytes a key.
inline constexpr uint32_t kLoaderFilterBitsPerKey = 10;

struct BuildJob {
  std::vector<std::string> inputs;  // globs allowed; "-" is stdin
  RecordReaderOptions reader;
  TableFormat format = TableFormat::kCuckoo;
  CuckooBuildOptions cuckoo;
  // Block format options. roost-load writes a filter by default
  // (kLoaderFilterBitsPerKey bits a key: format 2.0), where the library's
  // default is none; the builder is told each file's record count.
  BlockBuildOptions block = [] {
    BlockBuildOptions o;
    o.filter_bits_per_key = kLoaderFilterBitsPerKey;
    return o;
  }();
  DuplicatePolicy on_duplicate = DuplicatePolicy::kError;
  // Threads that place and write a cuckoo table, and that sort a block
  // build's records in memory (--threads). The default value is 1.
  int threads = 1;
  // Malformed records skipped (and counted) before the build fails.
  uint64_t max_bad_records = 0;
  // Block format: memory for sorting before spilling runs to temp_dir.
  uint64_t memory_limit = uint64_t{1} << 30;
  std::string temp_dir;
  // Exactly one of: a file, a data directory and table name, or a table
  // repository (repository/object_store.h's URIs) and table name.
  std::string output_file;
  std::string data_dir;
  std::string repository;
  std::string table;
  // With a repository: after publishing, delete complete versions older
  // than this many newest ones, and abandoned claims (repository/
  // retention.h). The default value is std::nullopt (delete nothing).
  std::optional<uint64_t> keep_versions;
  // With keep_versions: an incomplete version silent this long is
  // abandoned. The default value is 24 hours.
  std::chrono::seconds abandoned_after{24 * 3600};
  // Publish a table of no keys (input with no records). The default value
  // is false: empty input is an error.
  bool allow_empty = false;
  // With a data directory: refuse a version with fewer keys than
  // (1 - max_shrink) times the newest complete version's. The default
  // value is std::nullopt (no check).
  std::optional<double> max_shrink;
  // Partition the keys into this many table files in one version
  // (storage/partition.h), in [1, kMaxShards]; more than 1 needs a data
  // directory. The default value is 1: one table.sst, as before sharding.
  uint32_t shards = 1;
  // The time the input data is of (when its source was exported, say), in
  // seconds since the Unix epoch, for the MANIFEST's data_time; needs a
  // data directory or a repository. The default value is std::nullopt
  // (no data_time).
  std::optional<int64_t> data_timestamp;
  // Shard `shard` of `shards` alone, of the claimed `version` of a table in
  // a repository (roost-load build --shard I --version V; shard_commands.h's
  // `roost-load publish` completes the version): the input holds that
  // shard's records only (a record of another shard is a bad record), the
  // records are sorted by key before they are built so that the file is a
  // function of the record set, and the file and its part
  // (shard_part.h) are uploaded beside each other, with no MANIFEST and no
  // pointer. Both or neither. The default values are std::nullopt (a whole
  // version).
  std::optional<uint32_t> shard;
  std::optional<uint64_t> version;
  // Publish over a version whose schema of rows this one's may not follow
  // (storage/row/row_schema.h's CheckSchemaEvolution; rows over opaque
  // values or the reverse too), recording what changed in the MANIFEST's
  // schema_change. The default value is false: such a version is refused.
  bool allow_schema_change = false;
};

// The input options a build records (its MANIFEST's build_options and
// its JSON summary's): input_format, and what CSV and JSON Lines were read
// with (delimiter, header, key_column, value_column; key_field,
// value_field). "" for a column or field is the default (the first column,
// the whole line or the JSON object).
template <typename JsonT>
void InputOptionsJson(const RecordReaderOptions& reader, JsonT* o) {
  (*o)["input_format"] = std::string(InputFormatName(reader.format));
  if (reader.rows) (*o)["rows"] = true;
  if (reader.format == InputFormat::kCsv) {
    (*o)["delimiter"] = std::string(1, reader.delimiter);
    (*o)["header"] = reader.header;
    (*o)["key_column"] = reader.key_column;
    (*o)["value_column"] = reader.value_column;
  } else if (reader.format == InputFormat::kJsonLines) {
    (*o)["key_field"] = reader.key_field;
    (*o)["value_field"] = reader.value_field;
  }
}

// Checks the options RunBuild would take, before any input is opened.
// InvalidArgument naming what is wrong; the caller reports a usage error.
absl::Status ValidateBuildJob(const BuildJob& job);

struct BuildSummary {
  std::string path;  // the file, the version directory or its URI
  // Published into a repository: its URI and the table.
  std::string repository;
  std::string table;
  // With --keep-versions: versions retention deleted, and why it could
  // not ("" when it ran).
  std::optional<std::vector<uint64_t>> pruned, abandoned;
  std::string retention_error;
  std::optional<uint64_t> version;
  // Built with BuildJob::shard: that shard (the build wrote its file only).
  std::optional<uint32_t> shard;
  TableFormat format = TableFormat::kCuckoo;
  uint64_t records = 0;      // good records read
  uint64_t keys = 0;         // in the table
  uint64_t bad_records = 0;  // skipped
  uint64_t duplicates = 0;   // dropped
  uint64_t input_bytes = 0;
  uint64_t file_size = 0;  // of every file
  uint32_t shards = 1;
  uint64_t sort_runs = 0;  // spilled to disk
  int cuckoo_retries = 0;
  double utilization = 0;  // cuckoo, as built
  double seconds = 0;
  RecordReaderOptions input;  // what the input was read with
  // With --rows: the schema of every value.
  std::optional<RowSchema> schema;

  OrderedJson ToJson() const;
};

// Errors: InvalidArgument for bad input or options (with FILE:LINE where
// there is one), DataLoss for input cut short (record_reader.h) and when
// the written table fails verification, FailedPrecondition for input of
// another format, other codes for I/O.
absl::StatusOr<BuildSummary> RunBuild(const BuildJob& job, Progress* progress);

}  // namespace roost

#endif  // ROOST_LOADER_BUILD_JOB_H_
