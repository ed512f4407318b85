// roost's block table side by side with RocksDB's block-based table (DB::Get
// over a DB whose data is one SST, every block in its block cache) on the
// same sorted keys: uniformly random ones, and heavily skewed ones whose
// gaps are very uneven. Single thread, everything in memory.
//
//   ninja -C build block_bench
//   ROOST_BENCH_KEYS=10000000 build/bench/block_bench
//
// Rows: BM_RoostGet/<keys>/<index search>/<hash|no_hash>/<hit|miss>,
// BM_RoostSnappyGet/... for the compressed table, and
// BM_RocksDbGet/<keys>/<binary|binary_and_hash>/<hit|miss>. roost's
// uncompressed table is one file per data set (built with the defaults: hash
// index, IndexSearch::kAuto) opened once per configuration, with
// TableReadOptions::index_search and use_hash_index overriding the file.
// The figures to compare are the items_per_second of each row; bytes_per_key
// is the table file's size over the number of keys. The *Table rows report
// each table's shape and build time.

#include <benchmark/benchmark.h>
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/sst_file_writer.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "bench/bench_data.h"
#include "bench/peers/rocksdb_options.h"
#include "storage/block/block_table.h"
#include "storage/block/block_table_builder.h"
#include "util/str_cat.h"

namespace roost::bench {
namespace {

constexpr size_t kProbes = 1 << 22;
// Lookups checked (hits and misses each) before any timing.
constexpr size_t kChecks = 100000;
// A block cache large enough to hold every block of every table here.
constexpr size_t kCacheBytes = size_t{4} << 30;

std::filesystem::path BenchDir() {
  return BenchScratchDir("roost-block-bench");
}

[[noreturn]] void Die(const std::string& what) { DieWith("block_bench", what); }

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

enum class Keys { kUniform, kSkewed };

std::string KeysName(Keys keys) {
  return keys == Keys::kUniform ? "uniform" : "skewed";
}

// A data set and its keys in the order the builders take them.
struct DataSet {
  FixedData data;
  std::vector<uint64_t> sorted;  // data.keys in bytewise order
};

const DataSet& Data(Keys keys) {
  auto make = [](FixedData data) {
    DataSet d{std::move(data), {}};
    d.sorted = SortedBytewise(d.data.keys);
    return d;
  };
  if (keys == Keys::kUniform) {
    static const DataSet uniform = make(FixedData::Make(NumKeys(), kProbes));
    return uniform;
  }
  static const DataSet skewed = make(FixedData::MakeSkewed(NumKeys(), kProbes));
  return skewed;
}

// roost's tables, each built once per process from the sorted pairs.
enum class Variant { kPlain, kNoHashIndex, kSnappy };

std::string VariantName(Variant v) {
  switch (v) {
    case Variant::kPlain:
      return "plain";
    case Variant::kNoHashIndex:
      return "no_hash_index";
    case Variant::kSnappy:
      return "snappy";
  }
  return "unknown";
}

struct RoostFile {
  std::string path;
  double build_seconds = 0;
  BlockBuildReport report;
};

RoostFile BuildRoost(Keys keys, Variant variant) {
  BlockBuildOptions options;  // block_size 4096, restart_interval 16, kAuto
  options.hash_index = variant != Variant::kNoHashIndex;
  if (variant == Variant::kSnappy) options.compression = Compression::kSnappy;
  RoostFile f;
  f.path = (BenchDir() /
            ("roost-" + KeysName(keys) + "-" + VariantName(variant) + ".sst"))
               .string();
  const DataSet& d = Data(keys);  // generated and sorted outside the timing
  const auto start = std::chrono::steady_clock::now();
  auto builder = BlockTableBuilder::Create(f.path, options);
  if (!builder.ok()) Die(builder.status().ToString());
  for (const uint64_t k : d.sorted) {
    const uint64_t v = ValueOf(k);
    const absl::Status s = (*builder)->Add(AsBytes(k), AsBytes(v));
    if (!s.ok()) Die(s.ToString());
  }
  auto report = (*builder)->Finish();
  if (!report.ok()) Die(report.status().ToString());
  f.build_seconds = SecondsSince(start);
  f.report = *report;
  return f;
}

const RoostFile& Roost(Keys keys, Variant variant) {
  static std::map<std::pair<Keys, Variant>, RoostFile> files;
  auto it = files.find({keys, variant});
  if (it == files.end()) {
    it = files.emplace(std::pair(keys, variant), BuildRoost(keys, variant))
             .first;
  }
  return it->second;
}

// A reader of one file, opened with one index search and data block search.
// Open() verifies every checksum, so every page of the file has been read
// (and mapped) before timing; a compressed table's cache is filled by a
// full scan.
std::unique_ptr<BlockTable> OpenRoost(Keys keys, Variant variant,
                                      IndexSearch search, bool use_hash) {
  // One cache for every reader, as a server's tables share one.
  static const auto cache = std::make_shared<BlockCache>(kCacheBytes);
  TableReadOptions options;
  options.index_search = search;
  options.use_hash_index = use_hash;
  options.block_cache = cache;
  auto table = BlockTable::Open(Roost(keys, variant).path, options);
  if (!table.ok()) Die(table.status().ToString());
  const std::string name =
      StrCat("roost (", KeysName(keys), ", ", VariantName(variant), ", ",
             IndexSearchName(search), use_hash ? ", hash index)" : ")");
  if (variant == Variant::kSnappy) {
    auto it = (*table)->NewIterator();
    uint64_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
    if (!it->status().ok() || n != Data(keys).sorted.size()) {
      Die(name + ": the warming scan failed");
    }
  }
  // Check before timing: hits read back their values, misses are absent.
  const FixedData& data = Data(keys).data;
  for (size_t i = 0; i < kChecks && i < data.hits.size(); ++i) {
    BlockTable::Value v;
    const uint64_t k = data.hits[i];
    const uint64_t want = ValueOf(k);
    auto found = (*table)->Get(AsBytes(k), &v);
    if (!found.ok()) Die(name + ": " + found.status().ToString());
    if (!*found || v.view() != AsBytes(want)) {
      Die(name + " returned a wrong value");
    }
    found = (*table)->Get(AsBytes(data.misses[i]), &v);
    if (!found.ok() || *found) Die(name + ": false hit");
  }
  return std::move(*table);
}

const BlockTable& RoostReader(Keys keys, Variant variant, IndexSearch search,
                              bool use_hash) {
  static std::map<std::tuple<Keys, Variant, IndexSearch, bool>,
                  std::unique_ptr<BlockTable>>
      tables;
  auto& t = tables[{keys, variant, search, use_hash}];
  if (t == nullptr) t = OpenRoost(keys, variant, search, use_hash);
  return *t;
}

void RoostTable(benchmark::State& state, Keys keys, Variant variant) {
  for (auto _ : state) benchmark::DoNotOptimize(Roost(keys, variant).path);
  const RoostFile& f = Roost(keys, variant);
  state.counters["build_seconds"] = f.build_seconds;
  state.counters["bytes_per_key"] =
      static_cast<double>(f.report.file_size) / f.report.num_keys;
  state.counters["data_blocks"] = f.report.num_data_blocks;
  state.counters["compressed_blocks"] = f.report.compressed_blocks;
  state.counters["is_uniform"] = f.report.is_uniform;
  state.counters["uniformity_cv"] = f.report.uniformity_cv;
}

void RoostGet(benchmark::State& state, Keys keys, Variant variant,
              IndexSearch search, bool use_hash, bool hits) {
  const BlockTable& table = RoostReader(keys, variant, search, use_hash);
  const FixedData& data = Data(keys).data;
  const std::vector<uint64_t>& probes = hits ? data.hits : data.misses;
  const uint64_t cache_misses = table.cache().misses();
  size_t i = 0;
  uint64_t found = 0;
  for (auto _ : state) {
    BlockTable::Value v;
    const absl::StatusOr<bool> r = table.Get(AsBytes(probes[i]), &v);
    found += r.ok() && *r;
    if (++i == probes.size()) i = 0;
  }
  if (found != (hits ? static_cast<uint64_t>(state.iterations()) : 0)) {
    Die("roost: wrong number of hits in the timed loop");
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["bytes_per_key"] =
      static_cast<double>(table.footer().file_size) / table.num_keys();
  state.counters["is_uniform"] = table.footer().is_uniform;
  state.counters["uniformity_cv"] = table.footer().uniformity_cv;
  if (variant == Variant::kSnappy) {
    state.counters["cache_misses"] = table.cache().misses() - cache_misses;
  }
}

// RocksDB: a DB whose data is one block-based SST, written by SstFileWriter
// from the same sorted pairs and ingested, uncompressed, with every block in
// a block cache large enough to hold them all (filled by a full scan).
struct RocksTable {
  std::shared_ptr<rocksdb::Cache> cache;
  std::unique_ptr<rocksdb::DB> db;
  double build_seconds = 0;
  uint64_t sst_bytes = 0;
};

RocksTable MakeRocks(Keys keys, bool hash_index) {
  RocksTable out;
  const std::string name =
      KeysName(keys) + (hash_index ? "-binary_and_hash" : "-binary");
  out.cache = rocksdb::NewLRUCache(kCacheBytes);
  // The suite's configuration (bench/peers/rocksdb_options.h).
  const rocksdb::Options options = RocksBlockOptions(hash_index, out.cache);
  const std::string dir = (BenchDir() / ("rocksdb-" + name)).string();
  const std::string sst = (BenchDir() / ("rocksdb-" + name + ".sst")).string();
  const DataSet& d = Data(keys);  // generated and sorted outside the timing
  const auto start = std::chrono::steady_clock::now();
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), options);
  rocksdb::Status s = writer.Open(sst);
  if (!s.ok()) Die("rocksdb sst open: " + s.ToString());
  for (const uint64_t k : d.sorted) {
    const uint64_t v = ValueOf(k);
    s = writer.Put(rocksdb::Slice(AsBytes(k).data(), 8),
                   rocksdb::Slice(AsBytes(v).data(), 8));
    if (!s.ok()) Die("rocksdb sst put: " + s.ToString());
  }
  s = writer.Finish();
  if (!s.ok()) Die("rocksdb sst finish: " + s.ToString());
  rocksdb::DB* db = nullptr;
  s = rocksdb::DB::Open(options, dir, &db);
  if (!s.ok()) Die("rocksdb open: " + s.ToString());
  out.db.reset(db);
  rocksdb::IngestExternalFileOptions ingest;
  ingest.move_files = true;
  s = db->IngestExternalFile({sst}, ingest);
  if (!s.ok()) Die("rocksdb ingest: " + s.ToString());
  out.build_seconds = SecondsSince(start);
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".sst") out.sst_bytes += entry.file_size();
  }
  // Warm the block cache: a full scan reads (and caches) every data block.
  {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator({}));
    uint64_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
    if (!it->status().ok() || n != d.sorted.size()) {
      Die("rocksdb " + name + ": the warming scan failed");
    }
  }
  // Same check as for roost.
  const FixedData& data = d.data;
  for (size_t i = 0; i < kChecks && i < data.hits.size(); ++i) {
    rocksdb::PinnableSlice v;
    const uint64_t k = data.hits[i];
    const uint64_t want = ValueOf(k);
    s = db->Get(rocksdb::ReadOptions(), db->DefaultColumnFamily(),
                rocksdb::Slice(AsBytes(k).data(), 8), &v);
    if (!s.ok() || v.ToStringView() != AsBytes(want)) {
      Die("rocksdb " + name + " returned a wrong value");
    }
    v.Reset();
    s = db->Get(rocksdb::ReadOptions(), db->DefaultColumnFamily(),
                rocksdb::Slice(AsBytes(data.misses[i]).data(), 8), &v);
    if (!s.IsNotFound()) Die("rocksdb " + name + ": false hit");
  }
  return out;
}

