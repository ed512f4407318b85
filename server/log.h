// Log: one line on stderr, "roost-server: " and the text of its arguments.
// The lines are a contract (server/README.md lists them); one write(2) per
// line keeps lines from different threads whole.
//
// Example:
//   Log("serving ", table, " ", version_name);
#ifndef ROOST_SERVER_LOG_H_
#define ROOST_SERVER_LOG_H_

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

#include "util/str_cat.h"

namespace roost {

template <typename... Args>
void Log(const Args&... args) {
  const std::string line = StrCat("roost-server: ", args..., "\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
}

// A duration measured, as a line of the log gives it: to a precision a
// reader can use, with its unit. "1.71 s" (not "1.709260455 s"), "0.034
// s", "12.3 s", "95 s"; a negative one is "0.000 s".
inline std::string SecondsText(double seconds) {
  seconds = std::max(seconds, 0.0);
  const char* format = seconds >= 100  ? "{:.0f} s"
                       : seconds >= 10 ? "{:.1f} s"
                       : seconds >= 1  ? "{:.2f} s"
                                       : "{:.3f} s";
  return fmt::format(fmt::runtime(format), seconds);
}

// `n` and `noun`, plural unless n is 1: "1 table", "2 tables". For nouns
// whose plural adds an "s".
inline std::string Count(uint64_t n, std::string_view noun) {
  return StrCat(n, " ", noun, n == 1 ? "" : "s");
}

// LogLimiter: lets at most `burst` lines through per `period` and counts
// the rest, for lines whose rate a client controls (malformed requests,
// refused connections), so that no client can flood the log. Thread-safe.
//
// Example:
//   static LogLimiter limiter;
//   if (uint64_t dropped; limiter.Allow(&dropped)) {
//     Log("malformed request from ", peer, LogLimiter::Suppressed(dropped));
//   }
class LogLimiter {
 public:
  explicit LogLimiter(int burst = 5,
                      std::chrono::seconds period = std::chrono::seconds(10))
      : burst_(burst), period_(period) {}

  // True when a line may be written now; *suppressed is then the number of
  // lines held back since the last one let through.
  bool Allow(uint64_t* suppressed) {
    std::lock_guard lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    if (now - window_start_ >= period_) {
      window_start_ = now;
      in_window_ = 0;
    }
    if (in_window_ >= burst_) {
      ++suppressed_;
      return false;
    }
    ++in_window_;
    *suppressed = suppressed_;
    suppressed_ = 0;
    return true;
  }

  // " (N similar lines suppressed)", or "" for none.
  static std::string Suppressed(uint64_t n) {
    return n == 0 ? std::string()
                  : StrCat(" (", n, " similar lines suppressed)");
  }

 private:
  const int burst_;
  const std::chrono::steady_clock::duration period_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point window_start_;
  int in_window_ = 0;
  uint64_t suppressed_ = 0;
};

}  // namespace roost

#endif  // ROOST_SERVER_LOG_H_
