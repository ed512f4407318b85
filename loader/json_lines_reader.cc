// Lines are found as TSV's are (a newline in the window), copied into a
// buffer with simdjson's padding after them, and parsed there; the key and
// value are views into the line, the parser's string buffer or a reused
// string. No allocation per record once the buffers have grown, except for
// a value_field that is not a string (its minified text).

#include "loader/json_lines_reader.h"

#include <simdjson.h>

#include <charconv>
#include <cstring>
#include <string>
#include <utility>

#include "loader/reader_base.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

std::string_view TypeName(simdjson::dom::element_type type) {
  using T = simdjson::dom::element_type;
  switch (type) {
    case T::ARRAY:
      return "an array";
    case T::OBJECT:
      return "an object";
    case T::INT64:
    case T::UINT64:
      return "an integer";
    case T::DOUBLE:
      return "a number with a fraction or exponent";
    case T::STRING:
      return "a string";
    case T::BOOL:
      return "a boolean";
    case T::NULL_VALUE:
      return "null";
  }
  return "a JSON value";
}

class JsonLinesRecordReader final : public ReaderBase {
 public:
  JsonLinesRecordReader(std::unique_ptr<ByteStream> stream,
                        const RecordReaderOptions& options)
      : ReaderBase(std::move(stream), options),
        // The whole line is the value: the value limit, and a "\r". Else
        // the line holds the key and value and whatever else.
        max_line_(
            options.value_field.empty()
                ? SaturatingAdd(options.max_value_size, 1)
                : MaxRowSize(options.max_key_size, options.max_value_size)) {}

