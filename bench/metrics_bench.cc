// What counting costs per request, in-process: roost-server's per-thread
// sharded counters (server/metrics.h), against prometheus-cpp's own Counter
// and Histogram used the obvious way (one Increment and one Observe per
// lookup). Both record the same things for a request of N keys: started and
// handled RPCs, latency, keys per request, hits/misses and probes per
// lookup. Run with 1 and 2 threads, since the cost that matters is the
// contention between the server's threads.
//
//   build/release/bench/metrics_bench
#include <benchmark/benchmark.h>
#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <chrono>
#include <memory>

#include "server/metrics.h"

namespace {

// The lookups of a request: every 4th a miss, every 5th touching 2 blocks.
bool Found(int i) { return i % 4 != 0; }
int Probes(int i) { return i % 5 == 0 ? 2 : 1; }

roost::RpcMetrics& SharedRpcMetrics() {
  static roost::RpcMetrics metrics;
  return metrics;
}
roost::TableLookupMetrics& SharedTableMetrics() {
  static roost::TableLookupMetrics metrics;
  return metrics;
}

void BM_RoostShardedCounters(benchmark::State& state) {
  const int keys = static_cast<int>(state.range(0));
  roost::RpcMetrics& rpc = SharedRpcMetrics();
  roost::TableLookupMetrics& table = SharedTableMetrics();
  for (auto _ : state) {
    rpc.Started(roost::Method::kMultiGet);
    roost::LookupTally tally;
    tally.has_probes = true;
    for (int i = 0; i < keys; ++i) tally.Add(Found(i), Probes(i));
    table.Add(tally);
    rpc.RequestKeys(roost::Method::kMultiGet, keys);
    rpc.Handled(roost::Method::kMultiGet, grpc::StatusCode::OK,
                std::chrono::microseconds(120));
    benchmark::DoNotOptimize(tally);
  }
  state.SetItemsProcessed(state.iterations() * keys);
}

struct PrometheusMetrics {
  std::shared_ptr<prometheus::Registry> registry =
      std::make_shared<prometheus::Registry>();
  prometheus::Counter* started;
  prometheus::Counter* handled;
  prometheus::Histogram* latency;
  prometheus::Histogram* request_keys;
  prometheus::Counter* hits;
  prometheus::Counter* misses;
  prometheus::Histogram* probes;

  PrometheusMetrics() {
    using prometheus::BuildCounter;
    using prometheus::BuildHistogram;
    started = &BuildCounter()
                   .Name("grpc_server_started_total")
                   .Register(*registry)
                   .Add({{"grpc_method", "MultiGet"}});
    handled = &BuildCounter()
                   .Name("grpc_server_handled_total")
                   .Register(*registry)
                   .Add({{"grpc_method", "MultiGet"}, {"grpc_code", "OK"}});
    latency = &BuildHistogram()
                   .Name("grpc_server_handling_seconds")
                   .Register(*registry)
                   .Add({{"grpc_method", "MultiGet"}},
                        prometheus::Histogram::BucketBoundaries(
                            roost::kLatencyBounds.begin(),
                            roost::kLatencyBounds.end()));
    request_keys = &BuildHistogram()
                        .Name("roost_request_keys")
                        .Register(*registry)
                        .Add({{"grpc_method", "MultiGet"}},
                             prometheus::Histogram::BucketBoundaries(
                                 roost::kRequestKeyBounds.begin(),
                                 roost::kRequestKeyBounds.end()));
    auto& lookups =
        BuildCounter().Name("roost_lookups_total").Register(*registry);
    hits = &lookups.Add({{"table", "t"}, {"result", "hit"}});
    misses = &lookups.Add({{"table", "t"}, {"result", "miss"}});
    probes =
        &BuildHistogram()
             .Name("roost_lookup_probes")
             .Register(*registry)
             .Add({{"table", "t"}}, prometheus::Histogram::BucketBoundaries{
                                        1, 2, 3, 4, 5, 6, 7, 8});
  }
};

PrometheusMetrics& SharedPrometheusMetrics() {
  static PrometheusMetrics metrics;
  return metrics;
}

void BM_PrometheusCppPerLookup(benchmark::State& state) {
  const int keys = static_cast<int>(state.range(0));
  PrometheusMetrics& m = SharedPrometheusMetrics();
  for (auto _ : state) {
    m.started->Increment();
    for (int i = 0; i < keys; ++i) {
      (Found(i) ? m.hits : m.misses)->Increment();
      m.probes->Observe(Probes(i));
    }
    m.request_keys->Observe(keys);
    m.handled->Increment();
    m.latency->Observe(0.000120);
  }
  state.SetItemsProcessed(state.iterations() * keys);
}

BENCHMARK(BM_RoostShardedCounters)->Arg(1)->Arg(1000)->ThreadRange(1, 2);
BENCHMARK(BM_PrometheusCppPerLookup)->Arg(1)->Arg(1000)->ThreadRange(1, 2);

}  // namespace

BENCHMARK_MAIN();
