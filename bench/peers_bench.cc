// peers_bench: in-process, single-thread point lookups in roost's tables and
// in its peers' on the same data (bench/suite_data.h), for bench/run.sh.
//
// For each system named in --systems, in turn: build its table from the
// --keys pairs of --dataset under --dir, open it for reading, look up
// --probes keys (hits: random keys of the set; misses: keys not in it) once
// to check every answer against the data set, then time --repeats passes
// over the same probes and keep the median. Every timed pass must find
// exactly the keys and the value bytes (a digest of each value's length and
// first 8 bytes) that the checking pass found, so that no system is timed
// doing anything but the right lookups. The table's files are deleted before
// the next system is built, so only one is in memory at a time.
//
// Systems and the configurations each is measured in:
//   roost-cuckoo   roost's cuckoo table, mapped (mmap) and copied into huge
//                  pages; Get and MultiGet
//   roost-block    roost's block table: index search auto / binary /
//                  interpolation with the data-block hash index, auto without
//                  it, and auto with snappy; Get and MultiGet
//   rocksdb-cuckoo RocksDB's CuckooTable (fixed-width keys and values only)
//   rocksdb-plain  RocksDB's PlainTable, hashed on an 8-byte prefix
//   rocksdb-block  RocksDB's block-based table, data blocks searched by binary
//                  search or binary + hash index, the block cache holding
//                  every block
//   tinycdb        tinycdb's constant database (files below 4 GiB)
//   ceiling        independent and dependent random 64-byte reads over an
//                  array the size of roost's cuckoo table, with and without
//                  huge pages
// Every RocksDB table is read through a DB opened read-only (DB::Get,
// DB::MultiGet), as a server would.
//
// Output: one JSON line per measurement, appended to --out (or stdout):
//   {"dataset":"uniform","keys":N,"system":"roost cuckoo","config":"mmap",
//    "op":"get","batch":1,"probe":"hit","lookups":P,"ops_per_s":...,
//    "ns_per_lookup":...,"table_bytes":...,"bytes_per_key":...,
//    "build_s":...,"checked":P,"errors":0}
// and {"dataset":..,"keys":..,"system":..,"config":..,"skipped":"why"} for a
// system that cannot hold the data set (a file-size limit, fixed-width keys
// only). A system that fails to build, open or answer is reported on stderr
// and the next one runs; the exit status is then 1 (2 for bad usage).
//
//   peers_bench --dataset uniform --keys 10000000 --dir /tmp/peers
//       --systems roost-cuckoo,rocksdb-block --out lookup.jsonl

#include <cdb.h>
#include <fcntl.h>
#include <rocksdb/db.h>
#include <rocksdb/memtablerep.h>
#include <rocksdb/options.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#include <sys/mman.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "bench/suite_data.h"
#include "fmt/format.h"
#include "storage/block_table.h"
#include "storage/block_table_builder.h"
#include "storage/cuckoo_table.h"
#include "storage/cuckoo_table_builder.h"