std::map<std::pair<Keys, bool>, RocksTable>& RocksDbs() {
  static auto* dbs = new std::map<std::pair<Keys, bool>, RocksTable>;
  return *dbs;
}

// Closes the DBs before exit: a DB closed from a static destructor aborts
// in RocksDB's EnvLogger::Logv (free(): invalid pointer).
void CloseRocksDbs() { RocksDbs().clear(); }

RocksTable& Rocks(Keys keys, bool hash_index) {
  auto& dbs = RocksDbs();
  auto it = dbs.find({keys, hash_index});
  if (it == dbs.end()) {
    it = dbs.emplace(std::pair(keys, hash_index), MakeRocks(keys, hash_index))
             .first;
  }
  return it->second;
}

void RocksDbTable(benchmark::State& state, Keys keys, bool hash_index) {
  for (auto _ : state) benchmark::DoNotOptimize(Rocks(keys, hash_index).db);
  const RocksTable& r = Rocks(keys, hash_index);
  state.counters["build_seconds"] = r.build_seconds;
  state.counters["bytes_per_key"] =
      static_cast<double>(r.sst_bytes) / Data(keys).sorted.size();
  state.counters["cache_bytes"] = r.cache->GetUsage();
}

void RocksDbGet(benchmark::State& state, Keys keys, bool hash_index,
                bool hits) {
  const RocksTable& r = Rocks(keys, hash_index);
  rocksdb::DB* db = r.db.get();
  const FixedData& data = Data(keys).data;
  const std::vector<uint64_t>& probes = hits ? data.hits : data.misses;
  const rocksdb::ReadOptions ro;
  rocksdb::ColumnFamilyHandle* cf = db->DefaultColumnFamily();
  const size_t cache_bytes = r.cache->GetUsage();
  rocksdb::PinnableSlice v;
  size_t i = 0;
  uint64_t found = 0;
  for (auto _ : state) {
    v.Reset();
    found +=
        db->Get(ro, cf, rocksdb::Slice(AsBytes(probes[i]).data(), 8), &v).ok();
    if (++i == probes.size()) i = 0;
  }
  v.Reset();
  if (found != (hits ? static_cast<uint64_t>(state.iterations()) : 0)) {
    Die("rocksdb: wrong number of hits in the timed loop");
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["bytes_per_key"] =
      static_cast<double>(r.sst_bytes) / data.keys.size();
  // Bytes the cache grew by while timing: 0 when every block was cached.
  state.counters["cache_growth_bytes"] =
      static_cast<double>(r.cache->GetUsage()) - cache_bytes;
}

void RegisterAll() {
  constexpr IndexSearch kSearches[] = {
      IndexSearch::kBinary, IndexSearch::kInterpolation, IndexSearch::kAuto};
  for (const Keys keys : {Keys::kUniform, Keys::kSkewed}) {
    const std::string k = KeysName(keys);
    for (const Variant variant :
         {Variant::kPlain, Variant::kNoHashIndex, Variant::kSnappy}) {
      benchmark::RegisterBenchmark(
          ("BM_RoostTable/" + k + "/" + VariantName(variant)).c_str(),
          [=](benchmark::State& s) { RoostTable(s, keys, variant); })
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond);
    }
    for (const IndexSearch search : kSearches) {
      for (const bool use_hash : {true, false}) {
        for (const bool hits : {true, false}) {
          benchmark::RegisterBenchmark(
              StrCat("BM_RoostGet/", k, "/", IndexSearchName(search),
                     use_hash ? "/hash/" : "/no_hash/", hits ? "hit" : "miss")
                  .c_str(),
              [=](benchmark::State& s) {
                RoostGet(s, keys, Variant::kPlain, search, use_hash, hits);
              });
        }
      }
    }
    for (const bool hits : {true, false}) {
      benchmark::RegisterBenchmark(
          ("BM_RoostSnappyGet/" + k + "/auto/hash/" + (hits ? "hit" : "miss"))
              .c_str(),
          [=](benchmark::State& s) {
            RoostGet(s, keys, Variant::kSnappy, IndexSearch::kAuto, true, hits);
          });
    }
    for (const bool hash_index : {false, true}) {
      const std::string index = hash_index ? "binary_and_hash" : "binary";
      benchmark::RegisterBenchmark(
          ("BM_RocksDbTable/" + k + "/" + index).c_str(),
          [=](benchmark::State& s) { RocksDbTable(s, keys, hash_index); })
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond);
      for (const bool hits : {true, false}) {
        benchmark::RegisterBenchmark(
            ("BM_RocksDbGet/" + k + "/" + index + "/" + (hits ? "hit" : "miss"))
                .c_str(),
            [=](benchmark::State& s) {
              RocksDbGet(s, keys, hash_index, hits);
            });
      }
    }
  }
}

}  // namespace
}  // namespace roost::bench

int main(int argc, char** argv) {
  roost::bench::RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  roost::bench::CloseRocksDbs();
  return 0;
}
