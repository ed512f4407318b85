#include "loader/flag_values.h"

#include <charconv>

#include "util/str_cat.h"
#include "util/timestamp.h"

namespace roost {

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