namespace roost::bench {
namespace {

namespace fs = std::filesystem;

// A system that failed to build, open or answer: the run goes on with the
// next system, and exits 1 at the end.
class SystemFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void Die(const std::string& what) { throw SystemFailure(what); }

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

// The probe keys of one kind (hits or misses), laid out once, outside any
// timing.
struct Probes {
  std::vector<uint64_t> words;
  std::vector<std::string_view> keys;  // into `bytes`
  std::vector<char> bytes;
};

Probes MakeProbes(const SuiteData& data, size_t count, bool hits,
                  uint64_t seed) {
  Probes p;
  std::mt19937_64 rng(seed ^ (hits ? 0x68697473 : 0x6d6973736573));
  const uint64_t n = data.num_keys();
  p.words.resize(count);
  for (auto& w : p.words) w = data.Word(hits ? rng() % n : n + rng() % n);
  p.bytes.resize(count * SuiteData::kMaxKey);
  std::vector<size_t> lengths(count);
  size_t offset = 0;
  for (size_t i = 0; i < count; ++i) {
    lengths[i] = data.Key(p.words[i], p.bytes.data() + offset);
    offset += lengths[i];
  }
  p.keys.reserve(count);
  offset = 0;
  for (size_t i = 0; i < count; ++i) {
    p.keys.emplace_back(p.bytes.data() + offset, lengths[i]);
    offset += lengths[i];
  }
  return p;
}

// What a pass over the probes found: how many, and a digest of the values.
struct Outcome {
  uint64_t found = 0;
  uint64_t digest = 0;
  bool operator==(const Outcome&) const = default;
};

inline void Count(Outcome& o, std::string_view value) {
  uint64_t head = 0;
  std::memcpy(&head, value.data(), std::min<size_t>(value.size(), 8));
  ++o.found;
  o.digest += value.size() + head;
}

struct Settings {
  DataSet set = DataSet::kUniform;
  uint64_t keys = 0;
  size_t probes = 0;
  int repeats = 3;
  size_t batch = 100;
  fs::path dir;
  std::FILE* out = stdout;
};

// One system's measurements: checks, times and prints.
class Recorder {
 public:
  Recorder(const Settings& s, const SuiteData& data, const Probes& hits,
           const Probes& misses)
      : s_(s), data_(data), hits_(hits), misses_(misses) {}

  bool failed() const { return failed_; }
  void MarkFailed() { failed_ = true; }

  // Measures `get(key, sink)` (which calls sink(value) on a hit and returns
  // whether it hit) over hits and misses.
  template <typename Get>
  void Gets(const std::string& system, const std::string& config,
            uint64_t table_bytes, double build_s, Get&& get) {
    for (const bool hit : {true, false}) {
      const Probes& p = hit ? hits_ : misses_;
      auto pass = [&](auto&& on_value) {
        for (size_t i = 0; i < p.keys.size(); ++i) {
          get(p.keys[i], [&](std::string_view v) { on_value(i, v); });
        }
      };
      Run(system, config, "get", 1, hit, table_bytes, build_s, pass);
    }
  }

  // Measures `multiget(keys, sink)` (which calls sink(j, value) for each hit
  // keys[j]) in batches of --batch.
  template <typename MultiGet>
  void MultiGets(const std::string& system, const std::string& config,
                 uint64_t table_bytes, double build_s, MultiGet&& multiget) {
    for (const bool hit : {true, false}) {
      const Probes& p = hit ? hits_ : misses_;
      auto pass = [&](auto&& on_value) {
        const std::span<const std::string_view> all(p.keys);
        for (size_t i = 0; i + s_.batch <= all.size(); i += s_.batch) {
          multiget(all.subspan(i, s_.batch),
                   [&](size_t j, std::string_view v) { on_value(i + j, v); });
        }
      };
      Run(system, config, "multiget", s_.batch, hit, table_bytes, build_s,
          pass);
    }
  }

  // Prints a measurement taken elsewhere (the ceiling's reads).
  void Print(const std::string& system, const std::string& config,
             const char* op, const char* probe, size_t lookups, double seconds,
             uint64_t table_bytes) {
    PrintRow(system, config, op, 1, probe, lookups, seconds, table_bytes, 0,
             lookups, 0);
  }

  void Skip(const std::string& system, const std::string& config,
            const std::string& why) {
    std::fprintf(s_.out,
                 "{\"dataset\":\"%s\",\"keys\":%llu,\"system\":\"%s\","
                 "\"config\":\"%s\",\"skipped\":\"%s\"}\n",
                 DataSetName(s_.set), static_cast<unsigned long long>(s_.keys),
                 system.c_str(), config.c_str(), why.c_str());
    std::fflush(s_.out);
  }

