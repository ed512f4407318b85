#include "util/timestamp.h"

#include "absl/time/time.h"

namespace roost {

std::string FormatRfc3339(int64_t unix_seconds) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ",
                          absl::FromUnixSeconds(unix_seconds),
                          absl::UTCTimeZone());
}

std::optional<int64_t> ParseRfc3339(std::string_view text) {
  absl::Time time;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full,
                       absl::string_view(text.data(), text.size()),
                       absl::UTCTimeZone(), &time, &error)) {
    return std::nullopt;
  }
  const int64_t seconds = absl::ToUnixSeconds(time);
  if (seconds < 0 || seconds > kMaxTimestamp) return std::nullopt;
  return seconds;
}

}  // namespace roost
