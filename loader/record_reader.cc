// TSV and the binary formats are readers on top of an InputBuffer
// (loader/input_stream.h); CSV and JSON Lines are in csv_reader.cc and
// json_lines_reader.cc. None allocates per record: views point into the
// window, decoded keys and values into buffers that are reused.

#include "loader/record_reader.h"

#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "loader/column_stream_reader.h"
#include "loader/csv_reader.h"
#include "loader/input_hints.h"
#include "loader/input_stream.h"
#include "loader/json_lines_reader.h"
#include "loader/reader_base.h"
#include "storage/coding.h"
#include "util/encoding.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// Debian's Abseil has its own string_view (see util/str_cat.h).
std::string_view View(absl::string_view s) { return {s.data(), s.size()}; }

// The longest field that decodes to at most `decoded_size` bytes, or
// kMaxSize where that does not fit.
uint64_t MaxEncodedSize(Encoding encoding, uint64_t decoded_size) {
  if (encoding != Encoding::kRaw && decoded_size > kMaxSize / 2) {
    return kMaxSize;
  }
  switch (encoding) {
    case Encoding::kHex:
      return MaxHexSize(decoded_size);
    case Encoding::kBase64:
      return MaxBase64Size(decoded_size);
    case Encoding::kRaw:
      break;
  }
  return decoded_size;
}

// The longest TSV line the limits allow: the longest key and value, the tab
// between them, and with strip_cr the "\r" dropped after them.
uint64_t MaxLine(const RecordReaderOptions& options) {
  return SaturatingAdd(
      SaturatingAdd(
          MaxEncodedSize(options.key_encoding, options.max_key_size) + 1,
          MaxEncodedSize(options.value_encoding, options.max_value_size)),
      options.strip_cr ? 1 : 0);
}

class TsvRecordReader final : public LineReaderBase {
 public:
  TsvRecordReader(std::unique_ptr<ByteStream> stream,
                  const RecordReaderOptions& options)
      : LineReaderBase(std::move(stream), options, MaxLine(options)) {}

  absl::StatusOr<bool> Next(std::string_view* key,
                            std::string_view* value) override {
    if (!status_.ok()) return status_;
    if (!sniffed_) {
      sniffed_ = true;
      if (absl::Status s = RefuseOtherFormats(); !s.ok()) return Fail(s);
    }
    std::string_view line;
    absl::StatusOr<bool> found = NextLine(options_.strip_cr, &line);
    if (!found.ok() || !*found) return found;
    if (!options_.strip_cr && !line.empty() && line.back() == '\r' &&
        first_cr_line_ == 0) {
      first_cr_line_ = line_;
    }
    // An empty line (not the last) holds no tab either.
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos) {
      return Malformed("no tab between key and value");
    }
    absl::StatusOr<std::string_view> k =
        Decode(options_.key_encoding, line.substr(0, tab), "key", &key_buffer_);
    if (!k.ok()) return Malformed(View(k.status().message()));
    if (k->size() > options_.max_key_size) {
      return Malformed(TooLong("key", k->size(), options_.max_key_size));
    }
    absl::StatusOr<std::string_view> v = Decode(
        options_.value_encoding, line.substr(tab + 1), "value", &value_buffer_);
    if (!v.ok()) return Malformed(View(v.status().message()));
    if (v->size() > options_.max_value_size) {
      return Malformed(TooLong("value", v->size(), options_.max_value_size));
    }
    if (k->empty() && first_empty_key_line_ == 0) first_empty_key_line_ = line_;
    if (options_.value_encoding == Encoding::kRaw) NoteQuoting(*v);
    *key = *k;
    *value = *v;
    return true;
  }

  uint64_t first_cr_line() const override { return first_cr_line_; }
  uint64_t first_empty_key_line() const override {
    return first_empty_key_line_;
  }
  CsvQuoting csv_quoting() const override {
    return quoting_broken_ || quoting_.values < kCsvQuotedMin ? CsvQuoting()
                                                              : quoting_;
  }

 private:
  // Before the first line: refuses an input that is plainly of another
  // format, looking at its first kSniffBytes bytes (the window grows to
  // hold them, however small buffer_size is, so that what is refused does
  // not depend on it).
  absl::Status RefuseOtherFormats() {
    absl::StatusOr<size_t> filled = in_.Fill(kSniffBytes);
    if (!filled.ok()) return filled.status();
    // Fill() stops short of what it is asked only at the end of the input.
    const size_t n = std::min(*filled, kSniffBytes);
    if (auto other = OtherFormat(std::string_view(in_.data(), n),
                                 *filled < kSniffBytes, in_.name())) {
      return absl::FailedPreconditionError(*other);
    }
    return absl::OkStatus();
  }

  // Counts the values after line 1 that look CSV-quoted, until one does
  // not or kCsvQuotedSample have.
  void NoteQuoting(std::string_view value) {
    if (line_ == 1 || quoting_broken_ || quoting_.values == kCsvQuotedSample) {
      return;
    }
    if (!IsCsvQuoted(value)) {
      quoting_broken_ = true;
      return;
    }
    if (quoting_.values++ == 0) {
      quoting_.first_line = line_;
      quoting_.first_value = value.size() <= 64
                                 ? std::string(value)
                                 : StrCat(value.substr(0, 64), "...");
    }
  }

  static absl::StatusOr<std::string_view> Decode(Encoding encoding,
                                                 std::string_view in,
                                                 std::string_view field,
                                                 std::string* buffer) {
    switch (encoding) {
      case Encoding::kHex:
        return DecodeHexInto(in, field, buffer);
      case Encoding::kBase64:
        return DecodeBase64Into(in, field, buffer);
      case Encoding::kRaw:
        break;
    }
    return in;
  }

  bool sniffed_ = false;
  uint64_t first_cr_line_ = 0;
  uint64_t first_empty_key_line_ = 0;
  CsvQuoting quoting_;
  bool quoting_broken_ = false;
  std::string key_buffer_;
  std::string value_buffer_;
};

