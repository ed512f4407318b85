#include "util/encoding.h"

#include <array>
#include <cstdint>

#include "absl/strings/escaping.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// Value of each byte as a hex digit or base64 character, -1 where it is
// none. -1 has every bit set, so OR-ing a group of values and testing the
// sign checks the whole group at once.
constexpr std::array<int8_t, 256> MakeHexTable() {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int c = '0'; c <= '9'; ++c) t[c] = static_cast<int8_t>(c - '0');
  for (int c = 'a'; c <= 'f'; ++c) t[c] = static_cast<int8_t>(c - 'a' + 10);
  for (int c = 'A'; c <= 'F'; ++c) t[c] = static_cast<int8_t>(c - 'A' + 10);
  return t;
}
constexpr std::array<int8_t, 256> MakeBase64Table() {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < kAlphabet.size(); ++i) {
    t[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int8_t>(i);
  }
  return t;
}
constexpr std::array<int8_t, 256> kHex = MakeHexTable();
constexpr std::array<int8_t, 256> kBase64 = MakeBase64Table();

int8_t Lookup(const std::array<int8_t, 256>& table, char c) {
  return table[static_cast<unsigned char>(c)];
}

// `c` for an error message: printable ASCII as is, anything else as \xNN.
std::string Printable(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string(1, c);
  constexpr char kDigits[] = "0123456789abcdef";
  return {'\\', 'x', kDigits[u >> 4], kDigits[u & 0xf]};
}

absl::Status Bad(std::string_view encoding, std::string_view field,
                 std::string_view problem) {
  return absl::InvalidArgumentError(
      StrCat("bad ", encoding, " in ", field, " (", problem, ")"));
}

// The error for the first character of `in` at or after `from` that `table`
// does not accept. REQUIRES: there is one.
absl::Status BadCharacter(const std::array<int8_t, 256>& table,
                          std::string_view encoding, std::string_view field,
                          std::string_view in, size_t from) {
  size_t i = from;
  while (i < in.size() && Lookup(table, in[i]) >= 0) ++i;
  return Bad(encoding, field,
             StrCat("character '", Printable(in[i]), "' at ", i));
}

// Makes `*buffer` at least `size` bytes long. It never shrinks, so a reused
// buffer reaches the largest record's size once and stays there.
char* Reserve(std::string* buffer, size_t size) {
  if (buffer->size() < size) buffer->resize(size);
  return buffer->data();
}

}  // namespace

absl::StatusOr<std::string_view> DecodeHexInto(std::string_view in,
                                               std::string_view field,
                                               std::string* buffer) {
  if (in.size() % 2 != 0) return Bad("hex", field, "odd length");
  const size_t size = in.size() / 2;
  char* out = Reserve(buffer, size);
  for (size_t i = 0; i < size; ++i) {
    const int hi = Lookup(kHex, in[2 * i]);
    const int lo = Lookup(kHex, in[2 * i + 1]);
    if ((hi | lo) < 0) return BadCharacter(kHex, "hex", field, in, 2 * i);
    out[i] = static_cast<char>((hi << 4) | lo);
  }
  return std::string_view(out, size);
}

absl::StatusOr<std::string_view> DecodeBase64Into(std::string_view in,
                                                  std::string_view field,
                                                  std::string* buffer) {
  // Padding: one or two "=" that end the text and make its length a
  // multiple of 4, or none.
  size_t data_size = in.size();
  if (const size_t pad = in.find('='); pad != std::string_view::npos) {
    for (size_t i = pad; i < in.size(); ++i) {
      if (in[i] != '=') {
        return Bad("base64", field,
                   StrCat("character '", Printable(in[i]), "' at ", i,
                          " after padding"));
      }
    }
    if (in.size() - pad > 2 || in.size() % 4 != 0) {
      return Bad("base64", field, "bad padding");
    }
    data_size = pad;
  }
  // A lone character in the last group holds only 6 bits: less than a byte.
  if (data_size % 4 == 1) {
    return Bad("base64", field, StrCat("length ", in.size(), " is not valid"));
  }

  const size_t groups = data_size / 4;
  const size_t tail = data_size % 4;  // 0, 2 or 3 characters
  const size_t size = groups * 3 + (tail == 0 ? 0 : tail - 1);
  char* out = Reserve(buffer, size);
  const char* p = in.data();
  for (size_t g = 0; g < groups; ++g, p += 4, out += 3) {
    const int a = Lookup(kBase64, p[0]);
    const int b = Lookup(kBase64, p[1]);
    const int c = Lookup(kBase64, p[2]);
    const int d = Lookup(kBase64, p[3]);
    if ((a | b | c | d) < 0) {
      return BadCharacter(kBase64, "base64", field, in, g * 4);
    }
    const uint32_t v = (uint32_t(a) << 18) | (uint32_t(b) << 12) |
                       (uint32_t(c) << 6) | uint32_t(d);
    out[0] = static_cast<char>(v >> 16);
    out[1] = static_cast<char>(v >> 8);
    out[2] = static_cast<char>(v);
  }
  if (tail > 0) {
    uint32_t v = 0;
    for (size_t i = 0; i < tail; ++i) {
      const int x = Lookup(kBase64, p[i]);
      if (x < 0) return BadCharacter(kBase64, "base64", field, in, groups * 4);
      v |= uint32_t(x) << (18 - 6 * i);
    }
    out[0] = static_cast<char>(v >> 16);
    if (tail == 3) out[1] = static_cast<char>(v >> 8);
  }
  return std::string_view(buffer->data(), size);
}

absl::StatusOr<std::string> DecodeHex(std::string_view in,
                                      std::string_view field) {
  std::string buffer;
  absl::StatusOr<std::string_view> decoded = DecodeHexInto(in, field, &buffer);
  if (!decoded.ok()) return decoded.status();
  buffer.resize(decoded->size());
  return buffer;
}

absl::StatusOr<std::string> DecodeBase64(std::string_view in,
                                         std::string_view field) {
  std::string buffer;
  absl::StatusOr<std::string_view> decoded =
      DecodeBase64Into(in, field, &buffer);
  if (!decoded.ok()) return decoded.status();
  buffer.resize(decoded->size());
  return buffer;
}

std::string EncodeHex(std::string_view bytes) {
  return absl::BytesToHexString(absl::string_view(bytes.data(), bytes.size()));
}

std::string EncodeBase64(std::string_view bytes) {
  return absl::Base64Escape(absl::string_view(bytes.data(), bytes.size()));
}

}  // namespace roost