 private:
  // One checking pass (every value compared with the data set's), then
  // --repeats timed passes, each of which must find what the check found.
  template <typename Pass>
  void Run(const std::string& system, const std::string& config, const char* op,
           size_t batch, bool hit, uint64_t table_bytes, double build_s,
           Pass&& pass) {
    const Probes& p = hit ? hits_ : misses_;
    const size_t lookups =
        batch == 1 ? p.keys.size() : p.keys.size() / batch * batch;
    Outcome checked;
    uint64_t errors = 0;
    std::string first_error;
    char want[SuiteData::kMaxValue];
    std::vector<uint8_t> seen(p.keys.size(), 0);
    pass([&](size_t i, std::string_view v) {
      Count(checked, v);
      seen[i] += 1;
      const size_t n = data_.Value(p.words[i], want);
      if (!hit || seen[i] > 1 || v != std::string_view(want, n)) {
        if (errors++ == 0) {
          first_error = fmt::format(
              "probe {}: {}", i, hit ? "wrong value" : "found a missing key");
        }
      }
    });
    if (hit && checked.found != lookups) {
      if (errors++ == 0) {
        first_error =
            fmt::format("found {} of {} keys", checked.found, lookups);
      }
    }
    std::vector<double> seconds;
    for (int r = 0; r < s_.repeats; ++r) {
      Outcome o;
      const auto start = std::chrono::steady_clock::now();
      pass([&o](size_t, std::string_view v) { Count(o, v); });
      seconds.push_back(SecondsSince(start));
      if (!(o == checked) && errors++ == 0) {
        first_error = "a timed pass found other values than the check";
      }
    }
    std::sort(seconds.begin(), seconds.end());
    if (errors > 0) {
      failed_ = true;
      std::fprintf(stderr, "peers_bench: %s %s %s %s: %llu errors; first: %s\n",
                   system.c_str(), config.c_str(), op, hit ? "hit" : "miss",
                   static_cast<unsigned long long>(errors),
                   first_error.c_str());
    }
    PrintRow(system, config, op, batch, hit ? "hit" : "miss", lookups,
             seconds[seconds.size() / 2], table_bytes, build_s,
             errors == 0 ? lookups : 0, errors);
  }

  void PrintRow(const std::string& system, const std::string& config,
                const char* op, size_t batch, const char* probe, size_t lookups,
                double seconds, uint64_t table_bytes, double build_s,
                size_t checked, uint64_t errors) {
    fmt::print(s_.out,
               "{{\"dataset\":\"{}\",\"keys\":{},\"system\":\"{}\","
               "\"config\":\"{}\",\"op\":\"{}\",\"batch\":{},\"probe\":\"{}\","
               "\"lookups\":{},\"ops_per_s\":{:.1f},\"ns_per_lookup\":{:.2f},"
               "\"table_bytes\":{},\"bytes_per_key\":{:.2f},\"build_s\":{:.3f},"
               "\"checked\":{},\"errors\":{}}}\n",
               DataSetName(s_.set), s_.keys, system, config, op, batch, probe,
               lookups, lookups / seconds, seconds * 1e9 / lookups, table_bytes,
               static_cast<double>(table_bytes) / s_.keys, build_s, checked,
               errors);
    std::fflush(s_.out);
    std::fprintf(stderr, "  %-20s %-28s %-8s %-4s %8.2f M/s\n", system.c_str(),
                 config.c_str(), op, probe, lookups / seconds / 1e6);
  }

