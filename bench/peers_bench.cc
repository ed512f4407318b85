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
//   roost-block    roost's block table: format 1.0 (no filter) with index
//                  search auto, binary and interpolation and the data-block
//                  hash index, auto without it, and auto with snappy; format
//                  2.0 with a filter of 10 bits a key, auto, binary and
//                  interpolation; Get and MultiGet
//   rocksdb-cuckoo RocksDB's CuckooTable (fixed-width keys and values only)
//   rocksdb-plain  RocksDB's PlainTable, hashed on an 8-byte prefix
//   rocksdb-block  RocksDB's block-based table, data blocks searched by binary
//                  search or binary + hash index, the block cache holding
//                  every block
//   rocksdb-block-bloom  the same with a full Bloom filter, 10 bits a key
//                  (roost-load's default for roost's filter)
//   tinycdb        tinycdb's constant database (files below 4 GiB)
//   ceiling        independent and dependent random 64-byte reads over an
//                  array the size of roost's cuckoo table, with and without
//                  huge pages
// Every RocksDB table is read through a DB opened read-only (DB::Get,
// DB::MultiGet), as a server would.
//
// Each system is an adapter of its own under bench/peers/ (roost_cuckoo.cc,
// roost_block.cc, rocksdb_cuckoo.cc, rocksdb_plain.cc, rocksdb_block.cc,
// tinycdb.cc, ceiling.cc) behind the Peer interface of bench/peers/peer.h;
// the checking and timing they all go through is bench/peers/recorder.h.
// --round N tags every line with "round":N; bench/run.sh runs the suite's
// main table sizes in three rounds, every other one --reverse, and the
// report takes each figure's median and each ratio's median and range.
// This file is the driver: the flags, the data set and probes, and the
// systems in turn.
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

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "bench/peers/peer.h"
#include "bench/peers/recorder.h"
#include "bench/suite_data.h"

namespace roost::bench {

// The order the peers run in.
std::vector<std::unique_ptr<Peer>> AllPeers() {
  std::vector<std::unique_ptr<Peer>> peers;
  peers.push_back(NewRoostCuckooPeer());
  peers.push_back(NewRoostBlockPeer());
  peers.push_back(NewRocksCuckooPeer());
  peers.push_back(NewRocksPlainPeer());
  peers.push_back(NewRocksBlockPeer());
  peers.push_back(NewRocksBlockBloomPeer());
  peers.push_back(NewTinyCdbPeer());
  peers.push_back(NewCeilingPeer());
  return peers;
}

namespace {

namespace fs = std::filesystem;

int Main(int argc, char** argv) {
  CLI::App app{
      "In-process, single-thread lookups in roost's tables and its peers' on "
      "the same data; one JSON line per measurement (bench/run.sh)."};
  std::string dataset = "uniform";
  std::string systems = "all";
  std::string dir;
  std::string out;
  uint64_t seed = kDefaultSeed;
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
                 "rocksdb-plain, rocksdb-block, rocksdb-block-bloom, tinycdb, "
                 "ceiling; or all")
      ->capture_default_str();
  app.add_option("--out", out, "Append the JSON lines here (default stdout)");
  app.add_option("--round", s.round,
                 "Tag each line with this run of the suite (\"round\":N), "
                 "for a report that takes the median of several")
      ->check(CLI::PositiveNumber);
  bool reverse = false;
  app.add_flag("--reverse", reverse,
               "Run the systems in reverse order (alternate it between "
               "rounds, so that no system always runs first)");
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
  const std::vector<std::unique_ptr<Peer>> peers = AllPeers();
  std::vector<std::string> chosen;
  for (const std::unique_ptr<Peer>& peer : peers) {
    if (systems == "all") chosen.emplace_back(peer->name());
  }
  for (size_t pos = 0; systems != "all" && pos <= systems.size();) {
    size_t comma = systems.find(',', pos);
    if (comma == std::string::npos) comma = systems.size();
    const std::string name = systems.substr(pos, comma - pos);
    if (std::none_of(peers.begin(), peers.end(),
                     [&](const auto& p) { return p->name() == name; })) {
      return usage_error("unknown system '" + name + "' in --systems");
    }
    chosen.push_back(name);
    pos = comma + 1;
  }
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
  Suite suite{s, data, rec};
  std::vector<const Peer*> run;
  for (const std::unique_ptr<Peer>& peer : peers) {
    if (std::find(chosen.begin(), chosen.end(), peer->name()) != chosen.end()) {
      run.push_back(peer.get());
    }
  }
  if (reverse) std::reverse(run.begin(), run.end());
  for (const Peer* peer : run) {
    // A failure is reported, and the next system runs.
    try {
      peer->Measure(suite);
    } catch (const SystemFailure& e) {
      std::fprintf(stderr, "peers_bench: %s failed: %s\n",
                   std::string(peer->name()).c_str(), e.what());
      rec.MarkFailed();
      fs::remove_all(s.dir);
      fs::create_directories(s.dir);
    }
  }
  if (s.out != stdout) std::fclose(s.out);
  return rec.failed() ? 1 : 0;
}

}  // namespace
}  // namespace roost::bench

int main(int argc, char** argv) { return roost::bench::Main(argc, argv); }
