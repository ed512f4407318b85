// Lines are found as TSV's are (LineReaderBase, reader_base.h), copied
// into a buffer with simdjson's padding after them, and parsed there; the
// key and value are views into the line, the parser's string buffer or a
// reused string. No allocation per record once the buffers have grown,
// except for a value_field that is not a string (its minified text).

#include "loader/json_lines_reader.h"

#include <simdjson.h>

#include <charconv>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "loader/reader_base.h"
#include "loader/text_rows.h"
#include "storage/row/row_codec.h"
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

// The longest line the limits allow. The whole line is the value: the
// value limit, and a "\r". Else the line holds the key and value and
// whatever else.
uint64_t MaxLine(const RecordReaderOptions& options) {
  return options.value_field.empty() && !options.rows
             ? SaturatingAdd(options.max_value_size, 1)
             : MaxRowSize(options.max_key_size, options.max_value_size);
}

class JsonLinesRecordReader final : public LineReaderBase {
 public:
  JsonLinesRecordReader(std::unique_ptr<ByteStream> stream,
                        const RecordReaderOptions& options)
      : LineReaderBase(std::move(stream), options, MaxLine(options)) {}

  absl::StatusOr<bool> Next(std::string_view* key,
                            std::string_view* value) override {
    if (!status_.ok()) return status_;
    if (!started_) {
      started_ = true;
      if (absl::Status s = RefuseColumnar(); !s.ok()) return Fail(s);
    }
    std::string_view line;
    absl::StatusOr<bool> found = NextLine(/*strip_cr=*/true, &line);
    if (!found.ok() || !*found) return found;
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
    if (options_.rows) {
      ROOST_RETURN_IF_ERROR(MakeRow(doc));
      value_bytes = value_text_;
    } else if (!options_.value_field.empty()) {
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

  uint64_t first_empty_key_line() const override {
    return first_empty_key_line_;
  }
  const RowSchema* row_schema() const override {
    return options_.rows ? options_.schema.get() : nullptr;
  }

 private:
  // With rows: the fields of the line's object (or value_field's) by name,
  // as a row into value_text_. A member missing or null is a null field
  // (or its default); other members are not read.
  absl::Status MakeRow(simdjson::dom::element doc) {
    simdjson::dom::element object = doc;
    if (!options_.value_field.empty()) {
      ROOST_ASSIGN_OR_RETURN(object, Field(doc, options_.value_field, "value"));
    }
    if (object.type() != simdjson::dom::element_type::OBJECT) {
      return Malformed(
          StrCat(options_.value_field.empty()
                     ? std::string("the line")
                     : StrCat("value field ", Quoted(options_.value_field)),
                 " is ", TypeName(object.type()),
                 ", not an object of the --schema fields"));
    }
    if (row_builder_ == nullptr) {
      row_builder_ = std::make_unique<RowBuilder>(options_.schema.get());
    }
    const RowSchema& schema = *options_.schema;
    const simdjson::dom::object members = object.get_object().value_unsafe();
    row_builder_->Clear();
    for (size_t f = 0; f < schema.size(); ++f) {
      const roost::Field& field = schema.field(f);
      simdjson::dom::element v;
      if (members.at_key(field.name).get(v) != simdjson::SUCCESS) continue;
      if (absl::Status s = values_.SetFromJson(field, f, v, row_builder_.get());
          !s.ok()) {
        return Malformed(
            StrCat("field ", Quoted(field.name), ": ", s.message()));
      }
    }
    if (absl::Status s = row_builder_->Finish(&value_text_); !s.ok()) {
      return Malformed(std::string(s.message()));
    }
    return absl::OkStatus();
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

  bool started_ = false;
  uint64_t first_empty_key_line_ = 0;
  simdjson::dom::parser parser_;
  std::string padded_;
  std::string value_text_;
  // With rows: the builder and the values' parser.
  std::unique_ptr<RowBuilder> row_builder_;
  TextRowParser values_;
  char number_[24];
};

}  // namespace

std::unique_ptr<RecordReader> NewJsonLinesReader(
    std::unique_ptr<ByteStream> stream, const RecordReaderOptions& options) {
  return std::make_unique<JsonLinesRecordReader>(std::move(stream), options);
}

}  // namespace roost