  const Settings& s_;
  const SuiteData& data_;
  const Probes& hits_;
  const Probes& misses_;
  bool failed_ = false;
};

// Calls add(key, value) for every pair, in record order or sorted.
template <typename Add>
void ForEachPair(const SuiteData& data, bool sorted, Add&& add) {
  char key[SuiteData::kMaxKey];
  char value[SuiteData::kMaxValue];
  auto emit = [&](uint64_t w) {
    add(std::string_view(key, data.Key(w, key)),
        std::string_view(value, data.Value(w, value)));
  };
  if (!sorted) {
    for (uint64_t i = 0; i < data.num_keys(); ++i) emit(data.Word(i));
    return;
  }
  std::vector<uint64_t> order(data.num_keys());
  for (uint64_t i = 0; i < order.size(); ++i) {
    order[i] = data.SortWord(data.Word(i));
  }
  std::sort(order.begin(), order.end());
  for (const uint64_t s : order) emit(data.SortWord(s));  // its own inverse
}

uint64_t BytesUnder(const fs::path& path) {
  if (fs::is_regular_file(path)) return fs::file_size(path);
  uint64_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(path)) {
    if (e.is_regular_file() && e.path().extension() == ".sst") {
      total += e.file_size();
    }
  }
  return total;
}

// --- roost ------------------------------------------------------------------

uint64_t RoostCuckoo(const Settings& s, const SuiteData& data, Recorder& rec) {
  const std::string path = (s.dir / "roost-cuckoo.sst").string();
  const auto start = std::chrono::steady_clock::now();
  auto builder = CuckooTableBuilder::Create(path, {});
  if (!builder.ok()) Die("roost cuckoo: " + builder.status().ToString());
  ForEachPair(data, false, [&](std::string_view k, std::string_view v) {
    if (!(*builder)->Add(k, v).ok()) Die("roost cuckoo: Add failed");
  });
  auto report = (*builder)->Finish();
  if (!report.ok()) Die("roost cuckoo: " + report.status().ToString());
  const double build_s = SecondsSince(start);
  const uint64_t bytes = report->file_size;
  for (const LoadMode mode : {LoadMode::kMmap, LoadMode::kAnonymousHugePages}) {
    CuckooReadOptions options;
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

// --- RocksDB ----------------------------------------------------------------

rocksdb::Slice ToSlice(std::string_view s) { return {s.data(), s.size()}; }

void CheckOk(const rocksdb::Status& st, const std::string& what) {
  if (!st.ok()) Die(what + ": " + st.ToString());
}

// DB::Open and DB::OpenForReadOnly into a unique_ptr.
std::unique_ptr<rocksdb::DB> OpenDb(const rocksdb::Options& options,
                                    const std::string& dir, bool read_only,
                                    const std::string& name) {
  rocksdb::DB* db = nullptr;
  CheckOk(read_only ? rocksdb::DB::OpenForReadOnly(options, dir, &db)
                    : rocksdb::DB::Open(options, dir, &db),
          name + " open");
  return std::unique_ptr<rocksdb::DB>(db);
}

rocksdb::Options BaseRocksOptions() {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.disable_auto_compactions = true;
  options.max_open_files = -1;
  options.compression = rocksdb::kNoCompression;
  options.bottommost_compression = rocksdb::kNoCompression;
  return options;
}

// Writes every pair into one memtable and flushes it: the path RocksDB's
// CuckooTable and PlainTable builders are written for.
void FlushBuild(const SuiteData& data, rocksdb::Options options,
                const std::string& dir, const std::string& name) {
  options.write_buffer_size = size_t{64} << 30;  // one memtable, one SST
  options.memtable_factory = std::make_shared<rocksdb::VectorRepFactory>();
  options.allow_concurrent_memtable_write = false;
  std::unique_ptr<rocksdb::DB> db = OpenDb(options, dir, false, name);
  rocksdb::WriteOptions wo;
  wo.disableWAL = true;
  rocksdb::WriteBatch batch;
  ForEachPair(data, false, [&](std::string_view k, std::string_view v) {
    CheckOk(batch.Put(ToSlice(k), ToSlice(v)), name + " put");
    if (batch.Count() == 1000) {
      CheckOk(db->Write(wo, &batch), name + " write");
      batch.Clear();
    }
  });
  CheckOk(db->Write(wo, &batch), name + " write");
  CheckOk(db->Flush(rocksdb::FlushOptions()), name + " flush");
  CheckOk(db->Close(), name + " close");
}

// Writes the sorted pairs with SstFileWriter and ingests the file.
void IngestBuild(const SuiteData& data, const rocksdb::Options& options,
                 const std::string& dir, const std::string& name) {
  const std::string sst = dir + ".sst";
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), options);
  CheckOk(writer.Open(sst), name + " sst open");
  ForEachPair(data, true, [&](std::string_view k, std::string_view v) {
    CheckOk(writer.Put(ToSlice(k), ToSlice(v)), name + " sst put");
  });
  CheckOk(writer.Finish(), name + " sst finish");
  std::unique_ptr<rocksdb::DB> db = OpenDb(options, dir, false, name);
  rocksdb::IngestExternalFileOptions ingest;
  ingest.move_files = true;
  CheckOk(db->IngestExternalFile({sst}, ingest), name + " ingest");
  CheckOk(db->Close(), name + " close");
}

void MeasureRocks(const Settings& s, Recorder& rec, const std::string& system,
                  const std::string& config, const rocksdb::Options& options,
                  const std::string& dir, double build_s, bool warm_scan) {
  std::unique_ptr<rocksdb::DB> db = OpenDb(options, dir, true, system);
  if (warm_scan) {  // fills the block cache with every block
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator({}));
    uint64_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
    CheckOk(it->status(), system + " scan");
    if (n != s.keys) Die(fmt::format("{}: scan saw {} keys", system, n));
  }
  const uint64_t bytes = BytesUnder(dir);
  const rocksdb::ReadOptions ro;
  rocksdb::ColumnFamilyHandle* cf = db->DefaultColumnFamily();
  rocksdb::PinnableSlice value;
  rec.Gets(system, config, bytes, build_s,
           [&](std::string_view key, auto&& sink) {
             value.Reset();
             const rocksdb::Status st = db->Get(ro, cf, ToSlice(key), &value);
             if (st.IsNotFound()) return false;
             CheckOk(st, system + " get");
             sink(std::string_view(value.data(), value.size()));
             return true;
           });
  std::vector<rocksdb::Slice> slices(s.batch);
  std::vector<rocksdb::PinnableSlice> values(s.batch);
  std::vector<rocksdb::Status> statuses(s.batch);
  rec.MultiGets(system, config, bytes, build_s,
                [&](std::span<const std::string_view> keys, auto&& sink) {
                  for (size_t j = 0; j < keys.size(); ++j) {
                    slices[j] = ToSlice(keys[j]);
                    values[j].Reset();
                  }
                  db->MultiGet(ro, cf, keys.size(), slices.data(),
                               values.data(), statuses.data());
                  for (size_t j = 0; j < keys.size(); ++j) {
                    if (statuses[j].IsNotFound()) continue;
                    CheckOk(statuses[j], system + " multiget");
                    sink(j,
                         std::string_view(values[j].data(), values[j].size()));
                  }
                });
}

