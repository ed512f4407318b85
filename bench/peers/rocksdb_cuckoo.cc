// RocksDB's CuckooTable in the suite (fixed-width keys and values only),
// read through a DB opened read-only.

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench/peers/peer.h"
#include "bench/peers/rocksdb.h"

namespace roost::bench {
namespace {

namespace fs = std::filesystem;

void RocksCuckoo(const Settings& s, const SuiteData& data, Recorder& rec) {
  const char* system = "RocksDB CuckooTable";
  if (!data.fixed_width()) {
    rec.Skip(system, "default",
             "CuckooTable takes only fixed-size keys and values");
    return;
  }
  const rocksdb::Options options = RocksCuckooOptions();
  const std::string dir = (s.dir / "rocksdb-cuckoo").string();
  const auto start = std::chrono::steady_clock::now();
  FlushBuild(data, options, dir, system);
  MeasureRocks(s, rec, system, "default", options, dir, SecondsSince(start),
               false);
  rocksdb::DestroyDB(dir, options);
}

}  // namespace

std::unique_ptr<Peer> NewRocksCuckooPeer() {
  return std::make_unique<FunctionPeer>("rocksdb-cuckoo", RocksCuckoo);
}

}  // namespace roost::bench
