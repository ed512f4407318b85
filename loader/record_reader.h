// RecordReader: reads key/value records from one input file (or stdin) in
// one of the loader's input formats, transparently decompressing input that
// starts with the gzip or zstd magic bytes (input_stream.h).
//
// Example:
//   RecordReaderOptions options;
//   options.format = InputFormat::kTsv;
//   options.key_encoding = Encoding::kHex;
//   ROOST_ASSIGN_OR_RETURN(auto reader, RecordReader::Open("in.tsv.gz",
//                                                          options));
//   std::string_view key, value;
//   while (true) {
//     absl::StatusOr<bool> more = reader->Next(&key, &value);
//     if (!more.ok()) { ... more.status() names reader->Location() ... }
//     if (!*more) break;
//     Use(key, value);
//   }
//
// Formats:
//   kTsv             one `key<TAB>value` per line ("\n"; a "\r" before it is
//                    part of the value unless strip_cr); key and value each
//                    raw, hex or base64 as their encoding says. A raw value
//                    may hold tabs. The last line too ends in "\n", unless
//                    allow_missing_final_newline. An empty key ("\tvalue")
//                    is the key "", as in the binary formats.
//   kFixed           records of exactly key_size + value_size bytes, back to
//                    back.
//   kLengthPrefixed  varint key length, varint value length, key, value.
//   kCsv             RFC 4180 (csv_reader.h): a header row unless !header,
//                    the key one column, the value another or a JSON
//                    object of the rest.
//   kJsonLines       one JSON value per line (json_lines_reader.h), the key
//                    and optionally the value fields of it.
//   kArrowColumns    Arrow record batches' typed columns, a key column and
//                    value columns (loader/column_stream_reader.h,
//                    docs/format/column_stream.md); what roost-build writes.
//
// With options.rows, the value is a roost-row-1 row (docs/format/rows.md)
// instead, of the schema row_schema() gives: kArrowColumns's from the
// stream's column types, kCsv's and kJsonLines's options.schema.
//
// Errors: a malformed record is InvalidArgument whose message starts with
// Location() ("FILE:LINE: " for TSV, CSV and JSON Lines, "FILE@OFFSET: "
// for binary input) and says what is wrong (no tab, bad hex, bad base64, a
// key longer than max_key_size, ...). After a malformed TSV line, CSV row
// or JSON line the reader goes on with the next; after a malformed binary
// record it cannot find the next record, so the error is returned again on
// every later call (stopped()), as it is after a CSV header that lacks a
// column asked for or an unterminated CSV quote.
//
// Input cut short is DataLoss, also starting with Location(), and final: a
// last TSV line without its newline (a producer stopped mid-line; unless
// allow_missing_final_newline), a binary record the input ends inside, and
// a gzip member cut. No record of a cut input is to be trusted to be the
// last one, so no count of bad records may let it through.
//
// TSV input that is plainly of another format (input_hints.h: Parquet,
// Arrow, ORC, Avro, CSV, JSON Lines, xz or bzip2) is refused before any
// record, as FailedPrecondition naming the format and how to read or
// convert it; final. Parquet and Arrow files are refused so in every
// input format. I/O and gzip errors are other codes (NotFound,
// PermissionDenied, DataLoss) and are final.
#ifndef ROOST_LOADER_RECORD_READER_H_
#define ROOST_LOADER_RECORD_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/row/row_schema.h"