void RocksCuckoo(const Settings& s, const SuiteData& data, Recorder& rec) {
  const char* system = "RocksDB CuckooTable";
  if (!data.fixed_width()) {
    rec.Skip(system, "default",
             "CuckooTable takes only fixed-size keys and values");
    return;
  }
  rocksdb::Options options = BaseRocksOptions();
  options.allow_mmap_reads = true;  // CuckooTable requires it
  options.table_factory.reset(
      rocksdb::NewCuckooTableFactory(rocksdb::CuckooTableOptions()));
  const std::string dir = (s.dir / "rocksdb-cuckoo").string();
  const auto start = std::chrono::steady_clock::now();
  FlushBuild(data, options, dir, system);
  MeasureRocks(s, rec, system, "default", options, dir, SecondsSince(start),
               false);
  rocksdb::DestroyDB(dir, options);
}

void RocksPlain(const Settings& s, const SuiteData& data, Recorder& rec) {
  const char* system = "RocksDB PlainTable";
  // A record holds the key, 8 bytes of sequence and type, two lengths and
  // the value; the reader refuses files of 2 GiB or more.
  const uint64_t avg_pair = data.fixed_width() ? 16 : 25 + 110;
  if (s.keys * (avg_pair + 9) >= (uint64_t{1} << 31)) {
    rec.Skip(system, "prefix hash",
             "the file would pass PlainTable's 2 GiB limit");
    return;
  }
  rocksdb::Options options = BaseRocksOptions();
  options.allow_mmap_reads = true;  // PlainTable requires it
  // Every key's first 8 bytes are distinct: the prefix hash finds one key.
  options.prefix_extractor.reset(rocksdb::NewFixedPrefixTransform(8));
  rocksdb::PlainTableOptions plain;  // bloom 10 bits/key, hash ratio 0.75
  if (data.fixed_width()) plain.user_key_len = 8;
  options.table_factory.reset(rocksdb::NewPlainTableFactory(plain));
  const std::string dir = (s.dir / "rocksdb-plain").string();
  const auto start = std::chrono::steady_clock::now();
  FlushBuild(data, options, dir, system);
  MeasureRocks(s, rec, system, "prefix hash", options, dir, SecondsSince(start),
               false);
  rocksdb::DestroyDB(dir, options);
}

