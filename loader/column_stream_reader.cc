// The stream, as docs/format/column_stream.md draws it (little-endian):
//
//   "ROOSTCOL"  u32 version (1)  u32 header_size  header
//   header:     u8 value_mode (0 bytes, 1 JSON object)  u32 column_count
//               column_count x (u32 name_size, name, type)   key column first
//   frames:     u8 1, u64 batch_size, batch    or    u8 0 (the end)
//   batch:      u32 source_size, source, u64 first_row, u64 rows,
//               one array per column (column_arrays.h)

#include "loader/column_stream_reader.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "loader/column_arrays.h"
#include "loader/column_json.h"
#include "loader/column_rows.h"
#include "util/escape.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// Debian's Abseil has its own string_view (see util/str_cat.h).
std::string_view View(absl::string_view s) { return {s.data(), s.size()}; }

// The largest header and batch accepted. The window grows only as bytes
// arrive, so these bound a corrupt size's harm to the input's own size.
constexpr uint64_t kMaxHeaderSize = uint64_t{1} << 24;
constexpr uint64_t kMaxBatchSize = uint64_t{1} << 36;
constexpr size_t kPrefixSize = 16;  // magic, version, header_size

class ColumnStreamReader final : public RecordReader {
 public:
  ColumnStreamReader(std::unique_ptr<ByteStream> stream,
                     const RecordReaderOptions& options)
      : in_(std::move(stream), options.buffer_size), options_(options) {}

  absl::StatusOr<bool> Next(std::string_view* key,
                            std::string_view* value) override {
    if (!status_.ok()) return status_;
    if (!started_) {
      started_ = true;
      if (absl::Status s = ReadHeader(); !s.ok()) return Fail(std::move(s));
    }
    while (row_ == rows_) {
      if (ended_) return false;
      if (absl::Status s = ReadFrame(); !s.ok()) return Fail(std::move(s));
      if (ended_) return false;
    }
    const uint64_t r = row_++;
    if (absl::Status s = MakeKey(r, key); !s.ok()) return Fail(std::move(s));
    if (absl::Status s = MakeValue(r, value); !s.ok()) {
      return Fail(std::move(s));
    }
    return true;
  }

  std::string Location() const override {
    if (rows_ == 0) return StrCat(in_.name(), "@", in_.offset());
    return StrCat(source_, " row ", first_row_ + (row_ == 0 ? 0 : row_ - 1));
  }
  uint64_t bytes_read() const override { return in_.bytes_read(); }
  // Every error of the stream is final (a bad row is in a batch checked
  // whole, a bad frame leaves no next one to find).
  bool stopped() const override { return !status_.ok(); }
  std::vector<Span> spans() const override { return spans_; }
  const RowSchema* row_schema() const override { return row_schema_.get(); }

 private:
  absl::Status Fail(absl::Status status) {
    status_ = std::move(status);
    return status_;
  }
  absl::Status Malformed(std::string_view problem) const {
    return absl::InvalidArgumentError(
        StrCat(in_.name(), "@", in_.offset(), ": ", problem));
  }
  absl::Status CutShort(std::string_view inside) const {
    return absl::DataLossError(
        StrCat(in_.name(), "@", in_.offset(), ": the stream ends inside ",
               inside, " (its writer stopped before the end marker)"));
  }
  // Makes `n` bytes available, or says the stream ends inside `what`.
  absl::Status Need(size_t n, std::string_view what) {
    absl::StatusOr<size_t> filled = in_.Fill(n);
    if (!filled.ok()) return filled.status();
    if (*filled < n) return CutShort(what);
    return absl::OkStatus();
  }

  absl::Status ReadHeader() {
    absl::StatusOr<size_t> filled = in_.Fill(kPrefixSize);
    if (!filled.ok()) return filled.status();
    const std::string_view magic(kColumnStreamMagic, 8);
    const size_t n = std::min(*filled, magic.size());
    if (std::string_view(in_.data(), n) != magic.substr(0, n) || n == 0) {
      return Malformed(
          "not an arrow-columns stream (it does not start with ROOSTCOL; "
          "roost-build writes one, docs/format/column_stream.md)");
    }
    if (*filled < kPrefixSize) return CutShort("the header");
    ByteCursor prefix(std::string_view(in_.data() + 8, 8));
    uint32_t version, header_size;
    prefix.U32(&version);
    prefix.U32(&header_size);
    if (version != kColumnStreamVersion) {
      return Malformed(StrCat("arrow-columns version ", version,
                              " is not the version this roost-load reads, ",
                              kColumnStreamVersion));
    }
    if (header_size > kMaxHeaderSize) {
      return Malformed(StrCat("a header of ", header_size, " bytes"));
    }
    in_.Skip(kPrefixSize);
    if (absl::Status s = Need(header_size, "the header"); !s.ok()) return s;
    ByteCursor h(std::string_view(in_.data(), header_size));
    absl::Status s = ParseHeader(&h);
    if (s.ok() && h.remaining() != 0) {
      s = absl::InvalidArgumentError(
          StrCat(h.remaining(), " bytes after the last column"));
    }
    if (!s.ok()) return Malformed(StrCat("header: ", s.message()));
    in_.Skip(header_size);
    return absl::OkStatus();
  }

