// cold_bench: point lookups in a table larger than the memory its process
// may use (bench/cold_bench.sh runs each measurement inside a memory
// cgroup), roost's cuckoo and block tables beside RocksDB's block-based
// table with its block cache sized inside the same limit.
//
//   cold_bench build --dir D --keys N
//     builds, from the suite's variable data set (keys 10-40 bytes, values
//     20-200): D/roost-cuckoo.sst; D/roost-block.sst as roost-load builds
//     it (hash index, a filter of 10 bits a key); D/rocksdb-block/, RocksDB's
//     block-based table through SstFileWriter (binary and hash index, a
//     Bloom filter of 10 bits a key). Each file is fsynced.
//   cold_bench run --dir D --keys N --system S --dist uniform|zipf
//                  --op get|multiget [--threads T] [--seconds X]
//                  [--warmup X] [--block-cache BYTES] [--advice A]
//     drops the system's files from the page cache (posix_fadvise
//     DONTNEED: pages another process read would otherwise be found
//     without being charged to this one's cgroup), opens the table (roost's
//     without verifying checksums: that whole-file read at open is not the
//     steady state measured), looks keys up from T threads for --warmup
//     seconds, then measures --seconds; every answer is checked against the
//     data set. Keys are drawn uniformly or from a scrambled Zipfian
//     distribution (θ --theta, 0.99: YCSB's), so hot keys are spread over
//     the table. --advice applies to roost's mapped tables: normal (the
//     kernel reads ahead around each fault) or random (MADV_RANDOM: the
//     faulting page only; TableReadOptions::advise_random, roost-server's
//     --mmap-random, on by default) or requests (MADV_RANDOM, and each
//     MultiGet first asks for its keys' pages, Table::RequestPages, as
//     roost-server does for a table mostly not resident). Block tables are
//     opened with their index and filter copied into memory
//     (resident_index_and_filter, the default) unless --mapped-index.
//
// Output: one JSON line,
//   {"system":..,"advice":..,"dist":..,"op":..,"batch":..,"threads":..,
//    "keys":..,"table_bytes":..,"lookups":..,"seconds":..,"ops_per_s":..,
//    "p50_us":..,"p99_us":..,"max_us":..,"errors":..,"major_faults":..,
//    "read_bytes":..,"block_cache":..,"mapped_index":..}
// where p50/p99 are per call (a MultiGet is one call of --batch keys),
// major_faults come from getrusage and read_bytes from /proc/self/io.

#include <fcntl.h>
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/load_stats.h"
#include "bench/peers/peer.h"
#include "bench/peers/rocksdb.h"
#include "bench/suite_data.h"
#include "fmt/format.h"
#include "storage/block/block_table.h"
#include "storage/block/block_table_builder.h"
#include "storage/cuckoo/cuckoo_table.h"
#include "xxhash.h"

namespace roost::bench {
namespace {

namespace fs = std::filesystem;

// Draws record numbers in [0, n): uniform, or Zipfian over ranks (Gray et
// al.'s method, as YCSB's ZipfianGenerator) with each rank scrambled to a
// record by a hash, as YCSB's ScrambledZipfianGenerator.
class KeyDraw {
 public:
  KeyDraw(uint64_t n, bool zipf, double theta) : n_(n), zipf_(zipf) {
    if (!zipf) return;
    theta_ = theta;
    double zetan = 0;
    for (uint64_t i = 1; i <= n; ++i) zetan += 1.0 / std::pow(i, theta);
    const double zeta2 = 1.0 + 1.0 / std::pow(2.0, theta);
    zetan_ = zetan;
    alpha_ = 1.0 / (1.0 - theta);
    eta_ = (1.0 - std::pow(2.0 / n, 1.0 - theta)) / (1.0 - zeta2 / zetan);
  }

  template <typename Rng>
  uint64_t operator()(Rng& rng) const {
    if (!zipf_) return rng() % n_;
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    const double uz = u * zetan_;
    uint64_t rank;
    if (uz < 1.0) {
      rank = 0;
    } else if (uz < 1.0 + std::pow(0.5, theta_)) {
      rank = 1;
    } else {
      rank = static_cast<uint64_t>(n_ * std::pow(eta_ * u - eta_ + 1, alpha_));
      rank = std::min(rank, n_ - 1);
    }
    return XXH3_64bits(&rank, sizeof(rank)) % n_;
  }

