// roost's block table in the suite: format 1.0 (no filter) with index
// search auto / binary / interpolation and the data-block hash index, auto
// without it, and auto with snappy; format 2.0 with a filter of
// kFilterBitsPerKey bits a key (roost-load's default), auto / binary /
// interpolation; Get and MultiGet.

#include <chrono>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/peers/peer.h"
#include "storage/block/block_table.h"
#include "storage/block/block_table_builder.h"

namespace roost::bench {
namespace {

namespace fs = std::filesystem;

void RoostBlock(const Settings& s, const SuiteData& data, Recorder& rec) {
  struct Build {
    const char* name;
    bool hash_index;
    Compression compression;
    uint32_t filter_bits_per_key;
  };
  struct Read {
    const char* config;
    size_t build;  // index into builds
    IndexSearch search;
  };
  const Build builds[] = {
      {"hash", true, Compression::kNone, 0},
      {"nohash", false, Compression::kNone, 0},
      {"snappy", true, Compression::kSnappy, 0},
      {"filter", true, Compression::kNone, kFilterBitsPerKey}};
  const Read reads[] = {
      {"auto, hash index", 0, IndexSearch::kAuto},
      {"binary, hash index", 0, IndexSearch::kBinary},
      {"interpolation, hash index", 0, IndexSearch::kInterpolation},
      {"auto, no hash index", 1, IndexSearch::kAuto},
      {"auto, hash index, snappy", 2, IndexSearch::kAuto},
      {"auto, hash index, filter", 3, IndexSearch::kAuto},
      {"binary, hash index, filter", 3, IndexSearch::kBinary},
      {"interpolation, hash index, filter", 3, IndexSearch::kInterpolation},
  };
  for (size_t b = 0; b < std::size(builds); ++b) {
    const std::string path =
        (s.dir / fmt::format("roost-block-{}.sst", builds[b].name)).string();
    BlockBuildOptions options;
    options.hash_index = builds[b].hash_index;
    options.compression = builds[b].compression;
    options.filter_bits_per_key = builds[b].filter_bits_per_key;
    options.expected_keys = data.num_keys();  // as roost-load knows it
    const auto start = std::chrono::steady_clock::now();
    auto builder = BlockTableBuilder::Create(path, options);
    if (!builder.ok()) Die("roost block: " + builder.status().ToString());
    ForEachPair(data, true, [&](std::string_view k, std::string_view v) {
      const absl::Status st = (*builder)->Add(k, v);
      if (!st.ok()) Die("roost block: " + st.ToString());
    });
    auto report = (*builder)->Finish();
    if (!report.ok()) Die("roost block: " + report.status().ToString());
    const double build_s = SecondsSince(start);
    for (const Read& r : reads) {
      if (r.build != b) continue;
      TableReadOptions ro;
      ro.index_search = r.search;
      // Room for every block decompressed: the cache holds everything, as
      // RocksDB's does.
      ro.block_cache =
          std::make_shared<BlockCache>(report->raw_bytes * 2 + (64 << 20));
      auto table = BlockTable::Open(path, ro);  // verifies every block
      if (!table.ok()) Die("roost block: " + table.status().ToString());
      const BlockTable& t = **table;
      BlockTable::Value value;
      rec.Gets("roost block", r.config, report->file_size, build_s,
               [&](std::string_view key, auto&& sink) {
                 const absl::StatusOr<bool> hit = t.Get(key, &value);
                 if (!hit.ok()) Die("roost block: " + hit.status().ToString());
                 if (!*hit) return false;
                 sink(value.view());
                 return true;
               });
      std::vector<LookupResult> results(s.batch);
      ValuePins pins;
      rec.MultiGets("roost block", r.config, report->file_size, build_s,
                    [&](std::span<const std::string_view> keys, auto&& sink) {
                      pins.Clear();
                      const absl::Status st = t.MultiGet(
                          keys, std::span(results).first(keys.size()), &pins);
                      if (!st.ok()) Die("roost block: " + st.ToString());
                      for (size_t j = 0; j < keys.size(); ++j) {
                        if (results[j].found) sink(j, results[j].value);
                      }
                    });
    }
    fs::remove(path);
  }
}

}  // namespace

std::unique_ptr<Peer> NewRoostBlockPeer() {
  return std::make_unique<FunctionPeer>("roost-block", RoostBlock);
}

}  // namespace roost::bench
