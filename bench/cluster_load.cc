// cluster_load: a closed-loop load of MultiGet through the routing client
// (ClusterClient, client/cluster_client.h) or, for comparison, through a
// plain stub to one server, on loopback (bench/cluster_bench.sh).
//
// --threads callers each keep one call in flight: a MultiGet of --batch keys
// drawn from the keys bench/gen_records.cc writes for --keys and --seed,
// through the router of --cluster FILE, or (--addr HOST:PORT) through one
// blocking stub per caller, the way a program without the router would
// call an unsharded server; both ask for MultiGet's packed answer. Every
// answer is checked (a miss or a wrong
// value is an error). After --warmup seconds it measures for --duration
// seconds and prints the JSON line of bench/closed_loop.h, with "method"
// "router" or "direct".
//
//   cluster_load --cluster cluster.json --table bench --keys 10000000
//   cluster_load --addr 127.0.0.1:7001 --table bench --keys 10000000

#include <grpcpp/grpcpp.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/closed_loop.h"
#include "bench/generated_pairs.h"
#include "client/cluster_client.h"
#include "client/cluster_layout.h"
#include "client/multiget_answer.h"
#include "fmt/format.h"
#include "roost/v1/lookup.grpc.pb.h"
#include "util/mutex_mode.h"

namespace {

using roost::bench::Clock;
using roost::bench::GeneratedPairs;
using roost::bench::KeySchedule;
using roost::bench::LoadCounts;
using roost::bench::LoadFlags;
using roost::bench::Phase;
using roost::bench::Window;

// One batch: the key numbers drawn and their keys' bytes.
struct Batch {
  std::vector<uint64_t> numbers;
  std::vector<std::string> keys;

  void Draw(KeySchedule* schedule, const GeneratedPairs& pairs, uint64_t n,
            uint32_t size) {
    numbers.resize(size);
    keys.resize(size);
    for (uint32_t i = 0; i < size; ++i) {
      numbers[i] = schedule->Next(n);
      const uint64_t k = pairs.Key(numbers[i]);
      keys[i].assign(reinterpret_cast<const char*>(&k), sizeof(k));
    }
  }
};

// Checks one answer against the generated value; counts what is wrong.
bool Check(const GeneratedPairs& pairs, uint64_t number, bool found,
           std::string_view value, LoadCounts* counts) {
  if (!found) {
    counts->Miss(fmt::format("key #{} answered as absent", number));
    return false;
  }
  const uint64_t want = GeneratedPairs::ValueOf(pairs.Key(number));
  if (value.size() != sizeof(want) ||
      std::memcmp(value.data(), &want, sizeof(want)) != 0) {
    counts->BadValue(fmt::format("key #{} answered a wrong value", number));
    return false;
  }
  return true;
}

// Calls one batch; true when it was answered right.
using CallFn = std::function<bool(const Batch&)>;

void RunCaller(int index, const LoadFlags& flags, const Window& window,
               const CallFn& call) {
  KeySchedule schedule(flags.seed, index);
  GeneratedPairs pairs(flags.seed);
  Batch batch;
  while (window.phase() != Phase::kStop) {
    batch.Draw(&schedule, pairs, flags.keys, flags.batch);
    (void)call(batch);
  }
}

}  // namespace

