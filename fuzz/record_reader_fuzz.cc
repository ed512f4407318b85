// record_reader_fuzz: roost-load's input formats, checked against a model.
//
// Input: a 6-byte header, then the input file's bytes.
//   byte 0  bits 0-1 format (tsv, fixed, length-prefixed; 3 is a text
//           format: CSV or JSON Lines, as byte 2 says),
//           bits 2-3 key encoding and 4-5 value encoding (raw, hex, base64;
//           3 is raw), bit 6 strip_cr, bit 7 allow_missing_final_newline
//   byte 1  bits 0-1 compression: 0 the bytes as they are (decompressed by
//           the reader if they start with the gzip or zstd magic bytes), 1
//           gzipped as one member, 2 as two members, 3 zstd-compressed;
//           bits 2-4 buffer_size: 1, 2, 3, 5, 8, 64, 4096 bytes or the
//           default (small windows make records straddle them and grow them)
//   byte 2  key_size, byte 3 value_size (fixed-size records); for the text
//           formats byte 2 is: bit 0 JSON Lines (else CSV); CSV: bit 1 no
//           header, bits 2-3 the delimiter (, ; tab |), bits 4-5 the key
//           column (the first, "b", "2", "1"), bits 6-7 the value column
//           (the JSON object, "c", "3", "b"); JSON Lines: bits 4-5 the key
//           field (k, /k/0, /a~1b, k), bits 6-7 the value field (the whole
//           line, v, /v/0, /k)
//   byte 4  max_key_size (255: the default), byte 5 max_value_size / 4
//           (255: the default)
//
// Every outcome the reader gives (a record, or an error and where) is
// compared with a model of the format written here from the header comment
// of loader/record_reader.h (and csv_reader.h), simply, on the whole input
// at once: the same records in the same order, an error where the model
// finds a malformed record, and the end where it ends. CSV's model also
// builds the JSON value its own way (nlohmann's dump). JSON Lines has no
// model of JSON here: each line must give one outcome, a record or an
// error at that line, the whole line the value when no value field is
// named; and the same outcomes in every window size. Compressed input must
// give exactly what the plain bytes give, errors included.
#include <zlib.h>
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "loader/input_hints.h"
#include "loader/record_reader.h"
#include "storage/coding.h"
#include "util/encoding.h"

namespace roost::fuzz {
namespace {

constexpr size_t kHeaderSize = 6;

// One thing Next() gave: a record, an error (its code and message), or the
// end of the input.
struct Outcome {
  enum Kind { kRecord, kError, kEnd } kind = kEnd;
  std::string key, value;
  absl::StatusCode code = absl::StatusCode::kOk;
  std::string message;
  std::string where;  // the reader's Location() at an error

  static Outcome Record(std::string_view key, std::string_view value) {
    Outcome o;
    o.kind = kRecord;
    o.key = key;
    o.value = value;
    return o;
  }
  static Outcome Error(absl::StatusCode code = absl::StatusCode::kOk,
                       std::string message = "", std::string where = "") {
    Outcome o;
    o.kind = kError;
    o.code = code;
    o.message = std::move(message);
    o.where = std::move(where);
    return o;
  }
  static Outcome End() { return Outcome(); }
};

std::string Describe(const Outcome& o) {
  switch (o.kind) {
    case Outcome::kRecord:
      return StrCat("record (", o.key.size(), "-byte key, ", o.value.size(),
                    "-byte value)");
    case Outcome::kError:
      return StrCat("error ", absl::StatusCodeToString(o.code), ": ",
                    o.message);
    case Outcome::kEnd:
      break;
  }
  return "end";
}

std::string Gzip(std::string_view data) {
  z_stream z{};
  // 16 + MAX_WBITS: a gzip wrapper.
  if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    Fail("deflateInit2 failed");
  }
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) Fail("deflate failed");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string Zstd(std::string_view data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  const size_t n =
      ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 1);
  if (ZSTD_isError(n)) Fail("ZSTD_compress failed");
  out.resize(n);
  return out;
}

