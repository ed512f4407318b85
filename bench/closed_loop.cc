#include "bench/closed_loop.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <utility>

#include "fmt/format.h"

namespace roost::bench {

namespace {

Clock::duration Seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(s));
}

}  // namespace

void AddWindowFlags(CLI::App* app, LoadFlags* flags) {
  app->add_option("--duration", flags->duration, "Measured seconds")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--warmup", flags->warmup, "Seconds of load before measuring")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app->add_option("--seed", flags->seed, "gen_records's seed")
      ->capture_default_str();
  app->add_option("--server-pid", flags->server_pid,
                  "Report this process's CPU over the measured window");
}

std::optional<std::string> CheckLoadFlags(LoadFlags* flags,
                                          std::string_view batched_method,
                                          std::string_view get_name) {
  const bool batched = flags->method == batched_method;
  if (flags->batch == 0) flags->batch = batched ? 100 : 1;
  if (!batched && flags->batch != 1) {
    return fmt::format("{} takes --batch 1", get_name);
  }
  if (!ParseLoopback(flags->addr)) return NotLoopbackMessage(flags->addr);
  if (flags->server_pid != 0 && !ProcessCpuSeconds(flags->server_pid)) {
    return fmt::format("cannot read /proc/{}/stat", flags->server_pid);
  }
  return std::nullopt;
}

std::optional<Loopback> ParseLoopback(std::string_view addr) {
  struct Host {
    std::string_view prefix;
    const char* host;
  };
  for (const Host& h :
       {Host{"127.0.0.1:", "127.0.0.1"}, Host{"localhost:", "127.0.0.1"},
        Host{"[::1]:", "::1"}}) {
    if (addr.substr(0, h.prefix.size()) != h.prefix) continue;
    const std::string_view digits = addr.substr(h.prefix.size());
    int port = 0;
    const char* end = digits.data() + digits.size();
    const auto [ptr, ec] = std::from_chars(digits.data(), end, port);
    if (digits.empty() || ec != std::errc() || ptr != end || port <= 0 ||
        port > 65535) {
      return std::nullopt;
    }
    return Loopback{h.host, port};
  }
  return std::nullopt;
}

std::string NotLoopbackMessage(std::string_view addr) {
  return fmt::format(
      "refusing {}: loopback only (127.0.0.1:PORT, localhost:PORT, "
      "[::1]:PORT)",
      addr);
}

Window::Window(const LoadFlags& flags)
    : warmup_(Seconds(flags.warmup)),
      duration_(Seconds(flags.duration)),
      server_pid_(flags.server_pid) {}

void Window::Start(Clock::time_point now) { warmup_end_ = now + warmup_; }

Phase Window::Tick(Clock::time_point now) {
  const Phase phase = this->phase();
  if (phase == Phase::kWarmup && now >= warmup_end_) {
    if (server_pid_ != 0) server_cpu0_ = ProcessCpuSeconds(server_pid_);
    self_cpu0_ = SelfCpuSeconds();
    measure_start_ = now;
    measure_end_ = now + duration_;
    phase_.store(Phase::kMeasure, std::memory_order_release);
    return Phase::kMeasure;
  }
  if (phase == Phase::kMeasure && now >= measure_end_) {
    phase_.store(Phase::kStop, std::memory_order_release);
    measure_stop_ = now;
    self_cpu1_ = SelfCpuSeconds();
    if (server_pid_ != 0) server_cpu1_ = ProcessCpuSeconds(server_pid_);
    return Phase::kStop;
  }
  return phase;
}

void Window::AddTo(LoadReport* r) const {
  r->seconds =
      std::chrono::duration<double>(measure_stop_ - measure_start_).count();
  r->client_cpu_s = self_cpu1_ - self_cpu0_;
  if (server_cpu0_ && server_cpu1_) {
    r->server_cpu_s = *server_cpu1_ - *server_cpu0_;
  }
}

void LoadCounts::Count(std::atomic<uint64_t>* counter, std::string what) {
  if (counter->fetch_add(1) == 0) {
    std::lock_guard lock(mu_);
    if (first_error_.empty()) first_error_ = std::move(what);
  }
}

std::string LoadCounts::first_error() const {
  std::lock_guard lock(mu_);
  return first_error_;
}

LoadReport LoadCounts::Report(const LoadFlags& flags, int channels,
                              int concurrency, const Window& window) const {
  LoadReport r;
  r.method = flags.method;
  r.batch = flags.batch;
  r.channels = channels;
  r.concurrency = concurrency;
  r.rpcs = rpcs_.load();
  r.keys = keys_.load();
  r.latency = &latency_;
  r.rpc_errors = rpc_errors_.load();
  r.misses = misses_.load();
  r.bad_values = bad_values_.load();
  window.AddTo(&r);
  return r;
}

int Finish(std::string_view program, std::string_view request,
           const LoadReport& report, const std::string& first_error) {
  fmt::print("{}\n", LoadReportJson(report));
  std::fflush(stdout);
  if (report.open && report.open->dropped > 0) {
    fmt::print(stderr,
               "{}: the rate was not sustained: {} of the {} {}s due in the "
               "window were dropped (already {} outstanding)\n",
               program, report.open->dropped, report.open->offered, request,
               report.concurrency);
  }
  const uint64_t errors = report.rpc_errors + report.misses + report.bad_values;
  if (errors > 0) {
    fmt::print(stderr,
               "{}: {} errors ({} failed {}s, {} misses, {} wrong values); "
               "the first: {}\n",
               program, errors, report.rpc_errors, request, report.misses,
               report.bad_values, first_error);
    return 1;
  }
  if (report.rpcs == 0) {
    fmt::print(stderr, "{}: no {} completed in the window\n", program, request);
    return 1;
  }
  return 0;
}

}  // namespace roost::bench