void RocksBlock(const Settings& s, const SuiteData& data, Recorder& rec) {
  const char* system = "RocksDB block-based";
  for (const bool hash : {false, true}) {
    rocksdb::BlockBasedTableOptions table;
    table.block_size = 4096;
    table.data_block_index_type =
        hash ? rocksdb::BlockBasedTableOptions::kDataBlockBinaryAndHash
             : rocksdb::BlockBasedTableOptions::kDataBlockBinarySearch;
    table.data_block_hash_table_util_ratio = 0.75;
    // Room for every block: the pairs, with their per-entry overhead.
    const uint64_t raw =
        s.keys *
        (data.fixed_width() ? 16 : SuiteData::kMaxKey + SuiteData::kMaxValue);
    table.block_cache = rocksdb::NewLRUCache(raw * 2 + (64 << 20));
    rocksdb::Options options = BaseRocksOptions();
    options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
    const std::string dir =
        (s.dir / (hash ? "rocksdb-block-hash" : "rocksdb-block")).string();
    const auto start = std::chrono::steady_clock::now();
    IngestBuild(data, options, dir, system);
    MeasureRocks(s, rec, system, hash ? "binary and hash" : "binary", options,
                 dir, SecondsSince(start), true);
    rocksdb::DestroyDB(dir, options);
  }
}

// --- tinycdb ----------------------------------------------------------------

void TinyCdb(const Settings& s, const SuiteData& data, Recorder& rec) {
  const char* system = "tinycdb";
  // 24 bytes of record and hash-table overhead per pair, plus the pairs.
  const uint64_t avg_pair = data.fixed_width() ? 16 : 25 + 110;
  if (s.keys * (avg_pair + 24) + 2048 >= (uint64_t{1} << 32)) {
    rec.Skip(system, "default", "the file would pass cdb's 4 GiB limit");
    return;
  }
  const std::string path = (s.dir / "tinycdb.cdb").string();
  const auto start = std::chrono::steady_clock::now();
  {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) Die(path + ": cannot create");
    struct cdb_make make;
    if (cdb_make_start(&make, fd) != 0) Die("tinycdb: cdb_make_start");
    ForEachPair(data, false, [&](std::string_view k, std::string_view v) {
      if (cdb_make_add(&make, k.data(), k.size(), v.data(), v.size()) != 0) {
        Die("tinycdb: cdb_make_add");
      }
    });
    if (cdb_make_finish(&make) != 0) Die("tinycdb: cdb_make_finish");
    ::close(fd);
  }
  const double build_s = SecondsSince(start);
  const int fd = ::open(path.c_str(), O_RDONLY);
  struct cdb db;
  if (fd < 0 || cdb_init(&db, fd) != 0) Die("tinycdb: cannot open " + path);
  // Read every page once, as roost's and RocksDB's opens do.
  uint64_t sum = 0;
  for (unsigned pos = 0; pos + 8 <= db.cdb_fsize; pos += 4096) {
    sum += *static_cast<const unsigned char*>(cdb_get(&db, 1, pos));
  }
  if (sum == 0xffffffffffffffffULL) std::fprintf(stderr, " ");
  rec.Gets(system, "default", fs::file_size(path), build_s,
           [&db](std::string_view key, auto&& sink) {
             if (cdb_find(&db, key.data(), key.size()) <= 0) return false;
             sink(std::string_view(static_cast<const char*>(cdb_getdata(&db)),
                                   cdb_datalen(&db)));
             return true;
           });
  cdb_free(&db);
  ::close(fd);
  fs::remove(path);
}

