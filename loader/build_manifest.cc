#include "loader/build_manifest.h"

#include <chrono>
#include <string>
#include <utility>

#include "storage/block/block_format.h"
#include "storage/block/block_table_builder.h"
#include "storage/cuckoo/cuckoo_format.h"
#include "storage/partition.h"
#include "util/str_cat.h"

namespace roost {
namespace {

constexpr std::string_view kLoaderVersion = "roost-load " ROOST_VERSION;

// The MANIFEST's build_options: what the build was told, for the format
// it wrote.
Json OptionsJson(const BuildJob& job) {
  Json o;
  o["format"] = TableFormatName(job.format);
  o["max_value_size"] = job.reader.max_value_size;
  InputOptionsJson(job.reader, &o);
  if (job.shards > 1) o["shards"] = job.shards;
  o["on_duplicate"] = job.on_duplicate == DuplicatePolicy::kError ? "error"
                      : job.on_duplicate == DuplicatePolicy::kKeepFirst
                          ? "first"
                          : "last";
  if (job.format == TableFormat::kCuckoo) {
    o["utilization"] = job.cuckoo.utilization;
    o["hash_functions"] = job.cuckoo.num_hash_functions;
    o["overflow_bits_per_block"] = job.cuckoo.overflow_bits_per_block;
    o["max_displacement_depth"] = job.cuckoo.max_displacement_depth;
    o["seed"] = job.cuckoo.seed;
  } else {
    o["block_size"] = job.block.block_size;
    o["restart_interval"] = job.block.restart_interval;
    o["hash_index"] = job.block.hash_index;
    o["hash_index_utilization"] = job.block.hash_index_utilization;
    o["compression"] = CompressionName(job.block.compression);
    o["index_search"] = IndexSearchName(job.block.index_search);
    o["uniformity_threshold"] = job.block.uniformity_threshold;
    o["filter_bits_per_key"] = job.block.filter_bits_per_key;
  }
  return o;
}

}  // namespace

Manifest MakeManifest(const BuildJob& job, std::vector<ManifestFile> files,
                      const FileFigures& figures,
                      std::vector<ManifestInput> inputs,
                      std::optional<RowSchema> schema) {
  Manifest m;
  m.table = job.table;
  m.format = std::string(TableFormatName(job.format));
  m.format_version = job.format == TableFormat::kCuckoo
                         ? StrCat(kCuckooMajorVersion, ".", kCuckooMinorVersion)
                         : BlockFormatVersion(job.block);
  m.keys = figures.keys;
  m.key_bytes = figures.key_bytes;
  m.value_bytes = figures.value_bytes;
  if (figures.keys > 0 && figures.key_fixed) m.key_width = figures.key;
  if (figures.keys > 0 && figures.value_fixed) m.value_width = figures.value;
  m.max_key_length = figures.max_key;
  m.max_value_length = figures.max_value;
  if (job.shards > 1) {
    m.shards = job.shards;
    m.partition =
        ManifestPartition{std::string(kPartitionFunction), kPartitionSeed};
  }
  m.files = std::move(files);
  m.build_options = OptionsJson(job);
  m.inputs = std::move(inputs);
  m.loader = std::string(kLoaderVersion);
  m.build_time = std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  m.data_time = job.data_timestamp;
  m.schema = std::move(schema);
  return m;
}

}  // namespace roost
