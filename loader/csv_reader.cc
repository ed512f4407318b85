// A resumable state machine over the window: a row is parsed in place,
// fields recorded as offsets from the row's start, so that when the window
// must grow or move to hold the rest of the row the scan goes on where it
// stopped. Fields are returned as views into the window unless they hold
// '""' (undoubled into a reused buffer); the JSON value is built in a
// reused string. No allocation per record once the buffers have grown.

#include "loader/csv_reader.h"

#include <simdjson.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "loader/reader_base.h"
#include "loader/text_rows.h"
#include "storage/row/row_codec.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// The rows' parser states.
enum class State {
  kFieldStart,  // before a field's first byte
  kUnquoted,    // in an unquoted field
  kQuoted,      // in a quoted field
  kQuoteSeen,   // after a '"' in a quoted field: its end, or the first of ""
  kCr,          // after a '\r' outside quotes: a line end if '\n' follows
};

struct Field {
  size_t begin;  // offsets from the row's start: the bytes, no quotes
  size_t end;
  bool escaped;  // holds '""'
};

std::string QuoteName(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += '?';
    } else {
      out += c;
    }
  }
  return out + "\"";
}

class CsvRecordReader final : public ReaderBase {
 public:
  CsvRecordReader(std::unique_ptr<ByteStream> stream,
                  const RecordReaderOptions& options)
      : ReaderBase(std::move(stream), options),
        max_row_(MaxRowSize(options.max_key_size, options.max_value_size)) {}

  absl::StatusOr<bool> Next(std::string_view* key,
                            std::string_view* value) override {
    if (!status_.ok()) return status_;
    if (!started_) {
      started_ = true;
      if (absl::Status s = Start(); !s.ok()) return Fail(s);
      if (pending_) {
        // Without a header, the first row, parsed to count the columns.
        pending_ = false;
        return Record(key, value);
      }
    }
    absl::StatusOr<bool> row = ParseRow();
    if (!row.ok()) return row.status();
    if (!*row) return false;
    return Record(key, value);
  }

  std::string Location() const override {
    return StrCat(in_.name(), ":", row_line_);
  }
  uint64_t first_empty_key_line() const override {
    return first_empty_key_line_;
  }
  const RowSchema* row_schema() const override {
    return options_.rows ? options_.schema.get() : nullptr;
  }

 private:
  // Reads the header (or without one, the first row) and finds the
  // columns asked for.
  absl::Status Start() {
    ROOST_RETURN_IF_ERROR(RefuseColumnar());
    // A UTF-8 byte order mark (Excel's "CSV UTF-8") is no part of the
    // first name.
    absl::StatusOr<size_t> filled = in_.Fill(3);
    if (!filled.ok()) return filled.status();
    if (std::string_view(in_.data(), std::min<size_t>(*filled, 3)) ==
        "\xef\xbb\xbf") {
      in_.Skip(3);
    }
    absl::StatusOr<bool> row = ParseRow();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();  // no rows at all: no records
    if (!problem_.empty()) {
      return Malformed(StrCat(ColumnName(problem_column_), ": ", problem_));
    }
    const size_t columns = fields_.size();
    names_.clear();
    for (size_t i = 0; i < columns; ++i) {
      if (options_.header) {
        std::string_view name = FieldBytes(i, &key_buffer_);
        names_.emplace_back(name);
      } else {
        names_.push_back(StrCat(i + 1));
      }
    }
    key_index_ = 0;
    if (!options_.key_column.empty()) {
      ROOST_ASSIGN_OR_RETURN(key_index_,
                             FindColumn(options_.key_column, "--key-column"));
    }
    value_index_ = -1;
    if (options_.rows) {
      ROOST_RETURN_IF_ERROR(FindFieldColumns());
    } else if (!options_.value_column.empty()) {
      ROOST_ASSIGN_OR_RETURN(
          value_index_, FindColumn(options_.value_column, "--value-column"));
    } else {
      ROOST_RETURN_IF_ERROR(CheckJsonNames());
    }
    if (options_.header) {
      in_.Skip(row_length_);
    } else {
      pending_ = true;
    }
    return absl::OkStatus();
  }