  absl::Status ParseHeader(ByteCursor* h) {
    const absl::Status cut = absl::InvalidArgumentError("cut short");
    uint8_t mode;
    uint32_t count;
    if (!h->U8(&mode) || !h->U32(&count)) return cut;
    if (mode > 1) {
      return absl::InvalidArgumentError(
          StrCat("unknown value mode ", static_cast<int>(mode)));
    }
    json_object_ = mode == 1;
    if (count < 2 || (!json_object_ && count != 2)) {
      return absl::InvalidArgumentError(StrCat(
          count, " columns: a key column and ",
          json_object_ ? "at least one value column" : "one value column"));
    }
    if (count > h->remaining() / 5) return cut;
    for (uint32_t i = 0; i < count; ++i) {
      std::string_view name;
      if (!h->String(&name)) return cut;
      for (const std::string& other : names_) {
        if (other == name) {
          return absl::InvalidArgumentError(
              StrCat("column ", PrintableKey(name), " appears twice"));
        }
      }
      absl::StatusOr<ColumnType> type = ReadColumnType(h, 0);
      if (!type.ok()) {
        return absl::InvalidArgumentError(StrCat(
            "column ", PrintableKey(name), ": ", type.status().message()));
      }
      names_.emplace_back(name);
      types_.push_back(*std::move(type));
    }
    const ColumnType& key = types_[0];
    if (!IsStringLike(key.id) && !IsInteger(key.id)) {
      return absl::InvalidArgumentError(
          StrCat("key column ", names_[0], " is ", ColumnTypeName(key),
                 ": a key is a string, binary or integer column"));
    }
    if (key.id == ColumnTypeId::kFixedSizeBinary && key.width == 0) {
      return absl::InvalidArgumentError(StrCat("key column ", names_[0], " is ",
                                               ColumnTypeName(key),
                                               ": every key would be empty"));
    }
    // The object's "name": parts, escaped once here.
    for (size_t c = 1; c < names_.size() && json_object_; ++c) {
      std::string quoted;
      if (!AppendJsonString(names_[c], &quoted).ok()) {
        return absl::InvalidArgumentError(
            StrCat("column name ", PrintableKey(names_[c]), " is not UTF-8"));
      }
      quoted_names_.push_back(std::move(quoted));
    }
    arrays_.resize(types_.size());
    if (options_.rows) {
      // Every value column is a field, whatever the value mode (which
      // says how an opaque value is made of them).
      absl::StatusOr<RowSchema> schema = RowSchemaOfColumns(
          std::vector<std::string>(names_.begin() + 1, names_.end()),
          std::vector<ColumnType>(types_.begin() + 1, types_.end()));
      if (!schema.ok()) return schema.status();
      row_schema_ = std::make_unique<RowSchema>(*std::move(schema));
      row_builder_ = std::make_unique<RowBuilder>(row_schema_.get());
    }
    return absl::OkStatus();
  }

  // Reads the next frame: a batch (rows_ > 0 after it, or 0 for an empty
  // batch) or the end marker.
  absl::Status ReadFrame() {
    in_.Skip(frame_size_);
    frame_size_ = 0;
    row_ = rows_ = 0;
    absl::StatusOr<size_t> filled = in_.Fill(1);
    if (!filled.ok()) return filled.status();
    if (*filled == 0) return CutShort("the batches");
    const uint8_t kind = static_cast<uint8_t>(in_.data()[0]);
    if (kind == 0) {
      in_.Skip(1);
      filled = in_.Fill(1);
      if (!filled.ok()) return filled.status();
      if (*filled != 0) return Malformed("bytes after the end marker");
      ended_ = true;
      return absl::OkStatus();
    }
    if (kind != 1) {
      return Malformed(StrCat("frame type ", static_cast<int>(kind),
                              " (1 is a batch, 0 the end)"));
    }
    if (absl::Status s = Need(9, "a batch"); !s.ok()) return s;
    uint64_t size;
    ByteCursor(std::string_view(in_.data() + 1, 8)).U64(&size);
    if (size > kMaxBatchSize) {
      return Malformed(StrCat("a batch of ", size, " bytes"));
    }
    in_.Skip(9);
    ++batch_;
    if (absl::Status s = Need(size, "a batch"); !s.ok()) return s;
    frame_size_ = size;
    ByteCursor b(std::string_view(in_.data(), size));
    std::string_view source;
    uint64_t rows;
    if (!b.String(&source) || !b.U64(&first_row_) || !b.U64(&rows)) {
      return Malformed(StrCat("batch ", batch_, " is cut short"));
    }
    source_ = source.empty() ? in_.name() : std::string(source);
    for (size_t c = 0; c < types_.size(); ++c) {
      absl::Status s = ReadArray(types_[c], &b, &arrays_[c]);
      if (s.ok() && arrays_[c].length != rows) {
        s = absl::InvalidArgumentError(
            StrCat(arrays_[c].length, " values in a batch of ", rows, " rows"));
      }
      if (!s.ok()) {
        return absl::InvalidArgumentError(
            StrCat(source_, " batch ", batch_, " (first row ", first_row_,
                   "), column ", names_[c], ": ", s.message()));
      }
    }
    if (b.remaining() != 0) {
      return Malformed(StrCat("batch ", batch_, " has ", b.remaining(),
                              " bytes after its last column"));
    }
    if (rows > 0) {
      spans_.push_back({records_, source_, first_row_});
      records_ += rows;
    }
    rows_ = rows;
    return absl::OkStatus();
  }

