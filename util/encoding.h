// Hex and base64 for keys and values given or shown as text: one
// implementation of each for the whole project.
//
// Encoding is Abseil's (absl::BytesToHexString, absl::Base64Escape).
// Decoding is our own, because Debian's Abseil cannot do what roost-load
// owes a user with a bad line: absl::HexStringToBytes does not validate
// (a stray 'g' decodes to garbage) and absl::Base64Unescape says only
// false, with neither the character nor its position, and skips
// whitespace that we reject. The decoders also reuse one buffer across
// records, which the loader's throughput depends on.
//
// Example:
//   std::string scratch;  // reused for every record
//   ROOST_ASSIGN_OR_RETURN(std::string_view key,
//                          DecodeHexInto(field, "key", &scratch));
//
// Hex takes digits in either case, two per byte, and nothing else. Base64 is
// the standard alphabet (RFC 4648 section 4: A-Z a-z 0-9 + /) with "="
// padding to a multiple of four characters, or with no padding at all; bits
// left over in the last character are ignored. Whitespace, the URL-safe
// alphabet and stray or excess padding are rejected.
//
// Errors are InvalidArgument and name the field and the first problem, with
// character positions counted from 0 within the field:
//   "bad hex in key (odd length)"
//   "bad hex in key (character 'g' at 4)"
//   "bad base64 in value (character '!' at 3)"
//   "bad base64 in value (length 5 is not valid)"
//   "bad base64 in value (bad padding)"
#ifndef ROOST_UTIL_ENCODING_H_
#define ROOST_UTIL_ENCODING_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace roost {

// Decodes hex `in` into `*buffer` and returns a view of the decoded bytes,
// valid until `*buffer` is next changed. `*buffer` only ever grows (its size
// is not the decoded size), so reusing it for every record allocates only
// when a record is larger than any before. `field` names what is decoded
// ("key", "value") in the error.
absl::StatusOr<std::string_view> DecodeHexInto(std::string_view in,
                                               std::string_view field,
                                               std::string* buffer);

// As DecodeHexInto, for base64.
absl::StatusOr<std::string_view> DecodeBase64Into(std::string_view in,
                                                  std::string_view field,
                                                  std::string* buffer);

// Convenience forms that return a new string.
absl::StatusOr<std::string> DecodeHex(std::string_view in,
                                      std::string_view field = "input");
absl::StatusOr<std::string> DecodeBase64(std::string_view in,
                                         std::string_view field = "input");

// Two lowercase hex digits a byte: EncodeHex("a\n") is "610a".
std::string EncodeHex(std::string_view bytes);

// Base64 in the standard alphabet, padded with "=" to a multiple of four
// characters: EncodeBase64("ab") is "YWI=".
std::string EncodeBase64(std::string_view bytes);

// The longest text that can decode to `decoded_size` bytes: 2 characters a
// byte for hex, 4 per 3 bytes (padded) for base64.
inline uint64_t MaxHexSize(uint64_t decoded_size) { return 2 * decoded_size; }
inline uint64_t MaxBase64Size(uint64_t decoded_size) {
  return (decoded_size + 2) / 3 * 4;
}

}  // namespace roost

#endif  // ROOST_UTIL_ENCODING_H_