// --- the machine's ceiling --------------------------------------------------

void Ceiling(const Settings& s, uint64_t bytes, Recorder& rec) {
  const size_t lines = std::max<size_t>(bytes / 64, 2);
  const size_t size = lines * 64;
  for (const bool huge : {false, true}) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) Die("ceiling: mmap failed");
    madvise(p, size, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    char* base = static_cast<char*>(p);
    // A random cyclic permutation of the lines: line perm[i] holds the
    // number of line perm[i + 1].
    std::mt19937_64 rng(7);
    std::vector<uint64_t> perm(lines);
    for (size_t i = 0; i < lines; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    for (size_t i = 0; i < lines; ++i) {
      std::memcpy(base + perm[i] * 64, &perm[(i + 1) % lines], 8);
    }
    const size_t reads = s.probes;
    std::vector<uint64_t> order(reads);
    for (auto& o : order) o = rng() % lines;
    const std::string suffix = huge ? ", huge pages" : "";
    std::vector<double> independent, dependent;
    uint64_t sink = 0;
    for (int r = 0; r < s.repeats; ++r) {
      auto start = std::chrono::steady_clock::now();
      for (size_t i = 0; i < reads; ++i) {
        uint64_t v;
        std::memcpy(&v, base + order[i] * 64, 8);
        sink += v;
      }
      independent.push_back(SecondsSince(start));
      uint64_t line = perm[0];
      start = std::chrono::steady_clock::now();
      for (size_t i = 0; i < reads; ++i)
        std::memcpy(&line, base + line * 64, 8);
      dependent.push_back(SecondsSince(start));
      sink += line;
    }
    if (sink == 1) std::fprintf(stderr, " ");  // keeps the reads
    std::sort(independent.begin(), independent.end());
    std::sort(dependent.begin(), dependent.end());
    rec.Print("ceiling", "independent 64-byte reads" + suffix, "read", "-",
              reads, independent[independent.size() / 2], size);
    rec.Print("ceiling", "dependent 64-byte reads" + suffix, "read", "-", reads,
              dependent[dependent.size() / 2], size);
    munmap(p, size);
  }
}

const char* const kSystems[] = {
    "roost-cuckoo",  "roost-block", "rocksdb-cuckoo", "rocksdb-plain",
    "rocksdb-block", "tinycdb",     "ceiling"};

