#include "util/escape.h"

#include <fmt/format.h>

namespace roost {

std::string PrintableKey(std::string_view bytes, size_t max_bytes) {
  std::string out = "\"";
  const size_t n = std::min(bytes.size(), max_bytes);
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = bytes[i];
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  out += "\"";
  if (bytes.size() > max_bytes) {
    out += fmt::format("... ({} bytes)", bytes.size());
  }
  return out;
}

}  // namespace roost
