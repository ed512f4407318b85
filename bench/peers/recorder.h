// How bench/peers_bench.cc measures a system, whatever it is: the probe
// keys, the checking pass and the timed passes over them, and the JSON line
// of each measurement. The passes are templates, so that each system's
// lookup is compiled into its own loop, with no call through a pointer in
// the timed code.
//
// Example (a peer's Measure):
//   rec.Gets("tinycdb", "default", file_bytes, build_s,
//            [&](std::string_view key, auto&& sink) {
//              ... on a hit: sink(value); return true; ...
//              return false;
//            });
#ifndef ROOST_BENCH_PEERS_RECORDER_H_
#define ROOST_BENCH_PEERS_RECORDER_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/suite_data.h"
#include "fmt/format.h"

namespace roost::bench {

inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

struct Settings {
  DataSet set = DataSet::kUniform;
  uint64_t keys = 0;
  size_t probes = 0;
  int repeats = 3;
  size_t batch = 100;
  int round = 0;  // > 0: each line names the run of the suite it is from
  std::filesystem::path dir;
  std::FILE* out = stdout;
};

// The probe keys of one kind (hits or misses), laid out once, outside any
// timing.
struct Probes {
  std::vector<uint64_t> words;
  std::vector<std::string_view> keys;  // into `bytes`
  std::vector<char> bytes;
};

// `count` probes: random keys of the data set (hits) or keys not in it.
Probes MakeProbes(const SuiteData& data, size_t count, bool hits,
                  uint64_t seed);

// What a pass over the probes found: how many, and a digest of the values.
struct Outcome {
  uint64_t found = 0;
  uint64_t digest = 0;
  bool operator==(const Outcome&) const = default;
};

// Reads the value's first 8 bytes, as a caller would use them. (One load for
// a value of 8 bytes or more: a copy of a variable length took a loop of
// its own, a few dozen instructions a lookup, every system's alike, which
// crowded the CPU's window of lookups in flight.)
inline void Count(Outcome& o, std::string_view value) {
  uint64_t head = 0;
  if (value.size() >= 8) {
    std::memcpy(&head, value.data(), 8);
  } else {
    std::memcpy(&head, value.data(), value.size());
  }
  ++o.found;
  o.digest += value.size() + head;
}

// One system's measurements: checks, times and prints.
class Recorder {
 public:
  Recorder(const Settings& s, const SuiteData& data, const Probes& hits,
           const Probes& misses)
      : s_(s), data_(data), hits_(hits), misses_(misses) {}

  bool failed() const { return failed_; }
  void MarkFailed() { failed_ = true; }

  // Measures `get(key, sink)` (which calls sink(value) on a hit and returns
  // whether it hit) over hits and misses.
  template <typename Get>
  void Gets(const std::string& system, const std::string& config,
            uint64_t table_bytes, double build_s, Get&& get) {
    for (const bool hit : {true, false}) {
      const Probes& p = hit ? hits_ : misses_;
      auto pass = [&](auto&& on_value) {
        for (size_t i = 0; i < p.keys.size(); ++i) {
          get(p.keys[i], [&](std::string_view v) { on_value(i, v); });
        }
      };
      Run(system, config, "get", 1, hit, table_bytes, build_s, pass);
    }
  }

  // Measures `multiget(keys, sink)` (which calls sink(j, value) for each hit
  // keys[j]) in batches of --batch.
  template <typename MultiGet>
  void MultiGets(const std::string& system, const std::string& config,
                 uint64_t table_bytes, double build_s, MultiGet&& multiget) {
    for (const bool hit : {true, false}) {
      const Probes& p = hit ? hits_ : misses_;
      auto pass = [&](auto&& on_value) {
        const std::span<const std::string_view> all(p.keys);
        for (size_t i = 0; i + s_.batch <= all.size(); i += s_.batch) {
          multiget(all.subspan(i, s_.batch),
                   [&](size_t j, std::string_view v) { on_value(i + j, v); });
        }
      };
      Run(system, config, "multiget", s_.batch, hit, table_bytes, build_s,
          pass);
    }
  }

  // Prints a measurement taken elsewhere (the ceiling's reads).
  void Print(const std::string& system, const std::string& config,
             const char* op, const char* probe, size_t lookups, double seconds,
             uint64_t table_bytes);

  // Prints that `system` cannot hold the data set, and why.
  void Skip(const std::string& system, const std::string& config,
            const std::string& why);

 private:
  // One checking pass (every value compared with the data set's), then
  // --repeats timed passes, each of which must find what the check found.
  template <typename Pass>
  void Run(const std::string& system, const std::string& config, const char* op,
           size_t batch, bool hit, uint64_t table_bytes, double build_s,
           Pass&& pass) {
    const Probes& p = hit ? hits_ : misses_;
    const size_t lookups =
        batch == 1 ? p.keys.size() : p.keys.size() / batch * batch;
    Outcome checked;
    uint64_t errors = 0;
    std::string first_error;
    char want[SuiteData::kMaxValue];
    std::vector<uint8_t> seen(p.keys.size(), 0);
    pass([&](size_t i, std::string_view v) {
      Count(checked, v);
      seen[i] += 1;
      const size_t n = data_.Value(p.words[i], want);
      if (!hit || seen[i] > 1 || v != std::string_view(want, n)) {
        if (errors++ == 0) {
          first_error = fmt::format(
              "probe {}: {}", i, hit ? "wrong value" : "found a missing key");
        }
      }
    });
    if (hit && checked.found != lookups) {
      if (errors++ == 0) {
        first_error =
            fmt::format("found {} of {} keys", checked.found, lookups);
      }
    }
    std::vector<double> seconds;
    for (int r = 0; r < s_.repeats; ++r) {
      Outcome o;
      const auto start = std::chrono::steady_clock::now();
      pass([&o](size_t, std::string_view v) { Count(o, v); });
      seconds.push_back(SecondsSince(start));
      if (!(o == checked) && errors++ == 0) {
        first_error = "a timed pass found other values than the check";
      }
    }
    std::sort(seconds.begin(), seconds.end());
    if (errors > 0) {
      failed_ = true;
      std::fprintf(stderr, "peers_bench: %s %s %s %s: %llu errors; first: %s\n",
                   system.c_str(), config.c_str(), op, hit ? "hit" : "miss",
                   static_cast<unsigned long long>(errors),
                   first_error.c_str());
    }
    PrintRow(system, config, op, batch, hit ? "hit" : "miss", lookups,
             seconds[seconds.size() / 2], table_bytes, build_s,
             errors == 0 ? lookups : 0, errors);
  }

  // `"round":N,` when --round is given, else nothing.
  std::string RoundField() const;

  void PrintRow(const std::string& system, const std::string& config,
                const char* op, size_t batch, const char* probe, size_t lookups,
                double seconds, uint64_t table_bytes, double build_s,
                size_t checked, uint64_t errors);

  const Settings& s_;
  const SuiteData& data_;
  const Probes& hits_;
  const Probes& misses_;
  bool failed_ = false;
};

}  // namespace roost::bench

#endif  // ROOST_BENCH_PEERS_RECORDER_H_
