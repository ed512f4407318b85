// StrCat: concatenates the text of its arguments, for error messages.
// (absl::StrCat is not used: Debian's Abseil has its own string_view, which
// std::string_view does not convert to.)
#ifndef ROOST_UTIL_STR_CAT_H_
#define ROOST_UTIL_STR_CAT_H_

#include <fmt/format.h>

#include <iterator>
#include <string>
#include <string_view>

#include "absl/strings/string_view.h"

namespace roost {

// Example:
//   StrCat("read ", 3, " of ", std::string_view("five"))  // "read 3 of five"
namespace internal {
template <typename T>
const T& Formattable(const T& v) {
  return v;
}
inline std::string_view Formattable(absl::string_view v) {
  return {v.data(), v.size()};
}
}  // namespace internal

template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  (fmt::format_to(std::back_inserter(out), "{}", internal::Formattable(args)),
   ...);
  return out;
}

}  // namespace roost

#endif  // ROOST_UTIL_STR_CAT_H_