 private:
  uint64_t n_;
  bool zipf_;
  double theta_ = 0, zetan_ = 0, alpha_ = 0, eta_ = 0;
};

// One system opened for lookups: calls sink(i, value) for each key found.
using Lookup =
    std::function<void(std::span<const std::string_view> keys,
                       const std::function<void(size_t, std::string_view)>&)>;

const char* kCuckoo = "roost-cuckoo.sst";
const char* kBlock = "roost-block.sst";
const char* kRocks = "rocksdb-block";

rocksdb::Options RocksOptions(uint64_t cache_bytes) {
  return RocksBlockOptions(true, rocksdb::NewLRUCache(cache_bytes),
                           kFilterBitsPerKey);
}

void Fsync(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0 || ::fsync(fd) != 0) Die("cannot fsync " + path.string());
  ::close(fd);
}

void Build(const fs::path& dir, const SuiteData& data) {
  fs::create_directories(dir);
  auto start = std::chrono::steady_clock::now();
  BuildRoostCuckoo(data, (dir / kCuckoo).string());
  std::fprintf(stderr, "cold_bench: roost cuckoo built in %.1f s\n",
               SecondsSince(start));
  start = std::chrono::steady_clock::now();
  BlockBuildOptions options;
  options.hash_index = true;
  options.filter_bits_per_key = kFilterBitsPerKey;
  options.expected_keys = data.num_keys();
  auto builder = BlockTableBuilder::Create((dir / kBlock).string(), options);
  if (!builder.ok()) Die("roost block: " + builder.status().ToString());
  ForEachPair(data, true, [&](std::string_view k, std::string_view v) {
    const absl::Status st = (*builder)->Add(k, v);
    if (!st.ok()) Die("roost block: " + st.ToString());
  });
  if (auto r = (*builder)->Finish(); !r.ok()) {
    Die("roost block: " + r.status().ToString());
  }
  std::fprintf(stderr, "cold_bench: roost block built in %.1f s\n",
               SecondsSince(start));
  start = std::chrono::steady_clock::now();
  IngestBuild(data, RocksOptions(8 << 20), (dir / kRocks).string(),
              "RocksDB block-based");
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) Fsync(e.path());
  }
  std::fprintf(stderr, "cold_bench: RocksDB block-based built in %.1f s\n",
               SecondsSince(start));
}

// Drops the clean pages of every file under `path` from the page cache;
// returns the bytes of the files.
uint64_t Evict(const fs::path& path) {
  std::vector<fs::path> files;
  if (fs::is_regular_file(path)) {
    files.push_back(path);
  } else {
    for (const auto& e : fs::recursive_directory_iterator(path)) {
      if (e.is_regular_file()) files.push_back(e.path());
    }
  }
  uint64_t bytes = 0;
  for (const fs::path& f : files) {
    const int fd = ::open(f.c_str(), O_RDONLY);
    if (fd < 0) Die("cannot open " + f.string());
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
    if (f.extension() == ".sst") bytes += fs::file_size(f);
  }
  return bytes;
}

struct Totals {
  uint64_t major_faults = 0;
  uint64_t read_bytes = 0;
};

Totals Now() {
  Totals t;
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  t.major_faults = static_cast<uint64_t>(u.ru_majflt);
  std::ifstream io("/proc/self/io");
  std::string name;
  uint64_t value = 0;
  while (io >> name >> value) {
    if (name == "read_bytes:") t.read_bytes = value;
  }
  return t;
}

