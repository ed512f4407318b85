#include "loader/flag_values.h"

#include <CLI/CLI.hpp>
#include <charconv>

#include "util/str_cat.h"
#include "util/timestamp.h"

namespace roost {

// "1073741824", "64M", "1G", "512k", "2GiB": at most 2^50 bytes (1 PiB).
// CLI11's AsSizeValue reads the unit (b, k, M, G, T, P with or without "i"
// and "B", any case, all powers of 1024); around it we insist on leading
// digits (it takes "G" alone as 1 G and passes "-1" through) and parse
// what it makes strictly, so that nothing wraps.
absl::StatusOr<uint64_t> ParseSize(const std::string& text) {
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        StrCat("bad size \"", text,
               "\" (a whole number of bytes up to 2^50, optionally with k, M "
               "or G)"));
  };
  if (text.empty() || text[0] < '0' || text[0] > '9') return bad();
  std::string bytes = text;
  try {
    if (!CLI::AsSizeValue(/*kb_is_1000=*/false)(bytes).empty()) return bad();
  } catch (const CLI::Error&) {  // overflow, a fraction, an unknown unit
    return bad();
  }
  uint64_t n = 0;
  const char* end = bytes.data() + bytes.size();
  auto [rest, ec] = std::from_chars(bytes.data(), end, n);
  constexpr uint64_t kMaxSize = uint64_t{1} << 50;
  if (ec != std::errc() || rest != end || n > kMaxSize) return bad();
  return n;
}

// "50%" or "50": a share in [0, 100], as a fraction.
absl::StatusOr<double> ParseShare(const std::string& text) {
  std::string_view digits = text;
  if (!digits.empty() && digits.back() == '%') digits.remove_suffix(1);
  double p = -1;
  auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), p);
  if (ec != std::errc() || end != digits.data() + digits.size() || !(p >= 0) ||
      p > 100) {
    return absl::InvalidArgumentError(
        StrCat("bad share \"", text, "\" (a percentage from 0% to 100%)"));
  }
  return p / 100;
}

absl::StatusOr<int64_t> ParseTimestamp(const std::string& text) {
  const auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        StrCat("bad timestamp \"", text, "\"", why,
               " (an RFC 3339 date and time such as 2024-05-01T12:00:00Z or "
               "2024-05-01T14:00:00+02:00, or whole seconds since 1970 such "
               "as 1714564800)"));
  };
  if (!text.empty() &&
      text.find_first_not_of("0123456789") == std::string::npos) {
    int64_t seconds = 0;
    const auto [end, ec] =
        std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (ec != std::errc() || end != text.data() + text.size() ||
        seconds > kMaxTimestamp) {
      return bad(
          ": after the year 9999; milliseconds? Unix seconds are "
          "expected");
    }
    return seconds;
  }
  if (auto seconds = ParseRfc3339(text)) return *seconds;
  return bad("");
}

}  // namespace roost
