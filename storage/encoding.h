// Hex and base64 decoding of text-encoded keys and values.
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
#ifndef ROOST_STORAGE_ENCODING_H_
#define ROOST_STORAGE_ENCODING_H_

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

// The longest text that can decode to `decoded_size` bytes: 2 characters a
// byte for hex, 4 per 3 bytes (padded) for base64.
inline uint64_t MaxHexSize(uint64_t decoded_size) { return 2 * decoded_size; }
inline uint64_t MaxBase64Size(uint64_t decoded_size) {
  return (decoded_size + 2) / 3 * 4;
}

}  // namespace roost

#endif  // ROOST_STORAGE_ENCODING_H_