int main(int argc, char** argv) {
  roost::TurnOffMutexDeadlockDetection();
  LoadFlags flags;
  flags.method = "multiget";
  flags.batch = 1000;
  std::string cluster;
  std::string table = "bench";
  int threads = 4;
  CLI::App app{
      "cluster_load: MultiGet through the routing client (--cluster) or "
      "one plain stub (--addr), closed loop, one JSON line"};
  auto* cluster_opt =
      app.add_option("--cluster", cluster, "The cluster layout file (router)");
  app.add_option("--addr", flags.addr, "One server's HOST:PORT (direct)")
      ->excludes(cluster_opt);
  app.add_option("--table", table, "The table")->capture_default_str();
  app.add_option("--batch", flags.batch, "Keys per MultiGet")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100000u));
  app.add_option("--keys", flags.keys, "The table holds gen_records' N keys")
      ->required()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  app.add_option("--threads", threads, "Callers, each one call in flight")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--timeout", flags.timeout, "Seconds a call may take")
      ->capture_default_str();
  roost::bench::AddWindowFlags(&app, &flags);
  CLI11_PARSE(app, argc, argv);
  if (cluster.empty() == flags.addr.empty()) {
    fmt::print(stderr, "cluster_load: give --cluster FILE or --addr ADDR\n");
    return 2;
  }

  GeneratedPairs pairs(flags.seed);
  LoadCounts counts;
  Window window(flags);
  CallFn call;
  std::unique_ptr<roost::ClusterClient> client;
  std::shared_ptr<grpc::Channel> channel;
  if (!cluster.empty()) {
    flags.method = "router";
    auto layout = roost::ReadClusterLayout(cluster);
    if (!layout.ok()) {
      fmt::print(stderr, "cluster_load: {}\n", layout.status().ToString());
      return 2;
    }
    roost::ClusterClientOptions options;
    options.timeout_seconds = flags.timeout;
    auto created = roost::ClusterClient::Create(*std::move(layout), options);
    if (!created.ok()) {
      fmt::print(stderr, "cluster_load: {}\n", created.status().ToString());
      return 2;
    }
    client = *std::move(created);
    call = [&](const Batch& batch) {
      const Clock::time_point start = Clock::now();
      const Phase phase = window.phase();
      auto r = client->MultiGet(table, batch.keys);
      if (!r.ok()) {
        counts.RpcError(r.status().ToString());
        return false;
      }
      for (size_t i = 0; i < batch.keys.size(); ++i) {
        if (!Check(pairs, batch.numbers[i], r->results[i].found,
                   r->results[i].value, &counts)) {
          return false;
        }
      }
      counts.Done(phase, batch.keys.size(),
                  std::chrono::duration_cast<std::chrono::nanoseconds>(
                      Clock::now() - start)
                      .count());
      return true;
    };
  } else {
    flags.method = "direct";
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    channel = grpc::CreateCustomChannel(
        flags.addr, grpc::InsecureChannelCredentials(), args);
    auto stub = roost::v1::Lookup::NewStub(channel);
    call = [&, stub = std::shared_ptr<roost::v1::Lookup::Stub>(
                   std::move(stub))](const Batch& batch) {
      const Clock::time_point start = Clock::now();
      const Phase phase = window.phase();
      // The packed answer, as the router asks for it, read the same way:
      // what is compared is the router's own work.
      roost::v1::MultiGetRequest request;
      request.set_table(table);
      request.set_packed(true);
      for (const std::string& k : batch.keys) request.add_keys(k);
      roost::v1::MultiGetResponse response;
      grpc::ClientContext context;
      context.set_deadline(
          std::chrono::system_clock::now() +
          std::chrono::milliseconds(static_cast<int64_t>(flags.timeout * 1e3)));
      const grpc::Status s = stub->MultiGet(&context, request, &response);
      if (!s.ok()) {
        counts.RpcError(s.error_message());
        return false;
      }
      bool ok = true;
      const absl::Status read = roost::ReadMultiGetAnswer(
          response, batch.keys.size(),
          [&](size_t i, bool found, std::string_view value) {
            ok = ok && Check(pairs, batch.numbers[i], found, value, &counts);
          });
      if (!read.ok()) {
        counts.RpcError(std::string(read.message()));
        return false;
      }
      if (!ok) return false;
      counts.Done(phase, batch.keys.size(),
                  std::chrono::duration_cast<std::chrono::nanoseconds>(
                      Clock::now() - start)
                      .count());
      return true;
    };
  }

  window.Start(Clock::now());
  std::vector<std::thread> callers;
  for (int i = 0; i < threads; ++i) {
    callers.emplace_back([&, i] { RunCaller(i, flags, window, call); });
  }
  for (;;) {
    const Clock::time_point now = Clock::now();
    if (window.Tick(now) == Phase::kStop) break;
    std::this_thread::sleep_until(
        std::min(window.phase_end(), now + std::chrono::milliseconds(100)));
  }
  for (std::thread& t : callers) t.join();
  return roost::bench::Finish("cluster_load", "MultiGet",
                              counts.Report(flags, 1, threads, window),
                              counts.first_error());
}
