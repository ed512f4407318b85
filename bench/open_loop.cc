#include "bench/open_loop.h"

#include <sys/prctl.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>

#include "fmt/format.h"

namespace roost::bench {

namespace {

// The highest --rate taken (the message below says it): 10 ns between
// requests, past any server here.
constexpr double kMaxRate = 1e8;

}  // namespace

void AddRateFlag(CLI::App* app, LoadFlags* flags) {
  app->add_option(
         "--rate", flags->rate,
         fmt::format(
             "Open loop: send this many requests a second in total, Poisson "
             "arrivals (seeded by --seed), whatever the answers do, each "
             "timed from when it was due; at most {} outstanding, past that "
             "a request is dropped (counted, and the rate not sustained). "
             "Without it: the closed loop",
             kMaxOutstanding))
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            char* end = nullptr;
            const double rate = std::strtod(value.c_str(), &end);
            if (end == value.c_str() || *end != '\0' ||
                !(rate > 0 && rate <= kMaxRate)) {
              return fmt::format(
                  "{} is not a rate: give requests a second, more than 0 and "
                  "at most 1e8",
                  value);
            }
            return "";
          },
          "RATE"));
}

OpenLoop::OpenLoop(const LoadFlags& flags, Window* window)
    : rate_(flags.rate),
      window_(window),
      random_(flags.seed ^ 0x6f70656e6c6f6f70ULL),  // "openloop"
      gap_(flags.rate) {}

void OpenLoop::Start(Clock::time_point now) {
  // Every wake-up past a due time is latency; the default slack is 50 µs.
  prctl(PR_SET_TIMERSLACK, 1000UL);
  window_->Start(now);
  start_ = now;
  due_s_ = 0;
  next_ = now;
  Advance();
}

void OpenLoop::Advance() {
  due_s_ += gap_(random_);
  next_ = start_ + std::chrono::duration_cast<Clock::duration>(
                       std::chrono::duration<double>(due_s_));
}

void OpenLoop::AddTo(LoadReport* r) const {
  OpenLoopFigures f;
  f.rate = rate_;
  f.offered = offered_;
  f.dropped = dropped_;
  f.peak_in_flight = peak_in_flight_;
  r->open = f;
}

}  // namespace roost::bench
