// One system of the suite (bench/peers_bench.cc) behind one interface: its
// name on --systems, and how it is measured. Each system's adapter is a file
// of bench/peers/; the driver knows only this header.
//
// A peer builds its table of the data set under settings.dir, opens it as
// its readers would, measures every configuration it has through the
// Recorder (which checks every answer before timing), and deletes its files
// before it returns, so that one table at a time is on disk and in memory.
// Failing to build, open or answer throws SystemFailure (Die); the driver
// reports it and runs the next peer.
//
// Example:
//   Suite suite{settings, data, rec};
//   for (const std::unique_ptr<Peer>& p : AllPeers()) p->Measure(suite);
#ifndef ROOST_BENCH_PEERS_PEER_H_
#define ROOST_BENCH_PEERS_PEER_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "bench/peers/recorder.h"
#include "bench/suite_data.h"

namespace roost::bench {

// A system that failed to build, open or answer: the run goes on with the
// next system, and exits 1 at the end.
class SystemFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void Die(const std::string& what) {
  throw SystemFailure(what);
}

// The bits a key of the filters compared: roost-load's default for roost's
// block table, and RocksDB's block-based table's Bloom filter beside it.
inline constexpr int kFilterBitsPerKey = 10;

// What every peer measures with.
struct Suite {
  const Settings& settings;
  const SuiteData& data;
  Recorder& rec;
  // The size of roost's cuckoo table of the data, once built (0 before):
  // the ceiling reads an array that large.
  uint64_t cuckoo_bytes = 0;
};

class Peer {
 public:
  virtual ~Peer() = default;
  // As --systems names it: "roost-cuckoo".
  virtual std::string_view name() const = 0;
  // Builds, checks and measures every configuration, then deletes the
  // files; throws SystemFailure.
  virtual void Measure(Suite& suite) const = 0;
};

// A peer that is one function of the settings, the data and the recorder.
class FunctionPeer final : public Peer {
 public:
  using Measurer = void (*)(const Settings&, const SuiteData&, Recorder&);
  FunctionPeer(std::string_view name, Measurer measure)
      : name_(name), measure_(measure) {}
  std::string_view name() const override { return name_; }
  void Measure(Suite& suite) const override {
    measure_(suite.settings, suite.data, suite.rec);
  }

 private:
  std::string_view name_;
  Measurer measure_;
};

// The peers, in the order they run: roost-cuckoo, roost-block,
// rocksdb-cuckoo, rocksdb-plain, rocksdb-block, rocksdb-block-bloom, tinycdb,
// ceiling.
std::vector<std::unique_ptr<Peer>> AllPeers();

std::unique_ptr<Peer> NewRoostCuckooPeer();      // peers/roost_cuckoo.cc
std::unique_ptr<Peer> NewRoostBlockPeer();       // peers/roost_block.cc
std::unique_ptr<Peer> NewRocksCuckooPeer();      // peers/rocksdb_cuckoo.cc
std::unique_ptr<Peer> NewRocksPlainPeer();       // peers/rocksdb_plain.cc
std::unique_ptr<Peer> NewRocksBlockPeer();       // peers/rocksdb_block.cc
std::unique_ptr<Peer> NewRocksBlockBloomPeer();  // peers/rocksdb_block.cc
std::unique_ptr<Peer> NewTinyCdbPeer();          // peers/tinycdb.cc
std::unique_ptr<Peer> NewCeilingPeer();          // peers/ceiling.cc

// Builds roost's cuckoo table of the data at `path`; its size in bytes.
uint64_t BuildRoostCuckoo(const SuiteData& data, const std::string& path);

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

}  // namespace roost::bench

#endif  // ROOST_BENCH_PEERS_PEER_H_