// What the reader gives for `path`: every outcome up to the end or the
// first error that ends the input (any error of the binary formats, any but
// a malformed line or row of the text formats: the reader has stopped()),
// which must then repeat. The input holds at most `input_size` bytes (after
// decompressing); with `cap`, reading stops quietly after that many calls.
std::vector<Outcome> Read(const std::string& path,
                          const RecordReaderOptions& options, size_t input_size,
                          size_t cap = 0) {
  std::vector<Outcome> out;
  auto reader = RecordReader::Open(path, options);
  if (!reader.ok()) Fail("cannot open the input: ", reader.status().ToString());
  // Each call consumes at least a byte, or ends.
  for (size_t calls = 0;; ++calls) {
    if (cap != 0 && calls >= cap) return out;
    if (calls > input_size + 1) Fail("the reader does not come to an end");
    std::string_view key, value;
    absl::StatusOr<bool> more = (*reader)->Next(&key, &value);
    if (!more.ok()) {
      const std::string message(more.status().message());
      if (more.status().code() == absl::StatusCode::kInvalidArgument &&
          message.rfind((*reader)->Location() + ": ", 0) != 0) {
        Fail("error message \"", message, "\" does not start with ",
             (*reader)->Location());
      }
      out.push_back(
          Outcome::Error(more.status().code(), message, (*reader)->Location()));
      const bool binary = options.format == InputFormat::kFixed ||
                          options.format == InputFormat::kLengthPrefixed;
      if (more.status().code() == absl::StatusCode::kInvalidArgument) {
        if (binary && !(*reader)->stopped()) {
          Fail("a binary reader goes on after ", more.status().ToString());
        }
        if (options.format == InputFormat::kTsv && (*reader)->stopped()) {
          Fail("a TSV reader stopped at ", more.status().ToString());
        }
        if (!(*reader)->stopped()) continue;
      }
      absl::StatusOr<bool> again = (*reader)->Next(&key, &value);
      if (again.ok() || again.status() != more.status()) {
        Fail("an error that ends the input does not repeat: ",
             again.status().ToString(), " after ", more.status().ToString());
      }
      return out;
    }
    if (!*more) {
      if (auto again = (*reader)->Next(&key, &value); !again.ok() || *again) {
        Fail("the reader goes on after the end");
      }
      out.push_back(Outcome::End());
      return out;
    }
    if (key.size() > options.max_key_size ||
        value.size() > options.max_value_size) {
      Fail("a record over the limits: ", key.size(), "-byte key, ",
           value.size(), "-byte value");
    }
    if (options.format == InputFormat::kFixed &&
        (key.size() != options.key_size ||
         value.size() != options.value_size)) {
      Fail("a fixed-size record of the wrong size");
    }
    Touch(key);
    Touch(value);
    out.push_back(Outcome::Record(key, value));
  }
}

// The model: each format as record_reader.h describes it, on the whole input.
absl::StatusOr<std::string_view> ModelDecode(Encoding e, std::string_view in,
                                             std::string* buffer) {
  switch (e) {
    case Encoding::kHex:
      return DecodeHexInto(in, "field", buffer);
    case Encoding::kBase64:
      return DecodeBase64Into(in, "field", buffer);
    case Encoding::kRaw:
      break;
  }
  return in;
}

std::vector<Outcome> ModelTsv(std::string_view in,
                              const RecordReaderOptions& o) {
  std::vector<Outcome> out;
  std::string kb, vb;
  size_t pos = 0;
  auto error = [&] { out.push_back(Outcome::Error()); };
  // An input plainly of another format is refused whole, on its first
  // kSniffBytes bytes (all of them when it is shorter).
  if (OtherFormat(in.substr(0, kSniffBytes), in.size() < kSniffBytes, "in")) {
    error();
    return out;
  }
  while (pos < in.size()) {
    const size_t newline = in.find('\n', pos);
    // A last line without its newline: input cut short, which ends it.
    if (newline == std::string_view::npos && !o.allow_missing_final_newline) {
      error();
      return out;
    }
    const size_t end = newline == std::string_view::npos ? in.size() : newline;
    std::string_view line = in.substr(pos, end - pos);
    pos = newline == std::string_view::npos ? in.size() : newline + 1;
    if (o.strip_cr && !line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    if (line.empty()) {
      // An empty last line is no record; any other is one without a tab.
      if (pos == in.size()) break;
      error();
      continue;
    }
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos) {
      error();
      continue;
    }
    auto k = ModelDecode(o.key_encoding, line.substr(0, tab), &kb);
    if (!k.ok() || k->size() > o.max_key_size) {
      error();
      continue;
    }
    auto v = ModelDecode(o.value_encoding, line.substr(tab + 1), &vb);
    if (!v.ok() || v->size() > o.max_value_size) {
      error();
      continue;
    }
    out.push_back(Outcome::Record(*k, *v));
  }
  out.push_back(Outcome::End());
  return out;
}

