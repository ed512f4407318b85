// clients_cpp_load: the C++ routing client (client/cluster_client.h) under
// the two loads of bench/clients_bench.sh, closed loop, on the pairs of
// bench/text_pairs.h:
//
//   --workload get       --in-flight single-key GetAsync calls outstanding,
//                        coalesced (ClusterClientOptions::coalesce_gets);
//                        each answer issues the next from its callback
//   --workload multiget  --in-flight callers, each one blocking MultiGet of
//                        --batch keys at a time
//
// Keys are drawn uniformly from the first --keys pairs; every answer is
// checked (a miss or a wrong value is an error). After --warmup seconds it
// measures for --duration seconds and prints the JSON line of
// bench/closed_loop.h ("qps" being calls/s, "concurrency" --in-flight).
//
//   clients_cpp_load --cluster cluster.json --table bench --keys 1000000
//       --workload get --in-flight 64

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/closed_loop.h"
#include "bench/text_pairs.h"
#include "client/cluster_client.h"
#include "client/cluster_layout.h"
#include "fmt/format.h"
#include "util/mutex_mode.h"

namespace {

using roost::bench::Clock;
using roost::bench::KeySchedule;
using roost::bench::LoadCounts;
using roost::bench::LoadFlags;
using roost::bench::Phase;
using roost::bench::TextKey;
using roost::bench::TextValue;
using roost::bench::Window;

uint64_t NanosSince(Clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start)
          .count());
}

// Checks key #i's answer; counts what is wrong.
bool Check(uint64_t i, bool found, std::string_view value, LoadCounts* counts) {
  if (!found) {
    counts->Miss(fmt::format("key #{} answered as absent", i));
    return false;
  }
  if (value != TextValue(TextKey(i))) {
    counts->BadValue(fmt::format("key #{} answered a wrong value", i));
    return false;
  }
  return true;
}

// --workload get: `in_flight` chains of GetAsync, each call's callback
// issuing the next until the window stops.
class GetChains {
 public:
  GetChains(const roost::ClusterClient& client, std::string table,
            const LoadFlags& flags, int in_flight, Window* window,
            LoadCounts* counts)
      : client_(client),
        table_(std::move(table)),
        flags_(flags),
        window_(*window),
        counts_(*counts),
        slots_(static_cast<size_t>(in_flight)) {
    for (size_t i = 0; i < slots_.size(); ++i) {
      slots_[i].schedule.emplace(flags.seed, i);
    }
  }

  void Start() {
    running_ = slots_.size();
    for (Slot& s : slots_) Issue(s);
  }

  // Waits until every chain has seen the stop phase.
  void Wait() {
    std::unique_lock lock(mu_);
    idle_.wait(lock, [&] { return running_ == 0; });
  }

 private:
  struct Slot {
    std::optional<KeySchedule> schedule;
    uint64_t number = 0;
    std::string key;
    Clock::time_point start;
    Phase phase = Phase::kWarmup;
  };

  void Issue(Slot& s) {
    s.number = s.schedule->Next(flags_.keys);
    s.key = TextKey(s.number);
    s.phase = window_.phase();
    s.start = Clock::now();
    client_.GetAsync(table_, s.key,
                     [this, &s](absl::StatusOr<roost::GetResult> r) {
                       Answered(s, std::move(r));
                     });
  }

  void Answered(Slot& s, absl::StatusOr<roost::GetResult> r) {
    if (!r.ok()) {
      counts_.RpcError(r.status().ToString());
    } else if (Check(s.number, r->found, r->value, &counts_)) {
      counts_.Done(s.phase, 1, NanosSince(s.start));
    }
    if (window_.phase() != Phase::kStop) return Issue(s);
    std::lock_guard lock(mu_);
    if (--running_ == 0) idle_.notify_all();
  }

  const roost::ClusterClient& client_;
  const std::string table_;
  const LoadFlags& flags_;
  const Window& window_;
  LoadCounts& counts_;
  std::vector<Slot> slots_;
  std::mutex mu_;
  std::condition_variable idle_;
  size_t running_ = 0;  // guarded by mu_
};

