// What the record readers (record_reader.cc, csv_reader.cc,
// json_lines_reader.cc) share: the window on the input, the limits, a
// status that once set sticks, and the check that refuses columnar files
// (Parquet, Arrow) whatever the input format; and what the line formats
// (TSV, JSON Lines) share: finding, counting and skipping lines. Internal
// to loader/.
#ifndef ROOST_LOADER_READER_BASE_H_
#define ROOST_LOADER_READER_BASE_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "loader/input_stream.h"
#include "loader/record_reader.h"
#include "util/str_cat.h"

namespace roost {

inline constexpr uint64_t kMaxSize = std::numeric_limits<uint64_t>::max();

inline uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return a > kMaxSize - b ? kMaxSize : a + b;
}

// Twice the key and value limits together, plus 64 KiB: the longest CSV
// row or JSON line that may hold a key and a value within them among other
// fields (quoting at most doubles a field), saturating.
inline uint64_t MaxRowSize(uint64_t max_key_size, uint64_t max_value_size) {
  const uint64_t both = SaturatingAdd(max_key_size, max_value_size);
  return SaturatingAdd(both > kMaxSize / 2 ? kMaxSize : both * 2,
                       uint64_t{64} << 10);
}

inline std::string TooLong(std::string_view what, uint64_t size,
                           uint64_t limit) {
  return StrCat(what, " of ", size, " bytes exceeds the limit of ", limit);
}

// The three readers' base: the window, the limits, and a status that, once
// an I/O error or a final malformed record sets it, every later Next()
// returns (stopped()).
class ReaderBase : public RecordReader {
 public:
  ReaderBase(std::unique_ptr<ByteStream> stream,
             const RecordReaderOptions& options)
      : in_(std::move(stream), options.buffer_size), options_(options) {}

  uint64_t bytes_read() const override { return in_.bytes_read(); }
  bool stopped() const override { return !status_.ok(); }

 protected:
  // InvalidArgument with the location in front of `problem`.
  absl::Status Malformed(std::string_view problem) const {
    return absl::InvalidArgumentError(StrCat(Location(), ": ", problem));
  }
  // Remembers `status` for every later call, and returns it.
  absl::Status Fail(absl::Status status) {
    status_ = std::move(status);
    return status_;
  }
  // Before the first record, for the formats other than TSV (whose own
  // check, input_hints.h's OtherFormat, covers these too): refuses a
  // Parquet or Arrow file, FailedPrecondition naming roost-build. Sticks.
  absl::Status RefuseColumnar();

  InputBuffer in_;
  const RecordReaderOptions options_;
  absl::Status status_;
};

// The base of the readers whose records are lines (TSV, JSON Lines): the
// next line found in the window, its number, and the line too long for the
// limits skipped rather than buffered. Location() is FILE:LINE.
class LineReaderBase : public ReaderBase {
 public:
  // `max_line`: the longest line the limits allow, without its newline.
  LineReaderBase(std::unique_ptr<ByteStream> stream,
                 const RecordReaderOptions& options, uint64_t max_line)
      : ReaderBase(std::move(stream), options), max_line_(max_line) {}

  std::string Location() const override {
    return StrCat(in_.name(), ":", line_);
  }

 protected:
  // Reads on to the end of the next line and takes it from the window:
  // true with *line its bytes, without its newline and, with `strip_cr`,
  // without a "\r" before it, and line_ its number; false at the end of
  // the input, where an empty last line ("...\n\n") is no line. A line
  // that ends the input with no newline after it is input cut short
  // (DataLoss, sticks) unless allow_missing_final_newline; a line longer
  // than max_line_ is skipped to its newline and reported (Malformed; the
  // lines after it are read). *line is valid until the window next moves.
  absl::StatusOr<bool> NextLine(bool strip_cr, std::string_view* line);

  const uint64_t max_line_;
  uint64_t line_ = 0;  // the number of the last line taken

 private:
  // The input ends in the middle of line line_.
  absl::Status CutShort() const;
  // The line in the window is longer than max_line_: drops it up to its
  // newline and reports it.
  absl::Status SkipLongLine();
};

}  // namespace roost

#endif  // ROOST_LOADER_READER_BASE_H_