std::vector<Outcome> ModelBinary(std::string_view in,
                                 const RecordReaderOptions& o) {
  std::vector<Outcome> out;
  // Parquet and Arrow files are refused in every format.
  if (ColumnarFormat(in.substr(0, kColumnarMagicBytes), "in")) {
    out.push_back(Outcome::Error());
    return out;
  }
  size_t pos = 0;
  while (pos < in.size()) {
    uint64_t key_size = o.key_size, value_size = o.value_size;
    size_t header = 0;
    if (o.format == InputFormat::kLengthPrefixed) {
      const char* p = in.data() + pos;
      const char* limit = in.data() + in.size();
      p = DecodeVarint64(p, limit, &key_size);
      if (p != nullptr) p = DecodeVarint64(p, limit, &value_size);
      if (p == nullptr) break;
      header = static_cast<size_t>(p - (in.data() + pos));
    }
    if (key_size > o.max_key_size || value_size > o.max_value_size ||
        in.size() - pos - header < key_size ||
        in.size() - pos - header - key_size < value_size) {
      break;
    }
    out.push_back(
        Outcome::Record(in.substr(pos + header, key_size),
                        in.substr(pos + header + key_size, value_size)));
    pos += header + key_size + value_size;
  }
  out.push_back(pos < in.size() ? Outcome::Error() : Outcome::End());
  return out;
}

// CSV, as csv_reader.h describes it: rows parsed one after another from the
// whole input, with their first line; errors carry their code and where
// (the path is "in"; Compare matches the line).
struct CsvRow {
  std::vector<std::string> fields;
  bool bad = false;  // a quote in an unquoted field, text after a quote
  uint64_t line = 0;
};
enum class RowEnd { kRow, kEof, kUnterminated, kCut };

RowEnd ModelCsvRow(std::string_view in, size_t* pos, uint64_t* line, char delim,
                   bool allow_cut, CsvRow* row) {
  size_t p = *pos;
  const size_t n = in.size();
  if (p == n) return RowEnd::kEof;
  row->fields.clear();
  row->bad = false;
  row->line = *line;
  while (true) {
    std::string field;
    bool quoted = false;
    if (p < n && in[p] == '"') {
      quoted = true;
      ++p;
      while (true) {
        if (p == n) return RowEnd::kUnterminated;
        if (in[p] == '"') {
          if (p + 1 < n && in[p + 1] == '"') {
            field += '"';
            p += 2;
            continue;
          }
          ++p;
          break;
        }
        if (in[p] == '\n') ++*line;
        field += in[p++];
      }
    }
    // Unquoted bytes (after a quoted field's closing quote: all wrong but
    // a line end) up to the delimiter, "\n" or the end.
    size_t end = p;
    while (end < n && in[end] != delim && in[end] != '\n') ++end;
    std::string_view rest = in.substr(p, end - p);
    const bool line_end = end == n || in[end] == '\n';
    if (line_end && !rest.empty() && rest.back() == '\r') rest.remove_suffix(1);
    if (quoted && !rest.empty()) row->bad = true;
    if (!quoted && rest.find('"') != std::string_view::npos) row->bad = true;
    if (!quoted) field = std::string(rest);
    row->fields.push_back(std::move(field));
    if (end == n) {
      if (!allow_cut) return RowEnd::kCut;
      *pos = n;
      ++*line;
      return RowEnd::kRow;
    }
    p = end + 1;
    if (in[end] == '\n') {
      *pos = p;
      ++*line;
      return RowEnd::kRow;
    }
  }
}