// --workload multiget: one caller's loop of blocking MultiGets.
void RunMultiGets(const roost::ClusterClient& client, const std::string& table,
                  const LoadFlags& flags, int index, const Window& window,
                  LoadCounts* counts) {
  KeySchedule schedule(flags.seed, static_cast<uint64_t>(index));
  std::vector<uint64_t> numbers(flags.batch);
  std::vector<std::string> keys(flags.batch);
  while (window.phase() != Phase::kStop) {
    for (size_t i = 0; i < keys.size(); ++i) {
      numbers[i] = schedule.Next(flags.keys);
      keys[i] = TextKey(numbers[i]);
    }
    const Phase phase = window.phase();
    const Clock::time_point start = Clock::now();
    auto r = client.MultiGet(table, std::span<const std::string>(keys));
    if (!r.ok()) {
      counts->RpcError(r.status().ToString());
      continue;
    }
    bool ok = true;
    for (size_t i = 0; i < keys.size() && ok; ++i) {
      ok = Check(numbers[i], r->results[i].found, r->results[i].value, counts);
    }
    if (ok) counts->Done(phase, keys.size(), NanosSince(start));
  }
}

}  // namespace

int main(int argc, char** argv) {
  roost::TurnOffMutexDeadlockDetection();
  LoadFlags flags;
  flags.batch = 100;
  std::string cluster;
  std::string table = "bench";
  std::string workload = "get";
  int in_flight = 64;
  CLI::App app{
      "clients_cpp_load: the C++ routing client under bench/clients_bench.sh's "
      "loads (coalesced GetAsync, or MultiGet), closed loop, every answer "
      "checked; one JSON line"};
  app.add_option("--cluster", cluster, "The cluster layout file")->required();
  app.add_option("--table", table, "The table")->capture_default_str();
  app.add_option("--workload", workload, "get or multiget")
      ->check(CLI::IsMember({"get", "multiget"}))
      ->capture_default_str();
  app.add_option("--batch", flags.batch, "Keys per MultiGet")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100000u));
  app.add_option("--in-flight", in_flight,
                 "Calls outstanding: GetAsync calls, or MultiGet callers")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  app.add_option("--keys", flags.keys,
                 "The table holds bench/text_pairs.h's first N pairs")
      ->required()
      ->check(CLI::Range(uint64_t{1}, roost::bench::kTextPairsMax));
  app.add_option("--timeout", flags.timeout, "Seconds a call may take")
      ->capture_default_str();
  roost::bench::AddWindowFlags(&app, &flags);
  CLI11_PARSE(app, argc, argv);
  flags.method = workload;
  if (workload == "get") flags.batch = 1;

  auto layout = roost::ReadClusterLayout(cluster);
  if (!layout.ok()) {
    fmt::print(stderr, "clients_cpp_load: {}\n", layout.status().ToString());
    return 2;
  }
  roost::ClusterClientOptions options;
  options.timeout_seconds = flags.timeout;
  options.coalesce_gets = true;
  auto created = roost::ClusterClient::Create(*std::move(layout), options);
  if (!created.ok()) {
    fmt::print(stderr, "clients_cpp_load: {}\n", created.status().ToString());
    return 2;
  }
  const std::unique_ptr<roost::ClusterClient> client = *std::move(created);

  LoadCounts counts;
  Window window(flags);
  window.Start(Clock::now());
  std::optional<GetChains> chains;
  std::vector<std::thread> callers;
  if (workload == "get") {
    chains.emplace(*client, table, flags, in_flight, &window, &counts);
    chains->Start();
  } else {
    for (int i = 0; i < in_flight; ++i) {
      callers.emplace_back(
          [&, i] { RunMultiGets(*client, table, flags, i, window, &counts); });
    }
  }
  for (;;) {
    const Clock::time_point now = Clock::now();
    if (window.Tick(now) == Phase::kStop) break;
    std::this_thread::sleep_until(
        std::min(window.phase_end(), now + std::chrono::milliseconds(100)));
  }
  if (chains) chains->Wait();
  for (std::thread& t : callers) t.join();
  return roost::bench::Finish(
      "clients_cpp_load", workload == "get" ? "Get" : "MultiGet",
      counts.Report(flags, 1, in_flight, window), counts.first_error());
}
