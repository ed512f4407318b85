// RecordReader: reads key/value records from one input file (or stdin) in
// one of the loader's input formats, transparently gunzipping input that
// starts with the gzip magic bytes.
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
//   kArrowColumns    Arrow record batches' typed columns, a key column and
//                    value columns (loader/column_stream_reader.h,
//                    docs/format/column_stream.md); what roost-build writes.
//
// Errors: a malformed record is InvalidArgument whose message starts with
// Location() ("FILE:LINE: " for TSV, "FILE@OFFSET: " for binary input) and
// says what is wrong (no tab, bad hex, bad base64, a key longer than
// max_key_size, ...). After a malformed TSV line the reader goes on with
// the next line; after a malformed binary record it cannot find the next
// record, so the error is returned again on every later call.
//
// Input cut short is DataLoss, also starting with Location(), and final: a
// last TSV line without its newline (a producer stopped mid-line; unless
// allow_missing_final_newline), a binary record the input ends inside, and
// a gzip member cut. No record of a cut input is to be trusted to be the
// last one, so no count of bad records may let it through.
//
// TSV input that is plainly of another format (input_hints.h: Parquet,
// Arrow, ORC, Avro, CSV, JSON Lines, zstd, xz or bzip2) is refused before
// any record, as FailedPrecondition naming the format and how to convert
// it; final. I/O and gzip errors are other codes (NotFound,
// PermissionDenied, DataLoss) and are final.
#ifndef ROOST_LOADER_RECORD_READER_H_
#define ROOST_LOADER_RECORD_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace roost {

enum class InputFormat { kTsv, kFixed, kLengthPrefixed, kArrowColumns };
enum class Encoding { kRaw, kHex, kBase64 };

absl::StatusOr<InputFormat> ParseInputFormat(
    std::string_view name);  // tsv, fixed, length-prefixed, arrow-columns
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
  // Bytes read (and gunzipped) at a time, and the first size of the window
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
  // Bytes read from the file so far (compressed bytes for gzip input).
  virtual uint64_t bytes_read() const = 0;
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
