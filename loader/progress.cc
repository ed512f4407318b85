#include "loader/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "util/str_cat.h"

namespace roost {
namespace {

std::string Human(double v, const char* unit) {
  if (v < 1000) return fmt::format("{:.0f}{}", v, unit);
  const char* prefixes[] = {"", "k", "M", "G", "T"};
  int i = 0;
  while (v >= 1000 && i < 4) {
    v /= 1000;
    ++i;
  }
  return fmt::format("{:.1f}{}{}", v, prefixes[i], unit);
}

}  // namespace

Progress::Mode Progress::DefaultMode(bool quiet) {
  if (quiet) return kQuiet;
  return ::isatty(STDERR_FILENO) ? kTerminal : kLines;
}

Progress::Progress(Mode mode) : mode_(mode) {}

void Progress::Phase(const std::string& name) {
  phase_ = name;
  phase_start_ = last_print_ = Clock::now();
  calls_ = 0;
}

void Progress::Report(uint64_t records, uint64_t bytes, bool final) {
  if (mode_ == kQuiet) return;
  const auto now = Clock::now();
  const auto interval = mode_ == kTerminal ? std::chrono::milliseconds(200)
                                           : std::chrono::milliseconds(5000);
  if (!final && now - last_print_ < interval) return;
  last_print_ = now;
  const double seconds =
      std::chrono::duration<double>(now - phase_start_).count();
  const std::string text = fmt::format(
      "roost-load: {:<7} {} records, {} ({}, {:.1f} s)", phase_,
      Human(static_cast<double>(records), ""),
      Human(static_cast<double>(bytes), "B"),
      seconds > 0 ? Human(records / seconds, " records/s") : "-", seconds);
  if (mode_ == kTerminal) {
    fmt::print(stderr, "\r{}\033[K", text);
    line_open_ = !final;
    if (final) std::fputc('\n', stderr);
  } else {
    fmt::print(stderr, "{}\n", text);
  }
}

void Progress::Done(uint64_t records, uint64_t bytes) {
  Report(records, bytes, true);
}

void Progress::Note(const std::string& message) {
  if (mode_ == kQuiet) return;
  Warn(message);
}

void Progress::Warn(const std::string& message) {
  if (line_open_) {
    std::fputc('\n', stderr);
    line_open_ = false;
  }
  fmt::print(stderr, "roost-load: {}\n", message);
}

}  // namespace roost
