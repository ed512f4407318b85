// The values of roost-load's flags that CLI11 does not parse itself:
// percentages and timestamps (sizes with units are util/cli.h's ParseSize,
// which roost-server shares). Each returns InvalidArgument naming the text
// and what is expected, for roost-load to report as a usage error.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(double share, ParseShare("10%"));   // 0.1
//   ROOST_ASSIGN_OR_RETURN(int64_t t, ParseTimestamp("2024-05-01T12:00:00Z"));
#ifndef ROOST_LOADER_FLAG_VALUES_H_
#define ROOST_LOADER_FLAG_VALUES_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace roost {

// "50%" or "50": a share in [0, 100], as a fraction.
absl::StatusOr<double> ParseShare(const std::string& text);

// A point in time, as seconds since the Unix epoch: an RFC 3339 date and
// time with its offset ("2024-05-01T12:00:00Z", "2024-05-01T14:00:00+02:00";
// a fraction of a second is dropped) or whole Unix seconds ("1714564800").
// From 1970 to the end of 9999: a number past that is refused as what it
// most likely is, milliseconds.
absl::StatusOr<int64_t> ParseTimestamp(const std::string& text);

}  // namespace roost

#endif  // ROOST_LOADER_FLAG_VALUES_H_