// The binary formats: a record that is wrong leaves no way to find the next
// one, so the first error sticks.
class BinaryReaderBase : public ReaderBase {
 public:
  using ReaderBase::ReaderBase;

  std::string Location() const override {
    return StrCat(in_.name(), "@", record_offset_);
  }

 protected:
  // Before the first record: false (with status_ set) for a Parquet or
  // Arrow file.
  bool Started() {
    if (started_) return true;
    started_ = true;
    return RefuseColumnar().ok();
  }
  absl::Status Reject(std::string_view problem) {
    return Fail(Malformed(problem));
  }
  // The input ends inside the record: cut short (DataLoss), not malformed.
  absl::Status Truncated(std::string_view what) {
    return Fail(absl::DataLossError(StrCat(Location(), ": ", what)));
  }
  absl::Status Truncated(size_t have, uint64_t want) {
    return Truncated(
        StrCat("truncated record (", have, " of ", want, " bytes)"));
  }

  uint64_t record_offset_ = 0;
  bool started_ = false;
};

class FixedRecordReader final : public BinaryReaderBase {
 public:
  using BinaryReaderBase::BinaryReaderBase;

  absl::StatusOr<bool> Next(std::string_view* key,
                            std::string_view* value) override {
    if (!status_.ok()) return status_;
    if (!Started()) return status_;
    absl::StatusOr<size_t> filled = in_.Fill(1);
    if (!filled.ok()) return Fail(filled.status());
    if (*filled == 0) return false;
    record_offset_ = in_.offset();
    const size_t key_size = options_.key_size;
    if (key_size > options_.max_key_size) {
      return Reject(TooLong("key", key_size, options_.max_key_size));
    }
    if (options_.value_size > options_.max_value_size) {
      return Reject(
          TooLong("value", options_.value_size, options_.max_value_size));
    }
    const size_t record_size = key_size + size_t{options_.value_size};
    filled = in_.Fill(record_size);
    if (!filled.ok()) return Fail(filled.status());
    if (*filled < record_size) return Truncated(*filled, record_size);
    *key = std::string_view(in_.data(), key_size);
    *value = std::string_view(in_.data() + key_size, options_.value_size);
    in_.Skip(record_size);
    return true;
  }
};

class LengthPrefixedRecordReader final : public BinaryReaderBase {
 public:
  using BinaryReaderBase::BinaryReaderBase;

  absl::StatusOr<bool> Next(std::string_view* key,
                            std::string_view* value) override {
    if (!status_.ok()) return status_;
    if (!Started()) return status_;
    absl::StatusOr<size_t> filled = in_.Fill(2 * kMaxVarint64Length);
    if (!filled.ok()) return Fail(filled.status());
    if (*filled == 0) return false;
    record_offset_ = in_.offset();

    const char* const start = in_.data();
    const char* const limit = start + *filled;
    uint64_t key_size, value_size;
    const char* p = start;
    for (uint64_t* size : {&key_size, &value_size}) {
      const char* next = DecodeVarint64(p, limit, size);
      if (next == nullptr) {
        // Fill() stops short of two varints' worth only at the end of the
        // input, and only the tenth byte of a varint can overflow, so a
        // varint that fails in fewer than ten bytes ran out of input.
        if (limit - p < kMaxVarint64Length) {
          return Truncated("truncated record");
        }
        return Reject("bad varint length");
      }
      p = next;
    }
    // Check the lengths before asking for that many bytes.
    if (key_size > options_.max_key_size) {
      return Reject(TooLong("key", key_size, options_.max_key_size));
    }
    if (value_size > options_.max_value_size) {
      return Reject(TooLong("value", value_size, options_.max_value_size));
    }
    const size_t header = p - start;
    // Saturates rather than wraps when max_value_size is near 2^64.
    const uint64_t record_size = SaturatingAdd(header + key_size, value_size);
    filled = in_.Fill(record_size);
    if (!filled.ok()) return Fail(filled.status());
    if (*filled < record_size) return Truncated(*filled, record_size);
    *key = std::string_view(in_.data() + header, key_size);
    *value = std::string_view(in_.data() + header + key_size, value_size);
    in_.Skip(record_size);
    return true;
  }
};

}  // namespace

