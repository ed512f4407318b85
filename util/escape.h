// Human-readable renderings of untrusted bytes, for error messages.
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