// A JSON string's text by nlohmann, or nullopt when `s` is not UTF-8.
std::optional<std::string> JsonString(const std::string& s) {
  try {
    return nlohmann::json(s).dump();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

std::vector<Outcome> ModelCsv(std::string_view in,
                              const RecordReaderOptions& o) {
  std::vector<Outcome> out;
  auto error = [&](absl::StatusCode code, uint64_t line) {
    out.push_back(Outcome::Error(code, "", StrCat("in:", line)));
  };
  const auto kBad = absl::StatusCode::kInvalidArgument;
  if (ColumnarFormat(in.substr(0, kColumnarMagicBytes), "in")) {
    error(absl::StatusCode::kFailedPrecondition, 0);
    return out;
  }
  size_t pos = in.substr(0, 3) == "\xef\xbb\xbf" ? 3 : 0;
  uint64_t line = 1;
  CsvRow row;
  // A row that ends the input: true when it did.
  auto ends = [&](RowEnd e) {
    if (e == RowEnd::kEof) out.push_back(Outcome::End());
    if (e == RowEnd::kUnterminated) error(kBad, row.line);
    if (e == RowEnd::kCut) error(absl::StatusCode::kDataLoss, row.line);
    return e != RowEnd::kRow;
  };
  const bool allow_cut = o.allow_missing_final_newline;
  if (ends(ModelCsvRow(in, &pos, &line, o.delimiter, allow_cut, &row))) {
    return out;
  }
  if (row.bad) {
    error(kBad, row.line);
    return out;
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < row.fields.size(); ++i) {
    names.push_back(o.header ? row.fields[i] : StrCat(i + 1));
  }
  auto find = [&](const std::string& name) -> std::optional<size_t> {
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) return i;
    }
    return std::nullopt;
  };
  size_t key = 0;
  std::optional<size_t> value;
  if (!o.key_column.empty()) {
    auto k = find(o.key_column);
    if (!k) {
      error(kBad, 1);
      return out;
    }
    key = *k;
  }
  std::vector<std::string> json_names(names.size());
  if (!o.value_column.empty()) {
    value = find(o.value_column);
    if (!value) {
      error(kBad, 1);
      return out;
    }
  } else {
    for (size_t i = 0; i < names.size(); ++i) {
      if (i == key) continue;
      bool repeated = false;
      for (size_t j = 0; j < i; ++j)
        repeated |= j != key && names[j] == names[i];
      auto json = JsonString(names[i]);
      if (names[i].empty() || repeated || !json) {
        error(kBad, 1);
        return out;
      }
      json_names[i] = *json;
    }
  }
  bool pending = !o.header;
  while (true) {
    if (!pending &&
        ends(ModelCsvRow(in, &pos, &line, o.delimiter, allow_cut, &row))) {
      return out;
    }
    pending = false;
    if (row.bad || row.fields.size() != names.size() ||
        row.fields[key].size() > o.max_key_size) {
      error(kBad, row.line);
      continue;
    }
    std::string v;
    bool utf8 = true;
    if (value) {
      v = row.fields[*value];
    } else {
      v = "{";
      for (size_t i = 0; i < names.size(); ++i) {
        if (i == key) continue;
        auto json = JsonString(row.fields[i]);
        if (!json) {
          utf8 = false;
          break;
        }
        if (v.size() > 1) v += ',';
        v += json_names[i] + ":" + *json;
      }
      v += "}";
    }
    if (!utf8 || v.size() > o.max_value_size) {
      error(kBad, row.line);
      continue;
    }
    out.push_back(Outcome::Record(row.fields[key], v));
  }
}

// JSON Lines: what each line must give, without a model of JSON: a record
// or an error (kAny), an error (a blank line), or the input's end.
std::vector<Outcome> ModelJsonLines(std::string_view in,
                                    const RecordReaderOptions& o) {
  std::vector<Outcome> out;
  if (ColumnarFormat(in.substr(0, kColumnarMagicBytes), "in")) {
    out.push_back(
        Outcome::Error(absl::StatusCode::kFailedPrecondition, "", "in:0"));
    return out;
  }
  size_t pos = 0;
  uint64_t line = 0;
  while (pos < in.size()) {
    const size_t newline = in.find('\n', pos);
    ++line;
    if (newline == std::string_view::npos && !o.allow_missing_final_newline) {
      out.push_back(
          Outcome::Error(absl::StatusCode::kDataLoss, "", StrCat("in:", line)));
      return out;
    }
    const size_t end = newline == std::string_view::npos ? in.size() : newline;
    std::string_view text = in.substr(pos, end - pos);
    pos = newline == std::string_view::npos ? in.size() : newline + 1;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.empty() && pos == in.size()) break;
    Outcome any = Outcome::Record("", text);  // the value, if a record
    any.where = StrCat("in:", line);
    if (text.find_first_not_of(" \t\r") == std::string_view::npos) {
      any = Outcome::Error(absl::StatusCode::kInvalidArgument, "", any.where);
    } else {
      any.message = "any";  // a record or an error
    }
    out.push_back(any);
  }
  out.push_back(Outcome::End());
  return out;
}

