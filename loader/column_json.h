// The JSON text of typed column values: how an arrow-columns stream's rows
// become values (docs/format/column_stream.md, "Values", has the table of
// every type's form).
//
// In short: integers (uint64 too) as JSON integers, float and double in the
// shortest text that reads back to the same number (std::to_chars), NaN and
// infinities as null, strings escaped (invalid UTF-8 refused), binary as
// base64 strings, lists as arrays, structs and maps (string keys) as
// objects, dates, times and timestamps as ISO 8601 strings, durations as
// integers of their unit, decimals as strings, nulls as null.
//
// Example:
//   std::string out;
//   absl::Status s = AppendJson(array, row, &out);  // array: ReadArray's
#ifndef ROOST_LOADER_COLUMN_JSON_H_
#define ROOST_LOADER_COLUMN_JSON_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "loader/column_arrays.h"

namespace roost {

// Appends the JSON text of value `i` of `array` (REQUIRES: i < its length;
// ReadArray() accepted it). InvalidArgument, saying where inside the value,
// for a string that is not valid UTF-8, or once *out has grown past `limit`
// bytes (a list of 2^40 nulls is a few bytes of stream); *out then holds a
// partial value.
absl::Status AppendJson(const ArrayView& array, uint64_t i, std::string* out,
                        size_t limit);

// Appends `s` as a JSON string, quotes included. InvalidArgument when `s`
// is not valid UTF-8.
absl::Status AppendJsonString(std::string_view s, std::string* out);

// The length of the longest prefix of `s` that is valid UTF-8: s.size()
// when all of it is.
size_t ValidUtf8Prefix(std::string_view s);

// Appends the decimal text of integer value `i` of an integer array.
void AppendInteger(const ArrayView& array, uint64_t i, std::string* out);

}  // namespace roost

#endif  // ROOST_LOADER_COLUMN_JSON_H_
