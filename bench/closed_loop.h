// The closed loop that bench/server_load.cc (roost-server over gRPC) and
// bench/redis_load.cc (Redis through hiredis) both run, written once: the
// flags they share, the key schedule, the warm-up and the measured window,
// the counts, and the JSON line with the exit status. Each program keeps
// only its transport: it keeps a fixed number of requests in flight, and
// reports what each answer was.
//
// The window: --warmup seconds of load, then --duration seconds measured.
// Requests count (in `rpcs`, `keys` and the latency histogram) when they
// complete without error while the window is in kMeasure; errors count
// whenever they happen. The CPU of this process (and of --server-pid) is
// sampled at the window's edges.
//
// Example:
//   LoadFlags flags;
//   AddWindowFlags(&app, &flags);         // --duration, --warmup, ...
//   ... parse; CheckLoadFlags(&flags, "multiget", "Get") ...
//   Window window(flags);
//   LoadCounts counts;
//   KeySchedule schedule(flags.seed, caller_index);  // one per caller
//   window.Start(Clock::now());
//   ... issue requests for keys schedule.Next(n); on each answer,
//       counts.Miss(...) or counts.Done(window.phase(), keys, ns) ...
//   ... window.Tick(now) until it returns Phase::kStop ...
//   return Finish("server_load", "RPC", counts.Report(flags, 4, 64, window),
//                 counts.first_error());
#ifndef ROOST_BENCH_CLOSED_LOOP_H_
#define ROOST_BENCH_CLOSED_LOOP_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "bench/generated_pairs.h"
#include "bench/load_stats.h"

namespace CLI {
class App;
}

namespace roost::bench {

using Clock = std::chrono::steady_clock;

// The flags both load generators take, with their defaults. Each program
// binds --addr, --method, --batch, --keys and --timeout itself (their help
// speaks of its own server), AddWindowFlags binds the window's, and
// AddRateFlag (open_loop.h) --rate, in the programs that have an open loop.
struct LoadFlags {
  std::string addr;              // a loopback HOST:PORT
  std::string method = "get";    // "get", or the batched method's name
  uint32_t batch = 0;            // keys per request; 0: 1 for get, else 100
  double duration = 10;          // measured seconds
  double warmup = 2;             // seconds of load before measuring
  uint64_t keys = 0;             // requests draw keys 0 to keys - 1
  uint64_t seed = kDefaultSeed;  // gen_records's seed
  bool text_pairs = false;       // bench/text_pairs.h's pairs instead
  int server_pid = 0;            // 0, or the server whose CPU is reported
  double timeout = 10;           // longest wait for an answer, seconds
  double rate = 0;  // the open loop's requests/s (open_loop.h); 0: closed
};

// Binds --duration, --warmup, --seed and --server-pid to `flags`.
void AddWindowFlags(CLI::App* app, LoadFlags* flags);

// After parsing: gives --batch its default (1 for get, 100 for
// `batched_method`) and checks the flags both programs share. An error
// message for bad usage, or nullopt. `get_name` is how the message spells
// the single-key method ("Get", "get").
std::optional<std::string> CheckLoadFlags(LoadFlags* flags,
                                          std::string_view batched_method,
                                          std::string_view get_name);

// A loopback address split for a client: host "127.0.0.1" (for 127.0.0.1
// and localhost) or "::1" (for [::1]), and a port in 1..65535.
struct Loopback {
  std::string host;
  int port = 0;
};

// 127.0.0.1:PORT, localhost:PORT or [::1]:PORT; nullopt for anything else.
std::optional<Loopback> ParseLoopback(std::string_view addr);

// The message for an address ParseLoopback refuses.
std::string NotLoopbackMessage(std::string_view addr);

// Which keys one caller asks for: a random sequence of its own, the same
// for the same seed and caller in every program.
class KeySchedule {
 public:
  KeySchedule(uint64_t seed, uint64_t caller)
      : state_(Mix(seed + 0x1000 + caller)) {}

  // The next key number, uniform in [0, n).
  uint64_t Next(uint64_t n) { return Mix(state_ += 0x9e3779b97f4a7c15ULL) % n; }

 private:
  uint64_t state_;
};

enum class Phase { kWarmup, kMeasure, kStop };

// The warm-up and the measured window. Tick and Start from one thread; phase
// from any.
class Window {
 public:
  explicit Window(const LoadFlags& flags);

  // Begins the warm-up.
  void Start(Clock::time_point now);
  // Moves to the next phase when its time has come, sampling the CPU at the
  // measured window's edges; the phase after.
  Phase Tick(Clock::time_point now);
  Phase phase() const { return phase_.load(std::memory_order_acquire); }
  // When the current phase ends; REQUIRES: phase() is not kStop.
  Clock::time_point phase_end() const {
    return phase() == Phase::kWarmup ? warmup_end_ : measure_end_;
  }

  // The window's length and CPU, into `r`; REQUIRES: phase() is kStop.
  void AddTo(LoadReport* r) const;

 private:
  const Clock::duration warmup_;
  const Clock::duration duration_;
  const int server_pid_;
  std::atomic<Phase> phase_{Phase::kWarmup};
  Clock::time_point warmup_end_;
  Clock::time_point measure_start_;
  Clock::time_point measure_end_;
  Clock::time_point measure_stop_;
  double self_cpu0_ = 0;
  double self_cpu1_ = 0;
  std::optional<double> server_cpu0_;
  std::optional<double> server_cpu1_;
};

// What the requests did: errors over the whole run, and the measured
// window's requests answered right. Safe from any thread.
class LoadCounts {
 public:
  // A request that failed (no answer, or an error), a present key answered
  // as absent, a present key answered with a wrong value. `what` says which
  // and is kept when it is the run's first error.
  void RpcError(std::string what) { Count(&rpc_errors_, std::move(what)); }
  void Miss(std::string what) { Count(&misses_, std::move(what)); }
  void BadValue(std::string what) { Count(&bad_values_, std::move(what)); }

  // A request of `keys` keys answered right after `ns` nanoseconds; counted
  // when `phase` is kMeasure.
  void Done(Phase phase, uint64_t keys, uint64_t ns) {
    if (phase != Phase::kMeasure) return;
    rpcs_.fetch_add(1, std::memory_order_relaxed);
    keys_.fetch_add(keys, std::memory_order_relaxed);
    latency_.Record(ns);
  }

  std::string first_error() const;

  // The run's figures; REQUIRES: no request completes any more, and
  // window.phase() is kStop.
  LoadReport Report(const LoadFlags& flags, int channels, int concurrency,
                    const Window& window) const;

 private:
  void Count(std::atomic<uint64_t>* counter, std::string what);

  std::atomic<uint64_t> rpc_errors_{0};
  std::atomic<uint64_t> misses_{0};
  std::atomic<uint64_t> bad_values_{0};
  std::atomic<uint64_t> rpcs_{0};
  std::atomic<uint64_t> keys_{0};
  Histogram latency_;
  mutable std::mutex mu_;
  std::string first_error_;  // guarded by mu_
};

// Prints the report's JSON line on stdout, and on stderr what went wrong
// (and an open loop's drops); the exit status: 0, or 1 when a request
// failed or was answered wrong, or none completed in the window. Drops
// alone are a finding, not a failure: the line says the rate was not
// sustained. `program` starts the stderr lines and
// `request` names one request ("RPC").
int Finish(std::string_view program, std::string_view request,
           const LoadReport& report, const std::string& first_error);

}  // namespace roost::bench

#endif  // ROOST_BENCH_CLOSED_LOOP_H_
