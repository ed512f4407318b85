// Hex and base64 encoding of bytes for printing: the inverses of
// storage/encoding.h's decoders.
//
// Example:
//   EncodeHex("a\n")     // "610a"
//   EncodeBase64("ab")   // "YWI="
#ifndef ROOST_CLIENT_TEXT_ENCODING_H_
#define ROOST_CLIENT_TEXT_ENCODING_H_

#include <string>
#include <string_view>

namespace roost {

// Two lowercase hex digits a byte.
std::string EncodeHex(std::string_view bytes);

// Base64 in the standard alphabet (RFC 4648 section 4), padded with "=" to a
// multiple of four characters.
std::string EncodeBase64(std::string_view bytes);

}  // namespace roost

#endif  // ROOST_CLIENT_TEXT_ENCODING_H_
