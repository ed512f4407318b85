// RocksDB's block-based table in the suite: data blocks searched by binary
// search or binary + hash index, the block cache holding every block; read
// through a DB opened read-only. rocksdb-block-bloom is the same with a full
// Bloom filter of kFilterBitsPerKey bits a key, roost-load's default.

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

void Measure(const Settings& s, const SuiteData& data, Recorder& rec,
             int bloom_bits) {
  const std::string system =
      bloom_bits > 0 ? "RocksDB block-based, bloom" : "RocksDB block-based";
  for (const bool hash : {false, true}) {
    // Room for every block: the pairs, with their per-entry overhead.
    const uint64_t raw =
        s.keys *
        (data.fixed_width() ? 16 : SuiteData::kMaxKey + SuiteData::kMaxValue);
    const rocksdb::Options options = RocksBlockOptions(
        hash, rocksdb::NewLRUCache(raw * 2 + (64 << 20)), bloom_bits);
    const std::string dir =
        (s.dir / fmt::format("rocksdb-block{}{}", hash ? "-hash" : "",
                             bloom_bits > 0 ? "-bloom" : ""))
            .string();
    const auto start = std::chrono::steady_clock::now();
    IngestBuild(data, options, dir, system);
    const std::string config =
        std::string(hash ? "binary and hash" : "binary") +
        (bloom_bits > 0 ? fmt::format(", {} bits/key", bloom_bits) : "");
    MeasureRocks(s, rec, system, config, options, dir, SecondsSince(start),
                 true);
    rocksdb::DestroyDB(dir, options);
  }
}

void RocksBlock(const Settings& s, const SuiteData& data, Recorder& rec) {
  Measure(s, data, rec, 0);
}

void RocksBlockBloom(const Settings& s, const SuiteData& data, Recorder& rec) {
  Measure(s, data, rec, kFilterBitsPerKey);
}

}  // namespace

std::unique_ptr<Peer> NewRocksBlockPeer() {
  return std::make_unique<FunctionPeer>("rocksdb-block", RocksBlock);
}

std::unique_ptr<Peer> NewRocksBlockBloomPeer() {
  return std::make_unique<FunctionPeer>("rocksdb-block-bloom", RocksBlockBloom);
}

}  // namespace roost::bench
