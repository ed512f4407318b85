// roost's block table in the suite: index search auto / binary /
// interpolation with the data-block hash index, auto without it, and auto
// with snappy; Get and MultiGet.

#include <chrono>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/peers/peer.h"
#include "storage/block_table.h"
#include "storage/block_table_builder.h"

namespace roost::bench {
namespace {

namespace fs = std::filesystem;

void RoostBlock(const Settings& s, const SuiteData& data, Recorder& rec) {
  struct Build {
    const char* name;
    bool hash_index;
    Compression compression;
  };
  struct Read {
    const char* config;
    size_t build;  // index into builds
    IndexSearch search;
  };
  const Build builds[] = {{"hash", true, Compression::kNone},
                          {"nohash", false, Compression::kNone},
                          {"snappy", true, Compression::kSnappy}};
  const Read reads[] = {
      {"auto, hash index", 0, IndexSearch::kAuto},
      {"binary, hash index", 0, IndexSearch::kBinary},
      {"interpolation, hash index", 0, IndexSearch::kInterpolation},
      {"auto, no hash index", 1, IndexSearch::kAuto},
      {"auto, hash index, snappy", 2, IndexSearch::kAuto},
  };
  for (size_t b = 0; b < std::size(builds); ++b) {
    const std::string path =
        (s.dir / fmt::format("roost-block-{}.sst", builds[b].name)).string();
    BlockBuildOptions options;
    options.hash_index = builds[b].hash_index;
    options.compression = builds[b].compression;
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
      BlockReadOptions ro;
      ro.index_search = r.search;
      // Room for every block decompressed: the cache holds everything, as
      // RocksDB's does.
      ro.block_cache_bytes = report->raw_bytes * 2 + (64 << 20);
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
