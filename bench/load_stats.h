// What the closed-loop load generators measure and print, shared so that
// their lines can stand side by side: bench/server_load.cc (roost-server over
// gRPC) and bench/redis_load.cc (Redis over RESP).
//
// Example:
//   Histogram latency;                  // one Record(ns) per request
//   const double cpu0 = SelfCpuSeconds();
//   ... run ...
//   LoadReport r;
//   r.method = "get";
//   ...
//   r.client_cpu_s = SelfCpuSeconds() - cpu0;
//   r.latency = &latency;
//   fmt::print("{}\n", LoadReportJson(r));
#ifndef ROOST_BENCH_LOAD_STATS_H_
#define ROOST_BENCH_LOAD_STATS_H_

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>

#include "fmt/format.h"

namespace roost::bench {

// Latencies in nanoseconds: exact below 64, then 64 linear buckets per power
// of two (each within 1.6%). Record is safe from any thread.
class Histogram {
 public:
  void Record(uint64_t ns) {
    counts_[Index(ns)].fetch_add(1, std::memory_order_relaxed);
    uint64_t max = max_.load(std::memory_order_relaxed);
    while (ns > max && !max_.compare_exchange_weak(max, ns)) {
    }
  }

  uint64_t Count() const {
    uint64_t n = 0;
    for (const auto& c : counts_) n += c.load(std::memory_order_relaxed);
    return n;
  }

  // The q-quantile (0 < q <= 1), as the middle of its bucket; 0 when empty.
  double Quantile(double q) const {
    const uint64_t total = Count();
    if (total == 0) return 0;
    const uint64_t rank =
        std::max<uint64_t>(1, static_cast<uint64_t>(q * total + 0.999999));
    uint64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i].load(std::memory_order_relaxed);
      if (seen >= rank) {
        if (i < kSub) return static_cast<double>(i);
        const int shift = static_cast<int>(i / kSub) - 1;
        const uint64_t low = (i % kSub + kSub) << shift;
        return static_cast<double>(low) + (uint64_t{1} << shift) / 2.0;
      }
    }
    return static_cast<double>(Max());
  }

  uint64_t Max() const { return max_.load(std::memory_order_relaxed); }

 private:
  static constexpr int kSubBits = 6;
  static constexpr size_t kSub = size_t{1} << kSubBits;

  static size_t Index(uint64_t v) {
    if (v < kSub) return v;
    const int shift = 63 - std::countl_zero(v) - kSubBits;
    return (shift + 1) * kSub + ((v >> shift) - kSub);
  }

  std::array<std::atomic<uint64_t>, kSub*(64 - kSubBits + 1)> counts_{};
  std::atomic<uint64_t> max_{0};
};

// User + system CPU seconds of process `pid` so far (all its threads);
// nullopt when it cannot be read.
inline std::optional<double> ProcessCpuSeconds(int pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  // Fields after "(comm)": state is field 3, utime 14, stime 15.
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  unsigned long long utime = 0, stime = 0;
  if (std::sscanf(stat.c_str() + paren + 1,
                  " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
                  &utime, &stime) != 2) {
    return std::nullopt;
  }
  return static_cast<double>(utime + stime) / sysconf(_SC_CLK_TCK);
}

// User + system CPU seconds of this process so far (all its threads).
inline double SelfCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

// `v` with `decimals` decimals, or null.
inline std::string JsonNumber(std::optional<double> v, int decimals) {
  return v ? fmt::format("{:.{}f}", *v, decimals) : "null";
}

// What an open loop (--rate, bench/open_loop.h) adds to a run's figures.
struct OpenLoopFigures {
  double rate = 0;              // requests/s asked for, in total
  uint64_t offered = 0;         // requests due in the measured window
  uint64_t dropped = 0;         // of those, not sent: too many outstanding
  uint64_t peak_in_flight = 0;  // the most outstanding at once
};