namespace roost {

enum class InputFormat {
  kTsv,
  kFixed,
  kLengthPrefixed,
  kCsv,
  kJsonLines,
  kArrowColumns
};
enum class Encoding { kRaw, kHex, kBase64 };

absl::StatusOr<InputFormat> ParseInputFormat(
    std::string_view
        name);  // tsv, fixed, length-prefixed, csv, jsonl, arrow-columns
std::string_view InputFormatName(InputFormat format);
absl::StatusOr<Encoding> ParseEncoding(
    std::string_view name);  // raw, hex, base64

struct RecordReaderOptions {
  // The default value is InputFormat::kTsv.
  InputFormat format = InputFormat::kTsv;
  // TSV only. The default value is Encoding::kRaw.
  Encoding key_encoding = Encoding::kRaw;
  Encoding value_encoding = Encoding::kRaw;
  // kFixed only: bytes of every key and every value. The default value is 0.
  uint32_t key_size = 0;
  uint32_t value_size = 0;
  // Longest key accepted (after decoding). The default value is 65536.
  uint32_t max_key_size = 65536;
  // Longest value accepted (after decoding). The default value is 1 GiB.
  uint64_t max_value_size = uint64_t{1} << 30;
  // TSV: drop one "\r" at the end of each line (input written with CRLF
  // line ends). The default value is false.
  bool strip_cr = false;
  // TSV: take a last line that lacks its "\n" as a record (a file written
  // by hand), rather than as input cut short. The default value is false.
  bool allow_missing_final_newline = false;
  // CSV: the field separator, one byte. The default value is ','.
  char delimiter = ',';
  // CSV: the first row names the columns (and is no record). Without it
  // the columns are named by number from 1. The default value is true.
  bool header = true;
  // CSV: the column whose field is the key, by name (or number without a
  // header). The default value is "": the first column.
  std::string key_column;
  // CSV: the column whose field, raw, is the value. The default value is
  // "": every column but the key's, as a JSON object of strings.
  std::string value_column;
  // JSON Lines: the key (required) and the value, each a top-level member
  // name or a JSON pointer ("/user/id"). The default value of value_field
  // is "": the whole line.
  std::string key_field;
  std::string value_field;
  // Values as rows of typed fields (docs/format/rows.md) rather than JSON
  // objects: arrow-columns takes each value column's type from the stream
  // (column_rows.h); CSV and JSON Lines take `schema`'s fields by name,
  // each converted to its type (text_rows.h). The default value is false.
  bool rows = false;
  // CSV and JSON Lines with rows: the schema (--schema FILE). The default
  // value is nullptr.
  std::shared_ptr<const RowSchema> schema;
  // Bytes read (and decompressed) at a time, and the first size of the window
  // records are returned from; a larger record grows the window. At least
  // 1: tests and fuzz/record_reader_fuzz.cc make it small, so that short
  // inputs cross window boundaries. The default value is 1 MiB.
  size_t buffer_size = size_t{1} << 20;
};

class RecordReader {
 public:
  // Opens `path`, or stdin for "-" (named "<stdin>" in messages).
  static absl::StatusOr<std::unique_ptr<RecordReader>> Open(
      const std::string& path, const RecordReaderOptions& options);
  virtual ~RecordReader() = default;

  // The next record: true with *key and *value (views valid until the next
  // call), false at the end of the input, or an error (see above).
  virtual absl::StatusOr<bool> Next(std::string_view* key,
                                    std::string_view* value) = 0;
  // Where the last record returned or rejected was: "FILE:LINE" or
  // "FILE@OFFSET".
  virtual std::string Location() const = 0;
  // Bytes read from the file so far (compressed bytes for compressed
  // input).
  virtual uint64_t bytes_read() const = 0;
  // True once an error is final: every later Next() returns it again, and
  // no record after it can be found (so it cannot be skipped).
  virtual bool stopped() const = 0;
  // With RecordReaderOptions::rows: the schema every value is a row of,
  // once the first Next() has returned (nullptr before, and without rows).
  // Valid as long as the reader.
  virtual const RowSchema* row_schema() const { return nullptr; }
  // TSV without strip_cr: the first line read that ended in "\r" (its
  // value keeps the "\r"), or 0 for none.
  virtual uint64_t first_cr_line() const { return 0; }
  // TSV: the first line read whose key is empty, or 0 for none.
  virtual uint64_t first_empty_key_line() const { return 0; }

  // TSV with raw values: the values of the records after line 1 (which may
  // be a header line), the first kCsvQuotedSample of them, when every one
  // so far is quote-wrapped as a CSV writer wraps a field that holds
  // quotes (input_hints.h's IsCsvQuoted: "{""id"":0}"), and there were at
  // least kCsvQuotedMin of them: enough not to be a coincidence.
  static constexpr uint64_t kCsvQuotedSample = 20;
  static constexpr uint64_t kCsvQuotedMin = 3;
  struct CsvQuoting {
    uint64_t values = 0;      // all CSV-quoted; 0 when too few or not all
    uint64_t first_line = 0;  // the line of the first of them
    std::string first_value;  // its value, cut after 64 bytes with "..."
  };
  virtual CsvQuoting csv_quoting() const { return {}; }

  // Where records came from, for a format whose records are rows of
  // named sources (arrow-columns: a Parquet file's row group, say): from
  // record `first_record` of this input on (counted from 0), the rows of
  // `source` counted from `first_row`. Empty for the other formats.
  struct Span {
    uint64_t first_record = 0;
    std::string source;
    uint64_t first_row = 0;
  };
  virtual std::vector<Span> spans() const { return {}; }
};

// Expands shell globs in `inputs` (sorted matches; "-" and paths without
// glob characters are kept as they are). NotFound when a glob matches
// nothing.
absl::StatusOr<std::vector<std::string>> ExpandInputs(
    const std::vector<std::string>& inputs);

}  // namespace roost

#endif  // ROOST_LOADER_RECORD_READER_H_
