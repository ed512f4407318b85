// Counters for the request path that take no lock, and the Prometheus
// collector that reads them when /metrics is scraped.
//
// prometheus-cpp's Counter::Increment is an atomic add on one shared cache
// line, and Histogram::Observe takes a mutex; on every lookup either would
// make the server's cores fight over one line. Here each thread adds to its
// own shard (a cache-line-aligned row of relaxed atomics), and a request
// first tallies its keys locally and adds once. A scrape sums the shards.
//
// Example:
//   ShardedCounters c(3);
//   c.Add(0, 1);            // on any thread, no lock
//   uint64_t total = c.Sum(0);
#ifndef ROOST_SERVER_METRICS_H_
#define ROOST_SERVER_METRICS_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "grpcpp/support/status.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace roost {

// `cells` counters, each split into per-thread shards.
class ShardedCounters {
 public:
  explicit ShardedCounters(size_t cells);
  ShardedCounters(const ShardedCounters&) = delete;
  ShardedCounters& operator=(const ShardedCounters&) = delete;

  void Add(size_t cell, uint64_t n) {
    Word(ShardIndex(), cell).fetch_add(n, std::memory_order_relaxed);
  }
  uint64_t Sum(size_t cell) const;
  size_t cells() const { return cells_; }

 private:
  static constexpr size_t kShards = 16;
  static constexpr size_t kWordsPerLine = 8;
  struct alignas(64) Line {
    std::atomic<uint64_t> words[kWordsPerLine];
  };
  std::atomic<uint64_t>& Word(size_t shard, size_t cell) const {
    return lines_[shard * lines_per_shard_ + cell / kWordsPerLine]
        .words[cell % kWordsPerLine];
  }
  static size_t ShardIndex();

  size_t cells_;
  size_t lines_per_shard_;
  std::unique_ptr<Line[]> lines_;
};

// Bucket bounds of the RPC latency histogram, in seconds.
inline constexpr std::array<double, 16> kLatencyBounds = {
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
    0.025,   0.05,   0.1,     0.25,   0.5,   1,      2.5,   5};
// Bucket bounds of keys per request.
inline constexpr std::array<double, 10> kRequestKeyBounds = {
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1000};
// Cuckoo blocks touched by one lookup are counted exactly up to this.
inline constexpr int kMaxProbes = 8;

// One RPC method's counters: started, handled by code, latency, (for
// lookups) keys per request and (for streams) messages received and sent.
enum class Method {
  kGet,
  kMultiGet,
  kListTables,
  kStreamMultiGet,
  kRollback,
  kUnpin,
  kHealthCheck,
  kHealthWatch,
  kScan,
  // The Redis front end's lookups (redis_front.h), labelled
  // grpc_service="redis".
  kRedisGet,
  kRedisMGet,
  kRedisExists
};
inline constexpr int kNumMethods = 12;

class RpcMetrics {
 public:
  RpcMetrics();
  void Started(Method m) { counters_.Add(Cell(m, kStarted), 1); }
  void Handled(Method m, grpc::StatusCode code,
               std::chrono::nanoseconds elapsed);
  void RequestKeys(Method m, uint64_t keys);
  // A streaming call's messages, as go-grpc-prometheus counts them: a
  // request read, and a response the transport took (OnWriteDone(true)). A
  // server stream's one request counts as received when the call starts.
  void MessageReceived(Method m) { counters_.Add(Cell(m, kReceived), 1); }
  void MessageSent(Method m) { counters_.Add(Cell(m, kSent), 1); }
  void Collect(std::vector<prometheus::MetricFamily>* out) const;

 private:
  static constexpr size_t kStarted = 0;
  static constexpr size_t kReceived = 1;
  static constexpr size_t kSent = 2;
  static constexpr size_t kHandled = 3;  // 17 codes
  static constexpr size_t kLatency = kHandled + 17;
  static constexpr size_t kLatencySum = kLatency + kLatencyBounds.size() + 1;
  static constexpr size_t kKeys = kLatencySum + 1;
  static constexpr size_t kKeysSum = kKeys + kRequestKeyBounds.size() + 1;
  static constexpr size_t kPerMethod = kKeysSum + 1;
  static size_t Cell(Method m, size_t field) {
    return static_cast<size_t>(m) * kPerMethod + field;
  }
  ShardedCounters counters_;
};

// A table's lookup counters (hits, misses, cuckoo probes per lookup). One
// request tallies into a LookupTally, then adds it here once.
struct LookupTally {
  uint64_t hits = 0;
  uint64_t misses = 0;
  std::array<uint64_t, kMaxProbes + 2> probes{};  // [kMaxProbes+1] is "more"
  bool has_probes = false;

  void Add(bool found, int blocks_touched) {
    (found ? hits : misses)++;
    probes[blocks_touched > kMaxProbes ? kMaxProbes + 1 : blocks_touched]++;
  }
};

class TableLookupMetrics {
 public:
  TableLookupMetrics() : counters_(kCells) {}
  void Add(const LookupTally& tally);
  uint64_t hits() const { return counters_.Sum(kHits); }
  uint64_t misses() const { return counters_.Sum(kMisses); }
  // Lookups that touched exactly `n` blocks (n > kMaxProbes: more).
  uint64_t probes(int n) const { return counters_.Sum(kProbes + n); }

 private:
  static constexpr size_t kHits = 0;
  static constexpr size_t kMisses = 1;
  static constexpr size_t kProbes = 2;
  static constexpr size_t kCells = kProbes + kMaxProbes + 2;
  ShardedCounters counters_;
};

// What /metrics shows: the RPC metrics, and whatever each of `sources`
// adds (the registry's per-table families, the listeners', ...), read at
// scrape time.
class MetricsCollector : public prometheus::Collectable {
 public:
  using Source = std::function<void(std::vector<prometheus::MetricFamily>*)>;
  MetricsCollector(const RpcMetrics* rpc, std::vector<Source> sources)
      : rpc_(rpc), sources_(std::move(sources)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const RpcMetrics* rpc_;
  std::vector<Source> sources_;
};

// Helpers for building families by hand.
prometheus::MetricFamily MakeFamily(std::string name, std::string help,
                                    prometheus::MetricType type);
prometheus::ClientMetric& AddMetric(
    prometheus::MetricFamily* family,
    std::vector<prometheus::ClientMetric::Label> labels);
// Appends to `out` a family of one unlabelled gauge or counter.
void AddScalar(std::vector<prometheus::MetricFamily>* out, std::string name,
               std::string help, prometheus::MetricType type, double value);
// Appends to `out` a counter family of a file's reloads by result: "ok"
// and "error".
void AddReloads(std::vector<prometheus::MetricFamily>* out, std::string name,
                std::string help, uint64_t ok, uint64_t failed);

}  // namespace roost

#endif  // ROOST_SERVER_METRICS_H_