  absl::Status RowError(uint64_t r, size_t column,
                        std::string_view problem) const {
    return absl::InvalidArgumentError(StrCat(source_, " row ", first_row_ + r,
                                             ", column ", names_[column], ": ",
                                             problem));
  }

  absl::Status MakeKey(uint64_t r, std::string_view* key) {
    const ArrayView& a = arrays_[0];
    if (!a.IsValid(r)) {
      return RowError(r, 0, "the key is null");
    }
    if (IsInteger(a.type->id)) {
      key_buffer_.clear();
      AppendInteger(a, r, &key_buffer_);
      *key = key_buffer_;
    } else {
      *key = a.Bytes(r);
    }
    if (key->size() > options_.max_key_size) {
      return RowError(
          r, 0,
          StrCat("a key of ", key->size(), " bytes exceeds the limit of ",
                 options_.max_key_size));
    }
    return absl::OkStatus();
  }

  absl::Status MakeRow(uint64_t r, std::string_view* value) {
    row_builder_->Clear();
    for (size_t c = 1; c < arrays_.size(); ++c) {
      if (absl::Status s = SetRowField(arrays_[c], r, c - 1, row_builder_.get(),
                                       &list_buffer_);
          !s.ok()) {
        return RowError(r, c, View(s.message()));
      }
    }
    if (absl::Status s = row_builder_->Finish(&value_buffer_); !s.ok()) {
      return RowError(r, 0, View(s.message()));
    }
    *value = value_buffer_;
    return absl::OkStatus();
  }

  absl::Status MakeValue(uint64_t r, std::string_view* value) {
    value_buffer_.clear();
    if (row_builder_ != nullptr) {
      if (absl::Status s = MakeRow(r, value); !s.ok()) return s;
    } else if (!json_object_) {
      const ArrayView& a = arrays_[1];
      if (IsStringLike(a.type->id)) {
        if (!a.IsValid(r)) {
          return RowError(r, 1,
                          "the value is null (--value-columns keeps nulls, "
                          "as JSON null)");
        }
        *value = a.Bytes(r);
      } else {
        if (absl::Status s =
                AppendJson(a, r, &value_buffer_, options_.max_value_size);
            !s.ok()) {
          return RowError(r, 1, View(s.message()));
        }
        *value = value_buffer_;
      }
    } else {
      value_buffer_.push_back('{');
      for (size_t c = 1; c < arrays_.size(); ++c) {
        if (c > 1) value_buffer_.push_back(',');
        value_buffer_.append(quoted_names_[c - 1]);
        value_buffer_.push_back(':');
        if (absl::Status s = AppendJson(arrays_[c], r, &value_buffer_,
                                        options_.max_value_size);
            !s.ok()) {
          return RowError(r, c, View(s.message()));
        }
      }
      value_buffer_.push_back('}');
      *value = value_buffer_;
    }
    if (value->size() > options_.max_value_size) {
      return RowError(
          r, json_object_ || row_builder_ != nullptr ? 0 : 1,
          StrCat("a value of ", value->size(), " bytes exceeds the limit of ",
                 options_.max_value_size));
    }
    return absl::OkStatus();
  }

  InputBuffer in_;
  const RecordReaderOptions options_;
  absl::Status status_;
  bool started_ = false;
  bool ended_ = false;
  bool json_object_ = false;
  std::vector<std::string> names_;
  std::vector<ColumnType> types_;
  std::vector<std::string> quoted_names_;  // value columns, as JSON strings
  // The batch being returned: its bytes are in_.data()[0, frame_size_).
  uint64_t frame_size_ = 0;
  uint64_t batch_ = 0;
  std::string source_;
  uint64_t first_row_ = 0;
  uint64_t rows_ = 0;
  uint64_t row_ = 0;
  std::vector<ArrayView> arrays_;
  uint64_t records_ = 0;  // rows of the batches before this one
  std::vector<Span> spans_;
  std::string key_buffer_;
  std::string value_buffer_;
  // With options_.rows: the value columns' schema, and its builder.
  std::unique_ptr<RowSchema> row_schema_;
  std::unique_ptr<RowBuilder> row_builder_;
  std::string list_buffer_;
};

}  // namespace

std::unique_ptr<RecordReader> NewColumnStreamReader(
    std::unique_ptr<ByteStream> stream, const RecordReaderOptions& options) {
  return std::make_unique<ColumnStreamReader>(std::move(stream), options);
}

}  // namespace roost
