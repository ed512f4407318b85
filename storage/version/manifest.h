// The MANIFEST of a published table version: a JSON document written last
// into the version's directory. A version directory without a MANIFEST that
// parses is not a version.
//
// Example (abridged):
//   {
//     "manifest_version": 1,
//     "table": "users",
//     "version": 3,
//     "format": "cuckoo",
//     "format_version": "1.0",
//     "keys": 100000,
//     "key_bytes": 1100000,
//     "value_bytes": 2188890,
//     "key_width": 11,
//     "value_width": null,
//     "max_key_length": 11,
//     "max_value_length": 40,
//     "files": [{"name": "table.sst", "size": 5106038,
//                "xxh3": "9f1c2b7a5d3e4f60"}],
//     // A sharded version (roost-load build --shards 2) instead:
//     // "shards": 2,
//     // "partition": {"function": "xxh3-64-multiply-shift",
//     //               "seed": 491495846772},
//     // "files": [{"name": "shard-0000-of-0002.sst", "size": 2553107,
//     //            "xxh3": "...", "shard": 0, "keys": 50112,
//     //            "key_bytes": 551232, "value_bytes": 1094881}, ...],
//     // (docs/format/manifest.md)
//     "build_options": {...},
//     "inputs": [{"path": "users.tsv", "size": 3288890}],
//     "loader": "roost-load 0.1.0",
//     "build_time": "2024-05-01T12:00:00Z",
//     "data_time": "2024-05-01T06:00:00Z"   // with --data-timestamp
//   }
#ifndef ROOST_STORAGE_VERSION_MANIFEST_H_
#define ROOST_STORAGE_VERSION_MANIFEST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/row/row_schema.h"
#include "util/json.h"

namespace roost {

struct ManifestFile {
  std::string name;
  uint64_t size = 0;
  uint64_t xxh3 = 0;  // XXH3-64 of the whole file
  // A sharded version's files only (all four, or none): the shard the file
  // holds, and its keys and their bytes.
  std::optional<uint32_t> shard;
  std::optional<uint64_t> keys;
  std::optional<uint64_t> key_bytes;
  std::optional<uint64_t> value_bytes;
};

// How a sharded version's keys were split (storage/partition.h).
struct ManifestPartition {
  std::string function;  // "xxh3-64-multiply-shift"
  uint64_t seed = 0;
};

struct ManifestInput {
  std::string path;
  uint64_t size = 0;  // bytes read from it
};

struct Manifest {
  std::string table;
  uint64_t version = 0;
  std::string format;  // "cuckoo" or "block"
  std::string format_version;
  uint64_t keys = 0;
  uint64_t key_bytes = 0;
  uint64_t value_bytes = 0;
  std::optional<uint32_t> key_width;    // when every key has one length
  std::optional<uint32_t> value_width;  // when every value has one length
  // The longest key and the longest value in the version; absent in
  // MANIFESTs written before roost-load 0.2.
  std::optional<uint64_t> max_key_length;
  std::optional<uint64_t> max_value_length;
  // A sharded version: its number of shards (2 or more) and how keys were
  // split among them; `files` then lists one file per shard, in shard
  // order. 0 and std::nullopt in an unsharded version, whose MANIFEST has
  // neither field.
  uint32_t shards = 0;
  std::optional<ManifestPartition> partition;
  std::vector<ManifestFile> files;
  // The options the loader was given (a JSON object, kept as read: parsing
  // stays linear however many members it has).
  Json build_options = Json::object();
  std::vector<ManifestInput> inputs;
  std::string loader;
  // When roost-load built the version, and the time its input data is of
  // (roost-load build --data-timestamp), in seconds since the Unix epoch;
  // written as RFC 3339 UTC text. Absent in MANIFESTs written before
  // roost-load 0.2, and data_time in those of builds without
  // --data-timestamp.
  std::optional<int64_t> build_time;
  std::optional<int64_t> data_time;
  // A version of rows (roost-load build --rows): the schema of every value
  // (docs/format/rows.md); absent for opaque values.
  std::optional<RowSchema> schema;
  // With --allow-schema-change: what the publish accepted that the
  // evolution rules refuse (one line per field), as the MANIFEST records
  // it ("schema_change"); empty otherwise.
  std::string schema_change;

  std::string ToJson() const;
  // InvalidArgument naming the first missing or malformed field.
  static absl::StatusOr<Manifest> Parse(std::string_view text);
};

// XXH3-64 of a whole file, streamed.
absl::StatusOr<uint64_t> ChecksumFile(const std::string& path);

// The largest MANIFEST read: one lists a few files and the build's inputs.
// Anything larger is refused rather than read.
inline constexpr uint64_t kMaxManifestSize = 16 << 20;

// Reads and parses the MANIFEST at `path` (a regular file of at most
// kMaxManifestSize bytes).
absl::StatusOr<Manifest> ReadManifest(const std::string& path);

}  // namespace roost

#endif  // ROOST_STORAGE_VERSION_MANIFEST_H_
