// RocksDB's block-based table in the suite: data blocks searched by binary
// search or binary + hash index, the block cache holding every block; read
// through a DB opened read-only.

#include <rocksdb/cache.h>

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

void RocksBlock(const Settings& s, const SuiteData& data, Recorder& rec) {
  const char* system = "RocksDB block-based";
  for (const bool hash : {false, true}) {
    // Room for every block: the pairs, with their per-entry overhead.
    const uint64_t raw =
        s.keys *
        (data.fixed_width() ? 16 : SuiteData::kMaxKey + SuiteData::kMaxValue);
    const rocksdb::Options options =
        RocksBlockOptions(hash, rocksdb::NewLRUCache(raw * 2 + (64 << 20)));
    const std::string dir =
        (s.dir / (hash ? "rocksdb-block-hash" : "rocksdb-block")).string();
    const auto start = std::chrono::steady_clock::now();
    IngestBuild(data, options, dir, system);
    MeasureRocks(s, rec, system, hash ? "binary and hash" : "binary", options,
                 dir, SecondsSince(start), true);
    rocksdb::DestroyDB(dir, options);
  }
}

}  // namespace

std::unique_ptr<Peer> NewRocksBlockPeer() {
  return std::make_unique<FunctionPeer>("rocksdb-block", RocksBlock);
}

}  // namespace roost::bench