// One run's figures. Requests count in `rpcs` and `keys` (and in `latency`)
// when they completed without error in the measured window (in the open
// loop: when they were due in it, answered then or later); the errors are
// the whole run's.
struct LoadReport {
  std::string method;   // as given on the command line: "get", "multiget"...
  uint32_t batch = 1;   // keys per request
  int channels = 1;     // connections
  int concurrency = 1;  // requests in flight, in total
  double seconds = 0;   // the measured window
  uint64_t rpcs = 0;
  uint64_t keys = 0;
  const Histogram* latency = nullptr;  // of `rpcs`; REQUIRES: not null
  uint64_t rpc_errors = 0;  // failed requests: no answer, or an error
  uint64_t misses = 0;      // present keys answered as absent
  uint64_t bad_values = 0;  // present keys answered with a wrong value
  double client_cpu_s = 0;  // the load generator's, over the window
  std::optional<double> server_cpu_s;   // the server's, over the window
  std::optional<OpenLoopFigures> open;  // nullopt: the closed loop
};

// The report as one line of JSON (without the newline):
//   {"method":"multiget","batch":1000,"channels":4,"concurrency":64,
//    "seconds":10.000,"rpcs":...,"keys":...,"qps":...,"keys_per_s":...,
//    "p50_us":...,"p90_us":...,"p99_us":...,"p999_us":...,"max_us":...,
//    "errors":0,"rpc_errors":0,"misses":0,"bad_values":0,
//    "client_cpu_s":...,"server_cpu_s":...,"server_cpu_us_per_key":...}
// server_cpu_s and server_cpu_us_per_key are null without server_cpu_s.
// An open loop adds, before the closing brace:
//   "rate":...,"offered_qps":...,"dropped":0,"peak_in_flight":...,
//   "sustained":true
// where qps is the achieved rate (requests due in the window and answered
// right, over its seconds), offered_qps the requests due in it over the
// same seconds (Poisson arrivals at `rate`), and sustained means none was
// dropped.
inline std::string LoadReportJson(const LoadReport& r) {
  std::optional<double> server_us_per_key;
  if (r.server_cpu_s && r.keys > 0) {
    server_us_per_key = *r.server_cpu_s * 1e6 / r.keys;
  }
  const Histogram& h = *r.latency;
  std::string open;
  if (r.open) {
    open = fmt::format(
        ",\"rate\":{:.1f},\"offered_qps\":{:.1f},\"dropped\":{},"
        "\"peak_in_flight\":{},\"sustained\":{}",
        r.open->rate, r.open->offered / r.seconds, r.open->dropped,
        r.open->peak_in_flight, r.open->dropped == 0);
  }
  return fmt::format(
      "{{\"method\":\"{}\",\"batch\":{},\"channels\":{},\"concurrency\":{},"
      "\"seconds\":{:.3f},\"rpcs\":{},\"keys\":{},\"qps\":{:.1f},"
      "\"keys_per_s\":{:.1f},\"p50_us\":{:.1f},\"p90_us\":{:.1f},"
      "\"p99_us\":{:.1f},\"p999_us\":{:.1f},\"max_us\":{:.1f},"
      "\"errors\":{},\"rpc_errors\":{},\"misses\":{},\"bad_values\":{},"
      "\"client_cpu_s\":{:.3f},\"server_cpu_s\":{},"
      "\"server_cpu_us_per_key\":{}{}}}",
      r.method, r.batch, r.channels, r.concurrency, r.seconds, r.rpcs, r.keys,
      r.rpcs / r.seconds, r.keys / r.seconds, h.Quantile(0.5) / 1e3,
      h.Quantile(0.9) / 1e3, h.Quantile(0.99) / 1e3, h.Quantile(0.999) / 1e3,
      h.Max() / 1e3, r.rpc_errors + r.misses + r.bad_values, r.rpc_errors,
      r.misses, r.bad_values, r.client_cpu_s, JsonNumber(r.server_cpu_s, 3),
      JsonNumber(server_us_per_key, 4), open);
}

}  // namespace roost::bench

#endif  // ROOST_BENCH_LOAD_STATS_H_
