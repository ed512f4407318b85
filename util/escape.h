// Human-readable renderings of untrusted bytes, for error messages.
//
// Our own rather than absl::CHexEscape or fmt's "{:?}": those write some
// bytes as C escapes (\n, \t, \") and the rest as hex, while roost's
// messages (documented, and matched by tests and by operators' searches of
// their logs) follow one rule: every byte outside printable ASCII, and
// every quote and backslash, as \xNN, cut after a bound with the full
// length given.
#ifndef ROOST_UTIL_ESCAPE_H_
#define ROOST_UTIL_ESCAPE_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace roost {

// Returns `bytes` quoted, with printable ASCII as is and every other byte as
// \xNN, cut after `max_bytes` input bytes with "..." appended.
//
// Example:
//   PrintableKey(std::string("ab\0", 3))  // "\"ab\\x00\""
std::string PrintableKey(std::string_view bytes, size_t max_bytes = 64);

}  // namespace roost

#endif  // ROOST_UTIL_ESCAPE_H_
