// roost's cuckoo table side by side with RocksDB's CuckooTable (DB::Get over
// a read-only DB with one cuckoo SST) on the same keys, and the machine's
// ceiling: independent and dependent random 64-byte reads over an array as
// large as the roost table. Single thread, everything in memory.
//
//   ninja -C build cuckoo_bench
//   ROOST_BENCH_KEYS=10000000 build/bench/cuckoo_bench
//
// The figures to compare are the items_per_second of each row; the
// blocks_per_lookup counters come from the table's own accounting.

#include <benchmark/benchmark.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "bench/bench_data.h"
#include "bench/peers/rocksdb_options.h"
#include "storage/cuckoo/cuckoo_table.h"
#include "storage/cuckoo/cuckoo_table_builder.h"

namespace roost::bench {
namespace {

constexpr size_t kProbes = 1 << 22;

std::filesystem::path BenchDir() {
  return BenchScratchDir("roost-cuckoo-bench");
}

[[noreturn]] void Die(const std::string& what) {
  DieWith("cuckoo_bench", what);
}

const FixedData& Data() {
  static const FixedData data = FixedData::Make(NumKeys(), kProbes);
  return data;
}

// Views of `keys` as byte strings, for MultiGet.
std::vector<std::string_view> Views(const std::vector<uint64_t>& keys) {
  std::vector<std::string_view> views;
  views.reserve(keys.size());
  for (const uint64_t& k : keys) views.push_back(AsBytes(k));
  return views;
}

// The roost table, built once per process.
struct RoostTable {
  std::string path;
  double build_seconds = 0;
  CuckooBuildReport report;
};

const RoostTable& Roost() {
  static const RoostTable table = [] {
    RoostTable t;
    t.path = (BenchDir() / "roost.sst").string();
    const FixedData& data = Data();  // generated outside the timing
    const auto start = std::chrono::steady_clock::now();
    auto builder = CuckooTableBuilder::Create(t.path, {});
    if (!builder.ok()) Die(builder.status().ToString());
    for (const uint64_t k : data.keys) {
      const uint64_t v = ValueOf(k);
      if (!(*builder)->Add(AsBytes(k), AsBytes(v)).ok()) Die("add failed");
    }
    auto report = (*builder)->Finish();
    if (!report.ok()) Die(report.status().ToString());
    t.build_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    t.report = *report;
    return t;
  }();
  return table;
}

std::unique_ptr<CuckooTable> OpenRoost(LoadMode mode) {
  TableReadOptions options;
  options.load_mode = mode;
  auto table = CuckooTable::Open(Roost().path, options);
  if (!table.ok()) Die(table.status().ToString());
  // Check before timing: every probed hit reads back its value.
  for (size_t i = 0; i < 100000 && i < Data().hits.size(); ++i) {
    std::string_view v;
    const uint64_t k = Data().hits[i];
    const uint64_t want = ValueOf(k);
    if (!(*table)->Get(AsBytes(k), &v) || v != AsBytes(want)) {
      Die("roost returned a wrong value");
    }
    if ((*table)->Get(AsBytes(Data().misses[i]), &v)) Die("roost false hit");
  }
  return std::move(*table);
}

const CuckooTable& RoostReader(LoadMode mode) {
  static std::unique_ptr<CuckooTable> tables[3];
  auto& t = tables[static_cast<int>(mode)];
  if (t == nullptr) t = OpenRoost(mode);
  return *t;
}

double AverageBlocks(const CuckooTable& table,
                     const std::vector<uint64_t>& keys) {
  uint64_t blocks = 0;
  const size_t n = std::min<size_t>(keys.size(), 1 << 20);
  for (size_t i = 0; i < n; ++i) {
    std::string_view v;
    int touched = 0;
    table.Get(AsBytes(keys[i]), &v, &touched);
    blocks += touched;
  }
  return static_cast<double>(blocks) / n;
}

void BM_RoostBuild(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(Roost().path);
  const RoostTable& t = Roost();
  state.counters["build_seconds"] = t.build_seconds;
  state.counters["keys_per_second"] = Data().keys.size() / t.build_seconds;
  state.counters["file_bytes_per_key"] =
      static_cast<double>(t.report.file_size) / Data().keys.size();
  state.counters["size_vs_raw"] =
      static_cast<double>(t.report.file_size) / (Data().keys.size() * 16.0);
  state.counters["first_block_fraction"] =
      static_cast<double>(t.report.keys_per_hash[0]) / t.report.num_keys;
  state.counters["retries"] = t.report.retries;
}
BENCHMARK(BM_RoostBuild)->Iterations(1)->Unit(benchmark::kMillisecond);

void RoostGet(benchmark::State& state, LoadMode mode, bool hits) {
  const CuckooTable& table = RoostReader(mode);
  const std::vector<uint64_t>& keys = hits ? Data().hits : Data().misses;
  size_t i = 0;
  uint64_t found = 0;
  for (auto _ : state) {
    std::string_view v;
    found += table.Get(AsBytes(keys[i]), &v);
    if (++i == keys.size()) i = 0;
  }
  benchmark::DoNotOptimize(found);
  state.SetItemsProcessed(state.iterations());
  state.counters["blocks_per_lookup"] = AverageBlocks(table, keys);
}

void BM_RoostGetHit(benchmark::State& s) { RoostGet(s, LoadMode::kMmap, true); }
void BM_RoostGetMiss(benchmark::State& s) {
  RoostGet(s, LoadMode::kMmap, false);
}
void BM_RoostGetHitHugePages(benchmark::State& s) {
  RoostGet(s, LoadMode::kAnonymousHugePages, true);
}
BENCHMARK(BM_RoostGetHit);
BENCHMARK(BM_RoostGetMiss);
BENCHMARK(BM_RoostGetHitHugePages);

void RoostMultiGet(benchmark::State& state, LoadMode mode, bool hits,
                   bool request_pages = false) {
  const CuckooTable& table = RoostReader(mode);
  const std::vector<std::string_view> keys =
      Views(hits ? Data().hits : Data().misses);
  const size_t batch = static_cast<size_t>(state.range(0));
  std::vector<LookupResult> results(batch);
  size_t i = 0;
  uint64_t found = 0;
  for (auto _ : state) {
    if (request_pages) table.RequestPages(std::span(keys).subspan(i, batch));
    table.MultiGet(std::span(keys).subspan(i, batch), results);
    found += results[0].found;
    i += batch;
    if (i + batch > keys.size()) i = 0;
  }
  benchmark::DoNotOptimize(found);
  state.SetItemsProcessed(state.iterations() * batch);
}

void BM_RoostMultiGetHit(benchmark::State& s) {
  RoostMultiGet(s, LoadMode::kMmap, true);
}
void BM_RoostMultiGetMiss(benchmark::State& s) {
  RoostMultiGet(s, LoadMode::kMmap, false);
}
void BM_RoostMultiGetHitHugePages(benchmark::State& s) {
  RoostMultiGet(s, LoadMode::kAnonymousHugePages, true);
}
// What asking for the pages first (Table::RequestPages, roost-server's
// --page-requests-below) costs a batch whose pages are all resident.
void BM_RoostMultiGetHitPageRequests(benchmark::State& s) {
  RoostMultiGet(s, LoadMode::kMmap, true, true);
}
BENCHMARK(BM_RoostMultiGetHit)->Arg(100)->Arg(1000);
BENCHMARK(BM_RoostMultiGetHitPageRequests)->Arg(100);
BENCHMARK(BM_RoostMultiGetMiss)->Arg(1000);
BENCHMARK(BM_RoostMultiGetHitHugePages)->Arg(1000);

// RocksDB: a DB whose only SST is a CuckooTable, written by a flush of one
// memtable holding every key (the path RocksDB's cuckoo format supports).
struct RocksCuckoo {
  std::unique_ptr<rocksdb::DB> db;
  double build_seconds = 0;
};

RocksCuckoo& Rocks() {
  static RocksCuckoo r = [] {
    RocksCuckoo out;
    // The suite's configuration (bench/peers/rocksdb_options.h); its "no
    // compression" changes nothing here: the cuckoo format has none.
    rocksdb::Options options = RocksCuckooOptions();
    options.write_buffer_size = size_t{8} << 30;  // one memtable, one SST
    const std::string path = (BenchDir() / "rocksdb-cuckoo").string();
    const FixedData& data = Data();  // generated outside the timing
    rocksdb::DB* db = nullptr;
    const auto start = std::chrono::steady_clock::now();
    rocksdb::Status s = rocksdb::DB::Open(options, path, &db);
    if (!s.ok()) Die("rocksdb open: " + s.ToString());
    out.db.reset(db);
    rocksdb::WriteOptions wo;
    wo.disableWAL = true;
    for (const uint64_t k : data.keys) {
      const uint64_t v = ValueOf(k);
      s = db->Put(wo, rocksdb::Slice(AsBytes(k).data(), 8),
                  rocksdb::Slice(AsBytes(v).data(), 8));
      if (!s.ok()) Die("rocksdb put: " + s.ToString());
    }
    s = db->Flush(rocksdb::FlushOptions());
    if (!s.ok()) Die("rocksdb flush: " + s.ToString());
    out.build_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    // Same check as for roost.
    for (size_t i = 0; i < 100000 && i < Data().hits.size(); ++i) {
      rocksdb::PinnableSlice v;
      const uint64_t k = Data().hits[i];
      const uint64_t want = ValueOf(k);
      s = db->Get(rocksdb::ReadOptions(), db->DefaultColumnFamily(),
                  rocksdb::Slice(AsBytes(k).data(), 8), &v);
      if (!s.ok() || v.ToStringView() != AsBytes(want)) {
        Die("rocksdb returned a wrong value");
      }
    }
    return out;
  }();
  return r;
}

void RocksGet(benchmark::State& state, bool hits) {
  rocksdb::DB* db = Rocks().db.get();
  const std::vector<uint64_t>& keys = hits ? Data().hits : Data().misses;
  const rocksdb::ReadOptions ro;
  rocksdb::ColumnFamilyHandle* cf = db->DefaultColumnFamily();
  rocksdb::PinnableSlice v;
  size_t i = 0;
  uint64_t found = 0;
  for (auto _ : state) {
    v.Reset();
    found +=
        db->Get(ro, cf, rocksdb::Slice(AsBytes(keys[i]).data(), 8), &v).ok();
    if (++i == keys.size()) i = 0;
  }
  benchmark::DoNotOptimize(found);
  state.SetItemsProcessed(state.iterations());
  state.counters["build_seconds"] = Rocks().build_seconds;
}
void BM_RocksDbCuckooGetHit(benchmark::State& s) { RocksGet(s, true); }
void BM_RocksDbCuckooGetMiss(benchmark::State& s) { RocksGet(s, false); }
BENCHMARK(BM_RocksDbCuckooGetHit);
BENCHMARK(BM_RocksDbCuckooGetMiss);

void BM_RocksDbCuckooMultiGetHit(benchmark::State& state) {
  rocksdb::DB* db = Rocks().db.get();
  const std::vector<uint64_t>& keys = Data().hits;
  const size_t batch = static_cast<size_t>(state.range(0));
  std::vector<rocksdb::Slice> slices;
  for (const uint64_t& k : keys) slices.emplace_back(AsBytes(k).data(), 8);
  std::vector<rocksdb::PinnableSlice> values(batch);
  std::vector<rocksdb::Status> statuses(batch);
  size_t i = 0;
  for (auto _ : state) {
    db->MultiGet(rocksdb::ReadOptions(), db->DefaultColumnFamily(), batch,
                 &slices[i], values.data(), statuses.data());
    i += batch;
    if (i + batch > keys.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_RocksDbCuckooMultiGetHit)->Arg(1000);

// The ceiling: random 64-byte reads over an array the size of the roost
// table, independent (as many in flight as the core allows) and dependent
// (each address read from the previous line: pure latency).
struct LineArray {
  char* base = nullptr;
  size_t lines = 0;
  std::vector<uint64_t> order;

  explicit LineArray(bool huge_pages) {
    const size_t bytes = (Roost().report.file_size + 63) / 64 * 64;
    lines = bytes / 64;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) Die("mmap failed");
    madvise(p, bytes, huge_pages ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    base = static_cast<char*>(p);
    // A random cyclic permutation of the lines, for pointer chasing; the
    // same sequence serves the independent reads.
    std::mt19937_64 rng(7);
    std::vector<uint64_t> perm(lines);
    for (size_t i = 0; i < lines; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    for (size_t i = 0; i < lines; ++i) {
      const uint64_t next = perm[(i + 1) % lines];
      std::memcpy(base + perm[i] * 64, &next, 8);
    }
    order.assign(perm.begin(), perm.begin() + std::min<size_t>(lines, kProbes));
  }
};

const LineArray& Lines(bool huge_pages) {
  static const LineArray plain(false);
  static const LineArray huge(true);
  return huge_pages ? huge : plain;
}

void IndependentReads(benchmark::State& state, bool huge_pages) {
  const LineArray& a = Lines(huge_pages);
  uint64_t sum = 0;
  size_t i = 0;
  for (auto _ : state) {
    uint64_t v;
    std::memcpy(&v, a.base + a.order[i] * 64, 8);
    sum += v;
    if (++i == a.order.size()) i = 0;
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations());
}
void BM_CeilingIndependentLineReads(benchmark::State& s) {
  IndependentReads(s, false);
}
void BM_CeilingIndependentLineReadsHugePages(benchmark::State& s) {
  IndependentReads(s, true);
}
BENCHMARK(BM_CeilingIndependentLineReads);
BENCHMARK(BM_CeilingIndependentLineReadsHugePages);

void BM_CeilingDependentLineReads(benchmark::State& state) {
  const LineArray& a = Lines(false);
  uint64_t line = a.order[0];
  for (auto _ : state) {
    std::memcpy(&line, a.base + line * 64, 8);
  }
  benchmark::DoNotOptimize(line);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CeilingDependentLineReads);

}  // namespace
}  // namespace roost::bench

BENCHMARK_MAIN();