int Main(int argc, char** argv) {
  CLI::App app{
      "Point lookups in a table larger than memory: roost's cuckoo and block "
      "tables and RocksDB's block-based table (bench/cold_bench.sh)."};
  app.require_subcommand(1);
  std::string dir;
  uint64_t keys = 0;
  uint64_t seed = kDefaultSeed;
  CLI::App* build = app.add_subcommand("build", "Build the three tables");
  CLI::App* run = app.add_subcommand("run", "Measure one system");
  for (CLI::App* sub : {build, run}) {
    sub->add_option("--dir", dir, "The tables' directory")->required();
    sub->add_option("--keys", keys, "Pairs in the tables")->required();
    sub->add_option("--seed", seed, "Data set seed")->capture_default_str();
  }
  std::string system, dist = "uniform", op = "get", advice = "random";
  double theta = 0.99, seconds = 10, warmup = 5;
  size_t batch = 100;
  int threads = 4;
  bool mapped_index = false;
  uint64_t cache_bytes = 32 << 20;
  run->add_option("--system", system, "roost-cuckoo, roost-block or rocksdb")
      ->required()
      ->check(CLI::IsMember({"roost-cuckoo", "roost-block", "rocksdb"}));
  run->add_option("--dist", dist, "uniform or zipf")
      ->check(CLI::IsMember({"uniform", "zipf"}))
      ->capture_default_str();
  run->add_option("--theta", theta, "The Zipfian exponent")
      ->check(CLI::Range(0.01, 0.999))
      ->capture_default_str();
  run->add_option("--op", op, "get or multiget")
      ->check(CLI::IsMember({"get", "multiget"}))
      ->capture_default_str();
  run->add_option("--batch", batch, "Keys per MultiGet")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  run->add_option("--threads", threads, "Lookup threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  run->add_option("--seconds", seconds, "Measured seconds")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  run->add_option("--warmup", warmup, "Seconds of lookups before measuring")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  run->add_option("--block-cache", cache_bytes,
                  "RocksDB's block cache in bytes")
      ->capture_default_str();
  run->add_flag("--mapped-index", mapped_index,
                "roost's block table: read its index and filter through the "
                "mapping, not from copies in memory");
  run->add_option("--advice", advice,
                  "roost's mapped tables: normal, random or requests")
      ->check(CLI::IsMember({"normal", "random", "requests"}))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (keys == 0) {
    std::fprintf(stderr, "cold_bench: --keys must be positive\n");
    return 2;
  }
  const SuiteData data(DataSet::kVariable, keys, seed);
  try {
    if (build->parsed()) {
      Build(dir, data);
      return 0;
    }
    const fs::path where = fs::path(dir) / (system == "roost-cuckoo"  ? kCuckoo
                                            : system == "roost-block" ? kBlock
                                                                      : kRocks);
    const uint64_t table_bytes = Evict(where);
    std::unique_ptr<CuckooTable> cuckoo;
    std::unique_ptr<BlockTable> block;
    std::unique_ptr<rocksdb::DB> db;
    Lookup lookup;
    if (system == "rocksdb") {
      db = OpenDb(RocksOptions(cache_bytes), where.string(), true, system);
      lookup = [&db](std::span<const std::string_view> k, const auto& sink) {
        const rocksdb::ReadOptions ro;
        if (k.size() == 1) {
          rocksdb::PinnableSlice v;
          const rocksdb::Status st = db->Get(ro, db->DefaultColumnFamily(),
                                             {k[0].data(), k[0].size()}, &v);
          if (st.ok()) sink(0, std::string_view(v.data(), v.size()));
          if (!st.ok() && !st.IsNotFound()) Die("rocksdb: " + st.ToString());
          return;
        }
        // Kept per thread, as roost's results are: no allocation a call.
        thread_local std::vector<rocksdb::Slice> slices;
        thread_local std::vector<rocksdb::PinnableSlice> values;
        thread_local std::vector<rocksdb::Status> statuses;
        slices.clear();
        for (const std::string_view s : k) {
          slices.emplace_back(s.data(), s.size());
        }
        values.resize(k.size());
        for (rocksdb::PinnableSlice& v : values) v.Reset();
        statuses.resize(k.size());
        db->MultiGet(ro, db->DefaultColumnFamily(), k.size(), slices.data(),
                     values.data(), statuses.data());
        for (size_t j = 0; j < k.size(); ++j) {
          if (statuses[j].ok()) {
            sink(j, std::string_view(values[j].data(), values[j].size()));
          } else if (!statuses[j].IsNotFound()) {
            Die("rocksdb: " + statuses[j].ToString());
          }
        }
      };
    } else {
      TableReadOptions ro;
      ro.verify_checksums = false;
      ro.advise_random = advice != "normal";  // MADV_RANDOM once open
      ro.resident_index_and_filter = !mapped_index;
      if (system == "roost-cuckoo") {
        auto t = CuckooTable::Open(where.string(), ro);
        if (!t.ok()) Die(t.status().ToString());
        cuckoo = std::move(*t);
      } else {
        auto t = BlockTable::Open(where.string(), ro);
        if (!t.ok()) Die(t.status().ToString());
        block = std::move(*t);
      }
      const bool requests = advice == "requests";
      lookup = [&, requests](std::span<const std::string_view> k,
                             const auto& sink) {
        thread_local std::vector<LookupResult> results;
        thread_local ValuePins pins;
        results.resize(k.size());
        if (requests && k.size() > 1) {
          if (cuckoo != nullptr) {
            cuckoo->RequestPages(k);
          } else {
            block->RequestPages(k);
          }
        }
        if (cuckoo != nullptr) {
          cuckoo->MultiGet(k, results);
        } else {
          pins.Clear();
          const absl::Status st = block->MultiGet(k, results, &pins);
          if (!st.ok()) Die("roost block: " + st.ToString());
        }
        for (size_t j = 0; j < k.size(); ++j) {
          if (results[j].found) sink(j, results[j].value);
        }
      };
    }

    const KeyDraw draw(keys, dist == "zipf", theta);
    const size_t per_call = op == "get" ? 1 : batch;
    Histogram latency;
    std::atomic<int> phase{0};  // 0 warm-up, 1 measured, 2 stop
    std::atomic<uint64_t> calls{0}, errors{0};
    auto worker = [&](int id) {
      std::mt19937_64 rng(seed * 1000003 + id);
      std::vector<uint64_t> words(per_call);
      std::vector<std::string> key_bytes(per_call,
                                         std::string(SuiteData::kMaxKey, 0));
      std::vector<std::string_view> ks(per_call);
      std::vector<uint8_t> found(per_call);
      char want[SuiteData::kMaxValue];
      uint64_t my_calls = 0, my_errors = 0;
      for (int p; (p = phase.load(std::memory_order_relaxed)) != 2;) {
        for (size_t j = 0; j < per_call; ++j) {
          words[j] = data.Word(draw(rng));
          ks[j] = std::string_view(key_bytes[j].data(),
                                   data.Key(words[j], key_bytes[j].data()));
          found[j] = 0;
        }
        const auto start = std::chrono::steady_clock::now();
        lookup(ks, [&](size_t j, std::string_view v) {
          found[j] = 1;
          if (v != std::string_view(want, data.Value(words[j], want))) {
            ++my_errors;
          }
        });
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now() - start)
                            .count();
        for (size_t j = 0; j < per_call; ++j) my_errors += found[j] == 0;
        if (p == 1) {
          latency.Record(static_cast<uint64_t>(ns));
          ++my_calls;
        }
      }
      calls += my_calls;
      errors += my_errors;
    };
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i) pool.emplace_back(worker, i);
    std::this_thread::sleep_for(std::chrono::duration<double>(warmup));
    const Totals before = Now();
    const auto start = std::chrono::steady_clock::now();
    phase = 1;
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    phase = 2;
    const double elapsed = SecondsSince(start);
    const Totals after = Now();
    for (std::thread& t : pool) t.join();
    const uint64_t lookups = calls.load() * per_call;
    fmt::print(
        "{{\"system\":\"{}\",\"advice\":\"{}\",\"dist\":\"{}\",\"op\":\"{}\","
        "\"batch\":{},\"threads\":{},\"keys\":{},\"table_bytes\":{},"
        "\"lookups\":{},\"seconds\":{:.3f},\"ops_per_s\":{:.1f},"
        "\"p50_us\":{:.1f},\"p99_us\":{:.1f},\"max_us\":{:.1f},"
        "\"errors\":{},\"major_faults\":{},\"read_bytes\":{},"
        "\"block_cache\":{},\"mapped_index\":{}}}\n",
        system, system == "rocksdb" ? "-" : advice, dist, op, per_call, threads,
        keys, table_bytes, lookups, elapsed, lookups / elapsed,
        latency.Quantile(0.5) / 1e3, latency.Quantile(0.99) / 1e3,
        latency.Max() / 1e3, errors.load(),
        after.major_faults - before.major_faults,
        after.read_bytes - before.read_bytes,
        system == "rocksdb" ? cache_bytes : 0,
        system == "roost-block" && mapped_index);
    return errors.load() == 0 ? 0 : 1;
  } catch (const SystemFailure& e) {
    std::fprintf(stderr, "cold_bench: %s\n", e.what());
    return 1;
  }
}

}  // namespace
}  // namespace roost::bench

int main(int argc, char** argv) { return roost::bench::Main(argc, argv); }
