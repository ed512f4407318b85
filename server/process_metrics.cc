#include "server/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "server/metrics.h"
#include "util/file.h"

namespace roost {
namespace {

using prometheus::MetricType;

// What /proc/self/stat says (proc(5)): times in clock ticks, sizes in
// bytes (rss converted from pages).
struct Stat {
  uint64_t utime = 0;      // field 14
  uint64_t stime = 0;      // field 15
  uint64_t starttime = 0;  // field 22, ticks after boot
  uint64_t vsize = 0;      // field 23
  uint64_t rss_pages = 0;  // field 24
};

std::optional<uint64_t> ToUint(std::string_view text) {
  uint64_t v = 0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return v;
}

std::optional<Stat> ReadStat() {
  auto text = ReadRegularFile("/proc/self/stat", 1 << 16);
  if (!text.ok()) return std::nullopt;
  // "PID (COMM) STATE ...": COMM may hold spaces and parentheses, so the
  // fields are counted from the last ')'. After it comes field 3.
  const size_t paren = text->rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::string_view rest = std::string_view(*text).substr(paren + 1);
  Stat stat;
  int field = 2;
  while (!rest.empty()) {
    const size_t start = rest.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const size_t end = rest.find_first_of(" \n");
    const std::string_view word = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
    ++field;
    uint64_t* out = field == 14   ? &stat.utime
                    : field == 15 ? &stat.stime
                    : field == 22 ? &stat.starttime
                    : field == 23 ? &stat.vsize
                    : field == 24 ? &stat.rss_pages
                                  : nullptr;
    if (out == nullptr) continue;
    auto v = ToUint(word);
    if (!v) return std::nullopt;
    *out = *v;
    if (field == 24) return stat;
  }
  return std::nullopt;
}

// The boot time, in seconds since the epoch ("btime" of /proc/stat).
std::optional<uint64_t> BootTime() {
  // Its per-CPU and interrupt lines make it long on large machines.
  auto text = ReadRegularFile("/proc/stat", 16 << 20);
  if (!text.ok()) return std::nullopt;
  const std::string_view s = *text;
  const size_t at = s.find("\nbtime ");
  if (at == std::string_view::npos) return std::nullopt;
  const size_t begin = at + 7;
  return ToUint(s.substr(begin, s.find('\n', begin) - begin));
}

// Open descriptors: the entries of /proc/self/fd, less the one listing it.
std::optional<uint64_t> OpenFds() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return std::nullopt;
  const std::string own = std::to_string(::dirfd(dir));
  uint64_t n = 0;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.' || e->d_name == own) continue;
    ++n;
  }
  ::closedir(dir);
  return n;
}

}  // namespace

void CollectProcessMetrics(std::vector<prometheus::MetricFamily>* out) {
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  if (const auto stat = ReadStat(); stat && ticks > 0) {
    AddScalar(out, "process_cpu_seconds_total",
              "Total user and system CPU time spent in seconds.",
              MetricType::Counter,
              static_cast<double>(stat->utime + stat->stime) / ticks);
    AddScalar(out, "process_resident_memory_bytes",
              "Resident memory size in bytes.", MetricType::Gauge,
              static_cast<double>(stat->rss_pages) *
                  static_cast<double>(::sysconf(_SC_PAGESIZE)));
    AddScalar(out, "process_virtual_memory_bytes",
              "Virtual memory size in bytes.", MetricType::Gauge,
              static_cast<double>(stat->vsize));
    // Boot time and start ticks never change; read boot time once.
    static const std::optional<uint64_t> boot = BootTime();
    if (boot) {
      AddScalar(out, "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
                MetricType::Gauge,
                static_cast<double>(*boot) +
                    static_cast<double>(stat->starttime) / ticks);
    }
  }
  if (const auto fds = OpenFds()) {
    AddScalar(out, "process_open_fds", "Number of open file descriptors.",
              MetricType::Gauge, static_cast<double>(*fds));
  }
  if (rlimit rl; ::getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    AddScalar(out, "process_max_fds",
              "Maximum number of open file descriptors.", MetricType::Gauge,
              rl.rlim_cur == RLIM_INFINITY ? 1.8446744073709552e19
                                           : static_cast<double>(rl.rlim_cur));
  }
}

void AddBuildInfo(std::vector<prometheus::MetricFamily>* out,
                  std::string version, std::string revision) {
  auto family =
      MakeFamily("roost_build_info",
                 "The roost-server build: its version and git revision (1).",
                 MetricType::Gauge);
  AddMetric(&family, {{"revision", std::move(revision)},
                      {"version", std::move(version)}})
      .gauge.value = 1;
  out->push_back(std::move(family));
}

}  // namespace roost