// Checks what a JSON Lines reader gave against ModelJsonLines, `path`'s
// locations against the model's "in:LINE".
void CompareJsonLines(const std::vector<Outcome>& got,
                      const std::vector<Outcome>& want, const std::string& path,
                      const RecordReaderOptions& o) {
  for (size_t i = 0; i < std::max(got.size(), want.size()); ++i) {
    if (i >= got.size() || i >= want.size()) {
      Fail("JSON Lines: ", got.size(), " outcomes where ", want.size(),
           " were expected");
    }
    const Outcome& g = got[i];
    const Outcome& w = want[i];
    const std::string where =
        w.where.size() > 2 ? path + w.where.substr(2) : std::string();
    if (w.kind == Outcome::kEnd || w.message != "any") {
      if (g.kind != w.kind || (w.kind == Outcome::kError &&
                               (g.code != w.code || g.where != where))) {
        Fail("JSON Lines: outcome ", i, " is ", Describe(g), " at ", g.where,
             " where ", Describe(w), " at ", where, " was expected");
      }
      continue;
    }
    if (g.kind == Outcome::kError) {
      if (g.code != absl::StatusCode::kInvalidArgument || g.where != where) {
        Fail("JSON Lines: line ", where, " gave ", Describe(g), " at ",
             g.where);
      }
    } else if (g.kind != Outcome::kRecord ||
               (o.value_field.empty() && g.value != w.value)) {
      Fail("JSON Lines: line ", where, " gave ", Describe(g),
           ", not its whole line as the value");
    }
  }
}

