// roost's cuckoo table in the suite: mapped (mmap) and copied into huge
// pages; Get and MultiGet.

#include <chrono>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/peers/peer.h"
#include "storage/cuckoo/cuckoo_table.h"
#include "storage/cuckoo/cuckoo_table_builder.h"

namespace roost::bench {
namespace {

namespace fs = std::filesystem;

uint64_t RoostCuckoo(const Settings& s, const SuiteData& data, Recorder& rec) {
  const std::string path = (s.dir / "roost-cuckoo.sst").string();
  const auto start = std::chrono::steady_clock::now();
  const uint64_t bytes = BuildRoostCuckoo(data, path);
  const double build_s = SecondsSince(start);
  for (const LoadMode mode : {LoadMode::kMmap, LoadMode::kAnonymousHugePages}) {
    TableReadOptions options;
    options.load_mode = mode;
    auto table = CuckooTable::Open(path, options);  // verifies every byte
    if (!table.ok()) Die("roost cuckoo: " + table.status().ToString());
    const CuckooTable& t = **table;
    const std::string config = mode == LoadMode::kMmap ? "mmap" : "huge pages";
    rec.Gets("roost cuckoo", config, bytes, build_s,
             [&t](std::string_view key, auto&& sink) {
               std::string_view v;
               if (!t.Get(key, &v)) return false;
               sink(v);
               return true;
             });
    std::vector<LookupResult> results(s.batch);
    rec.MultiGets("roost cuckoo", config, bytes, build_s,
                  [&](std::span<const std::string_view> keys, auto&& sink) {
                    t.MultiGet(keys, results);
                    for (size_t j = 0; j < keys.size(); ++j) {
                      if (results[j].found) sink(j, results[j].value);
                    }
                  });
  }
  fs::remove(path);
  return bytes;
}

class RoostCuckooPeer final : public Peer {
 public:
  std::string_view name() const override { return "roost-cuckoo"; }
  void Measure(Suite& suite) const override {
    suite.cuckoo_bytes = RoostCuckoo(suite.settings, suite.data, suite.rec);
  }
};

}  // namespace

uint64_t BuildRoostCuckoo(const SuiteData& data, const std::string& path) {
  auto builder = CuckooTableBuilder::Create(path, {});
  if (!builder.ok()) Die("roost cuckoo: " + builder.status().ToString());
  ForEachPair(data, false, [&](std::string_view k, std::string_view v) {
    if (!(*builder)->Add(k, v).ok()) Die("roost cuckoo: Add failed");
  });
  auto report = (*builder)->Finish();
  if (!report.ok()) Die("roost cuckoo: " + report.status().ToString());
  return report->file_size;
}

std::unique_ptr<Peer> NewRoostCuckooPeer() {
  return std::make_unique<RoostCuckooPeer>();
}

}  // namespace roost::bench