  absl::StatusOr<size_t> FindColumn(std::string_view name,
                                    std::string_view flag) const {
    for (size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == name) return i;
    }
    std::string has;
    if (options_.header) {
      for (size_t i = 0; i < names_.size() && i < 50; ++i) {
        has += StrCat(i > 0 ? ", " : "", QuoteName(names_[i]));
      }
      if (names_.size() > 50) has += StrCat(", ... (", names_.size(), ")");
      return Malformed(StrCat("no column ", QuoteName(name), " (", flag,
                              ") in the header, whose columns are ", has));
    }
    return Malformed(StrCat("no column ", QuoteName(name), " (", flag,
                            "): without a header the columns are numbered "
                            "1 to ",
                            names_.size(), " (the first row's fields)"));
  }

  // The names of the JSON object's members: none empty or repeated, and
  // UTF-8. Each is kept as its JSON text and a ':'.
  absl::Status CheckJsonNames() {
    json_names_.assign(names_.size(), std::string());
    for (size_t i = 0; i < names_.size(); ++i) {
      if (i == key_index_) continue;
      const std::string& name = names_[i];
      const std::string which =
          StrCat("column ", i + 1, " of the header (", QuoteName(name), ")");
      if (name.empty()) {
        return Malformed(StrCat(
            "column ", i + 1,
            " of the header has no name, and each column but the key's is "
            "a member of the JSON value; name it, or pick the value's "
            "column with --value-column"));
      }
      for (size_t j = 0; j < i; ++j) {
        if (j != key_index_ && names_[j] == name) {
          return Malformed(
              StrCat(which, " repeats the name of column ", j + 1,
                     ", and each column but the key's is a member of the JSON "
                     "value; rename one, or pick the value's column with "
                     "--value-column"));
        }
      }
      if (!simdjson::validate_utf8(name.data(), name.size())) {
        return Malformed(StrCat(which,
                                " is not UTF-8, which a JSON member name "
                                "must be"));
      }
      std::string& json = json_names_[i];
      json = "\"";
      AppendJsonStringBody(name, &json);
      json += "\":";
    }
    return absl::OkStatus();
  }

  // With rows: the column of each field of the schema, by name; -1 for a
  // field with no column that is nullable or has a default (it is always
  // that), and a final error for any other.
  absl::Status FindFieldColumns() {
    const RowSchema& schema = *options_.schema;
    field_columns_.assign(schema.size(), -1);
    for (size_t f = 0; f < schema.size(); ++f) {
      const roost::Field& field = schema.field(f);
      for (size_t c = 0; c < names_.size(); ++c) {
        if (names_[c] == field.name) field_columns_[f] = static_cast<int>(c);
      }
      if (field_columns_[f] < 0 && !field.nullable &&
          field.default_value.is_null()) {
        std::string has;
        for (size_t c = 0; c < names_.size() && c < 50; ++c) {
          has += StrCat(c > 0 ? ", " : "", QuoteName(names_[c]));
        }
        return Malformed(StrCat(
            "--schema field ", QuoteName(field.name),
            " (not nullable, no default) has no column; the header has ", has));
      }
    }
    row_builder_ = std::make_unique<RowBuilder>(options_.schema.get());
    return absl::OkStatus();
  }

  // With rows: the parsed row's fields as a row, into json_.
  absl::Status MakeRow() {
    const RowSchema& schema = *options_.schema;
    row_builder_->Clear();
    for (size_t f = 0; f < schema.size(); ++f) {
      if (field_columns_[f] < 0) continue;
      const size_t c = static_cast<size_t>(field_columns_[f]);
      std::string_view cell = FieldBytes(c, &value_buffer_);
      if (absl::Status s =
              cells_.SetFromCell(schema.field(f), f, cell, row_builder_.get());
          !s.ok()) {
        return Malformed(StrCat(ColumnName(c), ": ", s.message()));
      }
    }
    if (absl::Status s = row_builder_->Finish(&json_); !s.ok()) {
      return Malformed(std::string(s.message()));
    }
    return absl::OkStatus();
  }

  std::string ColumnName(size_t i) const {
    if (i < names_.size()) {
      return options_.header ? StrCat("column ", QuoteName(names_[i]))
                             : StrCat("column ", i + 1);
    }
    return StrCat("column ", i + 1);
  }

  // The parsed row as a record.
  absl::StatusOr<bool> Record(std::string_view* key, std::string_view* value) {
    // Whatever is wrong, the row is used up.
    const size_t length = row_length_;
    struct SkipRow {
      InputBuffer& in;
      size_t n;
      ~SkipRow() { in.Skip(n); }
    } skip{in_, length};
    if (!problem_.empty()) {
      return Malformed(StrCat(ColumnName(problem_column_), ": ", problem_));
    }
    const size_t columns = names_.size();
    if (fields_.size() != columns) {
      if (fields_.size() < columns) {
        return Malformed(StrCat("row has ", fields_.size(), " field",
                                fields_.size() == 1 ? "" : "s", ", the header ",
                                columns, ": no ", ColumnName(fields_.size())));
      }
      return Malformed(StrCat("row has ", fields_.size(),
                              " fields, the header ", columns, ": field ",
                              columns + 1, " is after the last column, ",
                              ColumnName(columns - 1)));
    }
    std::string_view k = FieldBytes(key_index_, &key_buffer_);
    if (k.size() > options_.max_key_size) {
      return Malformed(StrCat(ColumnName(key_index_), ": ",
                              TooLong("key", k.size(), options_.max_key_size)));
    }
    std::string_view v;
    if (options_.rows) {
      ROOST_RETURN_IF_ERROR(MakeRow());
      if (json_.size() > options_.max_value_size) {
        return Malformed(
            TooLong("the row", json_.size(), options_.max_value_size));
      }
      v = json_;
    } else if (value_index_ >= 0) {
      v = FieldBytes(static_cast<size_t>(value_index_), &value_buffer_);
      if (v.size() > options_.max_value_size) {
        return Malformed(
            StrCat(ColumnName(value_index_), ": ",
                   TooLong("value", v.size(), options_.max_value_size)));
      }
    } else {
      json_.clear();
      json_ += '{';
      bool first = true;
      for (size_t i = 0; i < columns; ++i) {
        if (i == key_index_) continue;
        std::string_view field = FieldBytes(i, &value_buffer_);
        if (!IsAscii(field) &&
            !simdjson::validate_utf8(field.data(), field.size())) {
          return Malformed(StrCat(ColumnName(i),
                                  ": not UTF-8, which a field of the JSON "
                                  "value must be (or pick the value's column "
                                  "with --value-column, stored as it is)"));
        }
        if (!first) json_ += ',';
        first = false;
        json_ += json_names_[i];
        json_ += '"';
        AppendJsonStringBody(field, &json_);
        json_ += '"';
        if (json_.size() > options_.max_value_size) break;
      }
      json_ += '}';
      if (json_.size() > options_.max_value_size) {
        return Malformed(
            StrCat("the JSON value of the row is longer than the limit of ",
                   options_.max_value_size, " bytes"));
      }
      v = json_;
    }
    if (k.empty() && first_empty_key_line_ == 0) {
      first_empty_key_line_ = row_line_;
    }
    *key = k;
    *value = v;
    return true;
  }

  static bool IsAscii(std::string_view s) {
    for (char c : s) {
      if (static_cast<unsigned char>(c) >= 0x80) return false;
    }
    return true;
  }

  // Field i's bytes: a view into the window, or undoubled into *buffer.
  std::string_view FieldBytes(size_t i, std::string* buffer) const {
    const Field& f = fields_[i];
    std::string_view raw(in_.data() + f.begin, f.end - f.begin);
    if (!f.escaped) return raw;
    buffer->clear();
    for (size_t j = 0; j < raw.size(); ++j) {
      buffer->push_back(raw[j]);
      if (raw[j] == '"' && j + 1 < raw.size() && raw[j + 1] == '"') ++j;
    }
    return *buffer;
  }

  void Problem(std::string_view what) {
    if (problem_.empty()) {
      problem_ = what;
      problem_column_ = fields_.size();
    }
  }

  // Parses the row at the window's start, leaving it there: fields_,
  // row_length_ (with its line end), row_line_, problem_. False at the end
  // of the input.
  absl::StatusOr<bool> ParseRow() {
    fields_.clear();
    problem_.clear();
    row_line_ = line_ + 1;
    State state = State::kFieldStart;
    size_t pos = 0;        // next byte to look at
    size_t begin = 0;      // the field's first byte
    size_t end = 0;        // kQuoteSeen, kCr: where the field ends
    bool escaped = false;  // the field holds ""
    bool quoted = false;   // the field is quoted
    uint64_t lines = 0;    // newlines inside quotes so far
    uint64_t quote_line = 0;
    while (true) {
      const char* const data = in_.data();
      const size_t available = in_.available();
      for (; pos < available; ++pos) {
        const char c = data[pos];
        switch (state) {
          case State::kFieldStart:
            begin = pos;
            escaped = false;
            quoted = false;
            if (c == '"') {
              quoted = true;
              begin = pos + 1;
              quote_line = row_line_ + lines;
              state = State::kQuoted;
              continue;
            }
            state = State::kUnquoted;
            [[fallthrough]];
          case State::kUnquoted:
            if (c == options_.delimiter) {
              fields_.push_back({begin, pos, escaped});
              state = State::kFieldStart;
            } else if (c == '\n') {
              fields_.push_back({begin, pos, escaped});
              return EndRow(pos + 1, lines);
            } else if (c == '\r') {
              end = pos;
              state = State::kCr;
            } else if (c == '"') {
              Problem(
                  "a quote inside an unquoted field (a field with quotes "
                  "must be quoted whole, its quotes doubled: \"a \"\"b\"\"\")");
            }
            break;
          case State::kQuoted: {
            const void* q = std::memchr(data + pos, '"', available - pos);
            const size_t stop =
                q != nullptr ? static_cast<const char*>(q) - data : available;
            lines += std::count(data + pos, data + stop, '\n');
            pos = stop;
            if (pos == available) {
              --pos;  // the loop's ++pos; more input is needed
              break;
            }
            end = pos;
            state = State::kQuoteSeen;
            break;
          }
          case State::kQuoteSeen:
            if (c == '"') {
              escaped = true;
              state = State::kQuoted;
            } else if (c == options_.delimiter) {
              fields_.push_back({begin, end, escaped});
              state = State::kFieldStart;
            } else if (c == '\n') {
              fields_.push_back({begin, end, escaped});
              return EndRow(pos + 1, lines);
            } else if (c == '\r') {
              state = State::kCr;
            } else {
              Problem("text after the closing quote of a quoted field");
              state = State::kUnquoted;
            }
            break;
          case State::kCr:
            if (c == '\n') {
              fields_.push_back({begin, end, escaped});
              return EndRow(pos + 1, lines);
            }
            // A '\r' that ends no line is data of an unquoted field.
            if (quoted) {
              Problem("text after the closing quote of a quoted field");
            }
            state = State::kUnquoted;
            --pos;  // look at c again
            break;
        }
      }
      if (in_.eof()) break;
      if (pos > max_row_) {
        return Fail(Malformed(
            StrCat("row longer than ", max_row_,
                   " bytes, twice what the key and value limits allow (plus 64 "
                   "KiB); the rows after it are not read")));
      }
      absl::StatusOr<size_t> filled = in_.Fill(pos + 1);
      if (!filled.ok()) return Fail(filled.status());
    }
    // The end of the input.
    if (pos == 0) return false;
    if (state == State::kQuoted) {
      return Fail(Malformed(
          StrCat(ColumnName(fields_.size()),
                 ": unterminated quote: the quoted field "
                 "opened on line ",
                 quote_line, " is not closed before the end of the input")));
    }
    if (!options_.allow_missing_final_newline) {
      line_ = row_line_ + lines;
      return Fail(absl::DataLossError(StrCat(
          Location(),
          ": no line end at the end of the input: its last row may be cut "
          "short (a producer stopped mid-row); --allow-missing-final-newline "
          "reads it as a record")));
    }
    if (state == State::kUnquoted || state == State::kFieldStart) end = pos;
    if (state == State::kFieldStart) begin = pos;
    fields_.push_back({begin, end, escaped});
    return EndRow(pos, lines);
  }

  bool EndRow(size_t length, uint64_t lines) {
    row_length_ = length;
    line_ = row_line_ + lines;
    return true;
  }

  const uint64_t max_row_;
  bool started_ = false;
  bool pending_ = false;
  uint64_t line_ = 0;      // the last line of the last row parsed
  uint64_t row_line_ = 0;  // the first line of the row
  size_t row_length_ = 0;
  std::vector<Field> fields_;
  std::string problem_;
  size_t problem_column_ = 0;
  std::vector<std::string> names_;
  std::vector<std::string> json_names_;
  // With rows: each field's column (-1: none), the builder, the cells'
  // parser.
  std::vector<int> field_columns_;
  std::unique_ptr<RowBuilder> row_builder_;
  TextRowParser cells_;
  size_t key_index_ = 0;
  ptrdiff_t value_index_ = -1;
  uint64_t first_empty_key_line_ = 0;
  std::string key_buffer_, value_buffer_, json_;
};

}  // namespace

void AppendJsonStringBody(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  size_t plain = 0;  // start of the bytes not yet appended
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out->append(s.data() + plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      case '\b':
        *out += "\\b";
        break;
      case '\f':
        *out += "\\f";
        break;
      default:
        *out += "\\u00";
        *out += kHex[c >> 4];
        *out += kHex[c & 0xf];
    }
  }
  out->append(s.data() + plain, s.size() - plain);
}

std::unique_ptr<RecordReader> NewCsvReader(std::unique_ptr<ByteStream> stream,
                                           const RecordReaderOptions& options) {
  return std::make_unique<CsvRecordReader>(std::move(stream), options);
}

}  // namespace roost