int Main(int argc, char** argv) {
  CLI::App app{
      "In-process, single-thread lookups in roost's tables and its peers' on "
      "the same data; one JSON line per measurement (bench/run.sh)."};
  std::string dataset = "uniform";
  std::string systems = "all";
  std::string dir;
  std::string out;
  uint64_t seed = 20261122;
  Settings s;
  s.probes = 2'000'000;
  app.add_option("--dataset", dataset,
                 "uniform (8-byte keys and values) or "
                 "variable (keys 10-40, values 20-200)")
      ->capture_default_str();
  app.add_option("--keys", s.keys, "Pairs in the table")->required();
  app.add_option("--probes", s.probes, "Hits (and as many misses) per pass")
      ->capture_default_str();
  app.add_option("--repeats", s.repeats, "Timed passes; the median is kept")
      ->capture_default_str();
  app.add_option("--batch", s.batch, "Keys per MultiGet")
      ->capture_default_str();
  app.add_option("--seed", seed, "Data set seed")->capture_default_str();
  app.add_option("--dir", dir, "Scratch directory for the tables")->required();
  app.add_option("--systems", systems,
                 "Comma-separated: roost-cuckoo, roost-block, rocksdb-cuckoo, "
                 "rocksdb-plain, rocksdb-block, tinycdb, ceiling; or all")
      ->capture_default_str();
  app.add_option("--out", out, "Append the JSON lines here (default stdout)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  auto usage_error = [](const std::string& what) {
    std::fprintf(stderr, "peers_bench: %s\n", what.c_str());
    return 2;
  };
  const auto set = ParseDataSet(dataset);
  if (!set) return usage_error("--dataset must be uniform or variable");
  s.set = *set;
  if (s.keys == 0) return usage_error("--keys must be positive");
  if (s.probes == 0 || s.repeats <= 0 || s.batch == 0) {
    return usage_error("--probes, --repeats and --batch must be positive");
  }
  std::vector<std::string> chosen;
  if (systems == "all") {
    chosen.assign(std::begin(kSystems), std::end(kSystems));
  } else {
    for (size_t pos = 0; pos <= systems.size();) {
      size_t comma = systems.find(',', pos);
      if (comma == std::string::npos) comma = systems.size();
      const std::string name = systems.substr(pos, comma - pos);
      if (std::find(std::begin(kSystems), std::end(kSystems), name) ==
          std::end(kSystems)) {
        return usage_error("unknown system '" + name + "' in --systems");
      }
      chosen.push_back(name);
      pos = comma + 1;
    }
  }
  auto wants = [&](const char* name) {
    return std::find(chosen.begin(), chosen.end(), name) != chosen.end();
  };
  s.dir = dir;
  std::error_code ec;
  fs::create_directories(s.dir, ec);
  if (ec) return usage_error(dir + ": " + ec.message());
  if (!out.empty()) {
    s.out = std::fopen(out.c_str(), "a");
    if (s.out == nullptr) return usage_error(out + ": cannot open");
  }

  const SuiteData data(s.set, s.keys, seed);
  const Probes hits = MakeProbes(data, s.probes, true, seed);
  const Probes misses = MakeProbes(data, s.probes, false, seed);
  Recorder rec(s, data, hits, misses);
  uint64_t cuckoo_bytes = 0;
  // Runs one system; a failure is reported and the next system runs.
  auto run = [&](const char* name, auto&& measure) {
    if (!wants(name)) return;
    try {
      measure();
    } catch (const SystemFailure& e) {
      std::fprintf(stderr, "peers_bench: %s failed: %s\n", name, e.what());
      rec.MarkFailed();
      fs::remove_all(s.dir);
      fs::create_directories(s.dir);
    }
  };
  run("roost-cuckoo", [&] { cuckoo_bytes = RoostCuckoo(s, data, rec); });
  run("roost-block", [&] { RoostBlock(s, data, rec); });
  run("rocksdb-cuckoo", [&] { RocksCuckoo(s, data, rec); });
  run("rocksdb-plain", [&] { RocksPlain(s, data, rec); });
  run("rocksdb-block", [&] { RocksBlock(s, data, rec); });
  run("tinycdb", [&] { TinyCdb(s, data, rec); });
  run("ceiling", [&] {
    if (cuckoo_bytes == 0) {  // the size roost's cuckoo table would have
      auto builder =
          CuckooTableBuilder::Create((s.dir / "size.sst").string(), {});
      if (!builder.ok()) Die("roost cuckoo: " + builder.status().ToString());
      ForEachPair(data, false, [&](std::string_view k, std::string_view v) {
        if (!(*builder)->Add(k, v).ok()) Die("roost cuckoo: Add failed");
      });
      auto report = (*builder)->Finish();
      if (!report.ok()) Die("roost cuckoo: " + report.status().ToString());
      cuckoo_bytes = report->file_size;
      fs::remove(s.dir / "size.sst");
    }
    Ceiling(s, cuckoo_bytes, rec);
  });
  if (s.out != stdout) std::fclose(s.out);
  return rec.failed() ? 1 : 0;
}

}  // namespace
}  // namespace roost::bench

int main(int argc, char** argv) { return roost::bench::Main(argc, argv); }