absl::StatusOr<InputFormat> ParseInputFormat(std::string_view name) {
  if (name == "tsv") return InputFormat::kTsv;
  if (name == "fixed") return InputFormat::kFixed;
  if (name == "length-prefixed") return InputFormat::kLengthPrefixed;
  if (name == "csv") return InputFormat::kCsv;
  if (name == "jsonl") return InputFormat::kJsonLines;
  if (name == "arrow-columns") return InputFormat::kArrowColumns;
  return absl::InvalidArgumentError(
      StrCat("input format must be tsv, csv, jsonl, fixed, length-prefixed or "
             "arrow-columns, not ",
             name));
}

std::string_view InputFormatName(InputFormat format) {
  switch (format) {
    case InputFormat::kTsv:
      break;
    case InputFormat::kFixed:
      return "fixed";
    case InputFormat::kLengthPrefixed:
      return "length-prefixed";
    case InputFormat::kCsv:
      return "csv";
    case InputFormat::kJsonLines:
      return "jsonl";
    case InputFormat::kArrowColumns:
      return "arrow-columns";
  }
  return "tsv";
}

absl::StatusOr<Encoding> ParseEncoding(std::string_view name) {
  if (name == "raw") return Encoding::kRaw;
  if (name == "hex") return Encoding::kHex;
  if (name == "base64") return Encoding::kBase64;
  return absl::InvalidArgumentError(
      StrCat("encoding must be raw, hex or base64, not ", name));
}

absl::StatusOr<std::unique_ptr<RecordReader>> RecordReader::Open(
    const std::string& path, const RecordReaderOptions& options) {
  if (options.format == InputFormat::kFixed && options.key_size == 0 &&
      options.value_size == 0) {
    return absl::InvalidArgumentError(
        "fixed-size records need a key_size or value_size above 0");
  }
  if (options.buffer_size == 0) {
    return absl::InvalidArgumentError("the buffer size must be at least 1");
  }
  std::string name = "<stdin>";
  int fd = STDIN_FILENO;
  if (path != "-") {
    name = path;
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      // ENOENT is NotFound, EACCES PermissionDenied, and so on.
      return absl::ErrnoToStatus(errno, StrCat("cannot open ", path));
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      close(fd);
      return absl::ErrnoToStatus(EISDIR, StrCat("cannot read ", path));
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  auto stream = std::make_unique<ByteStream>(
      std::make_unique<FileSource>(std::move(name), fd), options.buffer_size);
  switch (options.format) {
    case InputFormat::kFixed:
      return std::make_unique<FixedRecordReader>(std::move(stream), options);
    case InputFormat::kLengthPrefixed:
      return std::make_unique<LengthPrefixedRecordReader>(std::move(stream),
                                                          options);
    case InputFormat::kArrowColumns:
      return NewColumnStreamReader(std::move(stream), options);
    case InputFormat::kCsv:
      return NewCsvReader(std::move(stream), options);
    case InputFormat::kJsonLines:
      return NewJsonLinesReader(std::move(stream), options);
    case InputFormat::kTsv:
      break;
  }
  return std::make_unique<TsvRecordReader>(std::move(stream), options);
}

absl::StatusOr<std::vector<std::string>> ExpandInputs(
    const std::vector<std::string>& inputs) {
  std::vector<std::string> paths;
  for (const std::string& input : inputs) {
    if (input == "-" || input.find_first_of("*?[") == std::string::npos) {
      paths.push_back(input);
      continue;
    }
    glob_t matches{};
    const int rc = glob(input.c_str(), 0, nullptr, &matches);
    std::vector<std::string> found;
    if (rc == 0) {
      found.assign(matches.gl_pathv, matches.gl_pathv + matches.gl_pathc);
    }
    globfree(&matches);
    if (rc == GLOB_NOSPACE) {
      return absl::ResourceExhaustedError(
          StrCat("out of memory expanding ", input));
    }
    if (rc != 0 && rc != GLOB_NOMATCH) {
      return absl::UnknownError(StrCat("cannot expand ", input));
    }
    if (found.empty()) {
      // A file whose name only looks like a glob ("part[1].tsv") is
      // itself.
      if (access(input.c_str(), F_OK) == 0) {
        paths.push_back(input);
        continue;
      }
      return absl::NotFoundError(StrCat("no files match ", input));
    }
    // Byte order, whatever the locale's collation.
    std::sort(found.begin(), found.end());
    for (std::string& path : found) paths.push_back(std::move(path));
  }
  return paths;
}

}  // namespace roost