// With `compare_errors`, errors must also agree on their code and where
// they are, and on their message unless it is a malformed TSV or JSON line: a
// line too long for the limits is named as such when it does not fit the window
// and by the field that is too long when it does, so how the bytes arrive
// may change the words but not the line or the code.
void Compare(const std::vector<Outcome>& got, const std::vector<Outcome>& want,
             std::string_view what, bool compare_errors, bool tsv) {
  for (size_t i = 0; i < std::max(got.size(), want.size()); ++i) {
    if (i >= got.size() || i >= want.size()) {
      Fail(what, ": ", got.size(), " outcomes where ", want.size(),
           " were expected");
    }
    const Outcome& g = got[i];
    const Outcome& w = want[i];
    const bool any_words = tsv && g.code == absl::StatusCode::kInvalidArgument;
    const bool same =
        g.kind == w.kind && g.key == w.key && g.value == w.value &&
        (!compare_errors || (g.code == w.code && g.where == w.where &&
                             (any_words || g.message == w.message)));
    if (!same) {
      Fail(what, ": outcome ", i, " is ", Describe(g), " where ", Describe(w),
           " was expected");
    }
  }
}

}  // namespace
}  // namespace roost::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roost;
  using fuzz::Outcome;
  if (size < fuzz::kHeaderSize) return 0;
  const uint8_t* h = data;
  RecordReaderOptions o;
  constexpr InputFormat kFormats[] = {InputFormat::kTsv, InputFormat::kFixed,
                                      InputFormat::kLengthPrefixed,
                                      InputFormat::kTsv};
  constexpr Encoding kEncodings[] = {Encoding::kRaw, Encoding::kHex,
                                     Encoding::kBase64, Encoding::kRaw};
  o.format = kFormats[h[0] & 3];
  o.key_encoding = kEncodings[(h[0] >> 2) & 3];
  o.value_encoding = kEncodings[(h[0] >> 4) & 3];
  o.strip_cr = (h[0] >> 6) & 1;
  o.allow_missing_final_newline = (h[0] >> 7) & 1;
  const int compress = h[1] & 3;
  constexpr size_t kBufferSizes[] = {1, 2, 3, 5, 8, 64, 4096, 0};
  if (const size_t b = kBufferSizes[(h[1] >> 2) & 7]; b != 0) {
    o.buffer_size = b;
  }
  o.key_size = h[2];
  o.value_size = h[3];
  if ((h[0] & 3) == 3) {
    o.key_size = o.value_size = 0;
    if (h[2] & 1) {
      o.format = InputFormat::kJsonLines;
      constexpr const char* kKeys[] = {"k", "/k/0", "/a~1b", "k"};
      constexpr const char* kValues[] = {"", "v", "/v/0", "/k"};
      o.key_field = kKeys[(h[2] >> 4) & 3];
      o.value_field = kValues[(h[2] >> 6) & 3];
    } else {
      o.format = InputFormat::kCsv;
      o.header = !((h[2] >> 1) & 1);
      constexpr char kDelimiters[] = {',', ';', '\t', '|'};
      o.delimiter = kDelimiters[(h[2] >> 2) & 3];
      constexpr const char* kKeys[] = {"", "b", "2", "1"};
      constexpr const char* kValues[] = {"", "c", "3", "b"};
      o.key_column = kKeys[(h[2] >> 4) & 3];
      o.value_column = kValues[(h[2] >> 6) & 3];
    }
  }
  if (h[4] != 255) o.max_key_size = h[4];
  if (h[5] != 255) o.max_value_size = uint64_t{h[5]} * 4;

  const std::string plain(
      reinterpret_cast<const char*>(data) + fuzz::kHeaderSize,
      size - fuzz::kHeaderSize);
  if (o.format == InputFormat::kFixed && o.key_size + o.value_size == 0) {
    if (RecordReader::Open("/dev/null", o).ok()) {
      fuzz::Fail("fixed-size records of no bytes were not refused");
    }
    return 0;
  }
  std::vector<Outcome> want;
  switch (o.format) {
    case InputFormat::kTsv:
      want = fuzz::ModelTsv(plain, o);
      break;
    case InputFormat::kCsv:
      want = fuzz::ModelCsv(plain, o);
      break;
    case InputFormat::kJsonLines:
      want = fuzz::ModelJsonLines(plain, o);
      break;
    default:
      want = fuzz::ModelBinary(plain, o);
  }
  const std::string_view head = std::string_view(plain).substr(0, 4);
  const bool gzip_magic = head.substr(0, 2) == "\x1f\x8b";
  const bool zstd_magic = head == "\x28\xb5\x2f\xfd";
  const std::string path = fuzz::ScratchPath("input");
  fuzz::WriteFileOrDie(path, plain);
  if (zstd_magic) {
    // The models know nothing of compression; zstd can make 10^4 bytes of
    // one, so reading stops after a while.
    fuzz::Read(path, o, size_t{1} << 40, 100000);
    return 0;
  }
  // Deflate makes at most 1032 bytes of one.
  const std::vector<Outcome> got =
      fuzz::Read(path, o, gzip_magic ? 1032 * plain.size() : plain.size());
  // TSV and JSON Lines name a line too long for the limits by the field
  // that is too long when it fits the window, and as such when it does not.
  const bool tsv =
      o.format == InputFormat::kTsv || o.format == InputFormat::kJsonLines;
  if (!gzip_magic) {
    if (o.format == InputFormat::kJsonLines) {
      fuzz::CompareJsonLines(got, want, path, o);
      // The same outcomes through the default window.
      RecordReaderOptions whole = o;
      whole.buffer_size = RecordReaderOptions().buffer_size;
      fuzz::Compare(fuzz::Read(path, whole, plain.size()), got,
                    "the default window", true, true);
    } else if (o.format == InputFormat::kCsv) {
      // Where errors are, by line; the model's "in:" is the path.
      for (Outcome& w : want) {
        if (w.kind == Outcome::kError) w.where = path + w.where.substr(2);
      }
      std::vector<Outcome> g = got;
      for (Outcome& outcome : g) outcome.message.clear();
      fuzz::Compare(g, want, "plain input", true, false);
    } else {
      fuzz::Compare(got, want, "plain input", false, tsv);
    }
  }

  if (compress != 0 && !gzip_magic) {
    std::string packed;
    if (compress == 1) {
      packed = fuzz::Gzip(plain);
    } else if (compress == 2) {
      const size_t half = plain.size() / 2;
      packed = fuzz::Gzip(std::string_view(plain).substr(0, half)) +
               fuzz::Gzip(std::string_view(plain).substr(half));
    } else {
      packed = fuzz::Zstd(plain);
    }
    fuzz::WriteFileOrDie(path, packed);
    fuzz::Compare(fuzz::Read(path, o, plain.size()), got, "compressed input",
                  true, tsv);
  }
  return 0;
}