  absl::StatusOr<bool> Next(std::string_view* key,
                            std::string_view* value) override {
    if (!status_.ok()) return status_;
    if (!started_) {
      started_ = true;
      if (absl::Status s = RefuseColumnar(); !s.ok()) return Fail(s);
    }
    size_t scanned = 0;
    const char* newline;
    while (true) {
      newline = static_cast<const char*>(
          std::memchr(in_.data() + scanned, '\n', in_.available() - scanned));
      if (newline != nullptr || in_.eof()) break;
      scanned = in_.available();
      if (scanned > max_line_) return SkipLongLine();
      absl::StatusOr<size_t> filled = in_.Fill(scanned + 1);
      if (!filled.ok()) return Fail(filled.status());
    }
    if (newline == nullptr && in_.available() == 0) return false;
    if (newline == nullptr && !options_.allow_missing_final_newline) {
      ++line_;
      in_.Skip(in_.available());
      return Fail(CutShort());
    }
    const size_t length =
        newline != nullptr ? newline - in_.data() : in_.available();
    std::string_view line(in_.data(), length);
    in_.Skip(newline != nullptr ? length + 1 : length);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) {
      // An empty last line ("...\n\n" at the end) is no record.
      absl::StatusOr<size_t> filled = in_.Fill(1);
      if (!filled.ok()) return Fail(filled.status());
      if (*filled == 0) return false;
    }
    ++line_;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
      return Malformed(
          "blank line: JSON Lines holds one JSON value on each line");
    }
    if (line.size() > max_line_) {
      return Malformed(TooLong("value (the whole line)", line.size(),
                               options_.max_value_size));
    }

    // simdjson reads up to SIMDJSON_PADDING bytes past the end.
    if (padded_.size() < line.size() + simdjson::SIMDJSON_PADDING) {
      padded_.resize(line.size() + simdjson::SIMDJSON_PADDING);
    }
    std::memcpy(padded_.data(), line.data(), line.size());
    simdjson::dom::element doc;
    if (auto error = parser_.parse(padded_.data(), line.size(), false).get(doc);
        error) {
      return Malformed(
          StrCat("invalid JSON: ", simdjson::error_message(error)));
    }

    ROOST_ASSIGN_OR_RETURN(simdjson::dom::element k,
                           Field(doc, options_.key_field, "key"));
    std::string_view key_bytes;
    switch (k.type()) {
      case simdjson::dom::element_type::STRING:
        key_bytes = k.get_string().value_unsafe();
        break;
      case simdjson::dom::element_type::INT64: {
        auto [end, ec] = std::to_chars(number_, number_ + sizeof(number_),
                                       k.get_int64().value_unsafe());
        key_bytes = std::string_view(number_, end - number_);
        break;
      }
      case simdjson::dom::element_type::UINT64: {
        auto [end, ec] = std::to_chars(number_, number_ + sizeof(number_),
                                       k.get_uint64().value_unsafe());
        key_bytes = std::string_view(number_, end - number_);
        break;
      }
      default:
        return Malformed(StrCat("key field ", Quoted(options_.key_field),
                                " is ", TypeName(k.type()),
                                ", not a string or an integer"));
    }
    if (key_bytes.size() > options_.max_key_size) {
      return Malformed(
          StrCat("key field ", Quoted(options_.key_field), ": ",
                 TooLong("key", key_bytes.size(), options_.max_key_size)));
    }
    std::string_view value_bytes = line;
    if (!options_.value_field.empty()) {
      ROOST_ASSIGN_OR_RETURN(simdjson::dom::element v,
                             Field(doc, options_.value_field, "value"));
      if (v.type() == simdjson::dom::element_type::STRING) {
        value_bytes = v.get_string().value_unsafe();
      } else {
        value_text_ = simdjson::minify(v);
        value_bytes = value_text_;
      }
    }
    if (value_bytes.size() > options_.max_value_size) {
      return Malformed(
          TooLong("value", value_bytes.size(), options_.max_value_size));
    }
    if (key_bytes.empty() && first_empty_key_line_ == 0) {
      first_empty_key_line_ = line_;
    }
    *key = key_bytes;
    *value = value_bytes;
    return true;
  }

  std::string Location() const override {
    return StrCat(in_.name(), ":", line_);
  }
  uint64_t first_empty_key_line() const override {
    return first_empty_key_line_;
  }

 private:
  // The input ends in the middle of line line_.
  absl::Status CutShort() const {
    return absl::DataLossError(StrCat(
        Location(),
        ": no newline at the end of the input: its last line may be cut "
        "short (a producer stopped mid-line); --allow-missing-final-newline "
        "reads it as a record"));
  }

  static std::string Quoted(std::string_view s) {
    return StrCat("\"", s, "\"");
  }

  // The member `name` of `doc`, or the value its pointer names.
  absl::StatusOr<simdjson::dom::element> Field(simdjson::dom::element doc,
                                               std::string_view name,
                                               std::string_view what) const {
    simdjson::dom::element found;
    simdjson::error_code error;
    if (!name.empty() && name[0] == '/') {
      error = doc.at_pointer(name).get(found);
    } else if (doc.type() != simdjson::dom::element_type::OBJECT) {
      return Malformed(StrCat("the line is ", TypeName(doc.type()),
                              ", not an object with the ", what, " field ",
                              Quoted(name)));
    } else {
      error = doc.get_object().value_unsafe().at_key(name).get(found);
    }
    if (error == simdjson::NO_SUCH_FIELD ||
        error == simdjson::INDEX_OUT_OF_BOUNDS) {
      return Malformed(StrCat("no ", what, " field ", Quoted(name)));
    }
    if (error) {
      return Malformed(StrCat("no ", what, " field ", Quoted(name), " (",
                              simdjson::error_message(error), ")"));
    }
    return found;
  }

  absl::Status SkipLongLine() {
    ++line_;
    while (true) {
      in_.Skip(in_.available());
      absl::StatusOr<size_t> filled = in_.Fill(1);
      if (!filled.ok()) return Fail(filled.status());
      if (*filled == 0) {
        if (!options_.allow_missing_final_newline) return Fail(CutShort());
        break;
      }
      const void* newline = std::memchr(in_.data(), '\n', in_.available());
      if (newline != nullptr) {
        in_.Skip(static_cast<const char*>(newline) - in_.data() + 1);
        break;
      }
    }
    return Malformed(StrCat("line longer than the ", max_line_,
                            " bytes the key and value limits allow"));
  }

  const uint64_t max_line_;
  bool started_ = false;
  uint64_t line_ = 0;
  uint64_t first_empty_key_line_ = 0;
  simdjson::dom::parser parser_;
  std::string padded_;
  std::string value_text_;
  char number_[24];
};

}  // namespace

std::unique_ptr<RecordReader> NewJsonLinesReader(
    std::unique_ptr<ByteStream> stream, const RecordReaderOptions& options) {
  return std::make_unique<JsonLinesRecordReader>(std::move(stream), options);
}

}  // namespace roost
