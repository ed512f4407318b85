// JSON for MANIFEST and ROLLBACK files and the tools' machine-readable
// output: nlohmann::json, with the calls roost makes wrapped so that none of
// them throws.
//
// Documents are read as Json (members kept in a sorted map, so parsing is
// linear in the text: a MANIFEST of 300,000 members parses in well under a
// second) and written as OrderedJson (members in insertion order, so a
// MANIFEST reads top to bottom as its fields are documented). Integers up to
// 2^64 - 1 round-trip exactly.
//
// Example:
//   OrderedJson m;
//   m["keys"] = uint64_t{100};
//   std::string text = DumpJson(m);  // {\n  "keys": 100\n}
//   ROOST_ASSIGN_OR_RETURN(Json back, ParseJson(text));
//   std::optional<uint64_t> keys = JsonUint64(back, "keys");
#ifndef ROOST_UTIL_JSON_H_
#define ROOST_UTIL_JSON_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace roost {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

// Parses a whole document. InvalidArgument naming the line and column of
// the first error.
absl::StatusOr<Json> ParseJson(std::string_view text);

// The document as text: pretty-printed with two-space indents when
// `indent`, else on one line. Bytes that are not UTF-8 (a file name, say)
// are written as U+FFFD rather than failing.
std::string DumpJson(const OrderedJson& json, bool indent = true);

// Member `key` of an object when it has that type; nullopt when `json` is
// not an object, the member is missing, or it has another type.
std::optional<uint64_t> JsonUint64(const Json& json, std::string_view key);
std::optional<std::string> JsonString(const Json& json, std::string_view key);

}  // namespace roost

#endif  // ROOST_UTIL_JSON_H_
