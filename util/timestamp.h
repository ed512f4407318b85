// Timestamps as RFC 3339 text, for the MANIFEST's build and data times and
// roost-load's --data-timestamp: whole seconds since the Unix epoch, in UTC,
// from 1970 to the end of 9999.
//
// Example:
//   FormatRfc3339(1714564800)                   // "2024-05-01T12:00:00Z"
//   ParseRfc3339("2024-05-01T14:00:00.5+02:00")  // 1714564800
#ifndef ROOST_UTIL_TIMESTAMP_H_
#define ROOST_UTIL_TIMESTAMP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace roost {

// The last second of the year 9999, the largest timestamp accepted.
inline constexpr int64_t kMaxTimestamp = 253402300799;

// "YYYY-MM-DDTHH:MM:SSZ". REQUIRES: 0 <= unix_seconds <= kMaxTimestamp.
std::string FormatRfc3339(int64_t unix_seconds);

// An RFC 3339 date and time with its offset ("Z", "z" or "+hh:mm"; a
// fraction of a second is dropped), as seconds since the epoch; nullopt
// when `text` is not one, or falls before 1970 or after 9999.
std::optional<int64_t> ParseRfc3339(std::string_view text);

}  // namespace roost

#endif  // ROOST_UTIL_TIMESTAMP_H_
