// The JSON Lines input format (--input-format jsonl): one JSON value per
// line, a key and a value taken from each.
//
// Example (RecordReader::Open calls it for InputFormat::kJsonLines):
//   // {"user":{"id":7},"name":"Ann"}   key_field "/user/id"
//   //                                  -> the record "7" -> the whole line
//   std::unique_ptr<RecordReader> reader =
//       NewJsonLinesReader(std::move(stream), options);
//
// Fields: key_field and value_field are each a top-level member name
// ("id"), or a JSON pointer when they start with '/' (RFC 6901: "/user/id",
// "~1" for '/' and "~0" for '~' in a name, a number indexes an array). The
// key is a string's bytes (unescaped) or an integer's decimal text; any
// other type is refused naming the field and its type. The value is the
// whole line as it is (without its "\n" and a "\r" before it) by default;
// with value_field, a string's bytes (unescaped) or any other value's JSON
// text, minified (simdjson's serialization). With options.rows the value
// is instead a row of options.schema: each field the member of its name
// (of the line's object, or of value_field's), converted to its type
// (text_rows.h); a missing or null member is a null field (or its
// default), and a value of the wrong type a malformed line naming the
// field.
//
// Each line is parsed whole (simdjson's DOM parser, which checks UTF-8 and
// the whole grammar): invalid JSON is refused naming the line and the
// parser's error. A blank line (nothing but spaces) is a malformed line,
// so that the line numbers of records and errors stay those of the file;
// an empty last line ("...\n\n" at the end) is no record, as in TSV. The
// last line too ends in "\n" unless allow_missing_final_newline.
//
// Errors: InvalidArgument starting with FILE:LINE; the reader goes on with
// the next line. A line longer than the limits allow is skipped to its
// newline and reported.
#ifndef ROOST_LOADER_JSON_LINES_READER_H_
#define ROOST_LOADER_JSON_LINES_READER_H_

#include <memory>

#include "loader/input_stream.h"
#include "loader/record_reader.h"

namespace roost {

std::unique_ptr<RecordReader> NewJsonLinesReader(
    std::unique_ptr<ByteStream> stream, const RecordReaderOptions& options);

}  // namespace roost

#endif  // ROOST_LOADER_JSON_LINES_READER_H_
