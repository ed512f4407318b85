// The fields of a row from text (roost-load build --rows --schema FILE):
// a CSV cell, or a JSON value of a JSON line, converted to its field's type
// (storage/row/row_schema.h) and set into a RowBuilder.
//
// JSON values: true/false for bool; integers for int32 (in range) and int64
// (up to INT64_MAX); any number for float32 (in range) and float64;
// strings for string, base64 strings for bytes; arrays of numbers, of
// integers and of strings for the three lists (no null elements). null is
// a null field (or its default, for a field that is not nullable).
//
// CSV cells (CSV has no types): true/false (True/False, 1/0) for bool,
// decimal integers, decimal numbers (nan and inf too), the cell's bytes
// for string (UTF-8), base64 for bytes, and a list as its JSON array
// (["a","b"], [0.5,1]). An empty cell is null (its default, for a field
// that is not nullable, and else the empty string or bytes for those
// types).
//
// Errors: InvalidArgument saying what the value is and the type it is not
// ("\"abc\" is not an int64"); the reader puts the file, line and column
// in front.
//
// Example:
//   TextRowParser parser;
//   ROOST_RETURN_IF_ERROR(parser.SetFromCell(schema.field(f), f, cell, &b));
#ifndef ROOST_LOADER_TEXT_ROWS_H_
#define ROOST_LOADER_TEXT_ROWS_H_

#include <simdjson.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "storage/row/row_codec.h"
#include "storage/row/row_schema.h"

namespace roost {

class TextRowParser {
 public:
  // Field `i` of `builder`, which is `field`, from the JSON value `v`.
  absl::Status SetFromJson(const Field& field, size_t i,
                           simdjson::dom::element v, RowBuilder* builder);
  // ... from the CSV cell `cell`.
  absl::Status SetFromCell(const Field& field, size_t i, std::string_view cell,
                           RowBuilder* builder);

 private:
  simdjson::dom::parser parser_;  // a list cell's JSON
  std::string scratch_;           // list bytes, decoded base64
};

}  // namespace roost

#endif  // ROOST_LOADER_TEXT_ROWS_H_
