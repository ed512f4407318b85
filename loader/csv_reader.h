// The CSV input format (--input-format csv): RFC 4180 records read as
// key/value pairs.
//
// Example (RecordReader::Open calls it for InputFormat::kCsv):
//   // id,name,city          header row
//   // 7,"Smith, J",Oslo     the record 7 -> {"name":"Smith, J","city":"Oslo"}
//   std::unique_ptr<RecordReader> reader = NewCsvReader(std::move(stream),
//                                                       options);
//
// The grammar: fields separated by options.delimiter (one byte), rows ended
// by "\n" or "\r\n". A field that starts with '"' is quoted: it ends at the
// next '"' not doubled, and may hold delimiters, newlines and '""' (one
// '"'). A '"' inside an unquoted field, or text after a quoted field's
// closing quote, is a malformed row. A UTF-8 byte order mark at the start
// of the input is dropped. A blank line is a row of one empty field. The
// last row too ends in a line end unless allow_missing_final_newline (else
// the input is cut short: DataLoss, as for TSV).
//
// Columns: the first row is the header, naming them (unless !header: then
// they are named "1", "2", ... by the first row's field count, and the
// first row is a record). Every row must have as many fields as the header.
// The key is the field of key_column (the first column by default), its
// bytes as they are (quotes removed, '""' undoubled). The value is the
// field of value_column as it is, or by default a JSON object of every
// other column, in header order, each value a JSON string (CSV has no
// types): {"name":"Smith, J","city":"Oslo"}, compact. Such a value must be
// UTF-8; a field that is not is refused naming its row and column. With
// options.rows the value is instead a row of options.schema, each field
// the column of its name converted to its type (text_rows.h); a field
// that is not nullable, has no default and has no column is a final error
// at the header, and a cell of the wrong type a malformed row.
//
// Errors: each starts with FILE:LINE, the line a row starts on, and names
// the column. Malformed rows are InvalidArgument, and the reader goes on
// with the next row. Final (stopped()): a header that lacks key_column or
// value_column (naming the columns it has), or whose names a JSON value
// needs are empty or repeated; a quoted field the input ends inside
// (naming the line its quote opened on); a row longer than twice the key
// and value limits together (plus 64 KiB), as no record could come of it.
#ifndef ROOST_LOADER_CSV_READER_H_
#define ROOST_LOADER_CSV_READER_H_

#include <memory>

#include "loader/input_stream.h"
#include "loader/record_reader.h"

namespace roost {

std::unique_ptr<RecordReader> NewCsvReader(std::unique_ptr<ByteStream> stream,
                                           const RecordReaderOptions& options);

// Appends `s` to `out` as the body of a JSON string (without the quotes):
// '"', '\\' and control characters escaped. REQUIRES: `s` is UTF-8.
void AppendJsonStringBody(std::string_view s, std::string* out);

}  // namespace roost

#endif  // ROOST_LOADER_CSV_READER_H_
