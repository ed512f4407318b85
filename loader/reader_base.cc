#include "loader/reader_base.h"

#include <algorithm>
#include <cstring>

#include "loader/input_hints.h"

namespace roost {

absl::Status ReaderBase::RefuseColumnar() {
  absl::StatusOr<size_t> filled = in_.Fill(kColumnarMagicBytes);
  if (!filled.ok()) return Fail(filled.status());
  const std::string_view head(in_.data(),
                              std::min(*filled, kColumnarMagicBytes));
  if (auto other = ColumnarFormat(head, in_.name())) {
    return Fail(absl::FailedPreconditionError(*other));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> LineReaderBase::NextLine(bool strip_cr,
                                              std::string_view* line) {
  // Find the end of the line, reading on until a newline or the end of the
  // input. `scanned` bytes are known to hold no newline.
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
  *line = std::string_view(in_.data(), length);
  in_.Skip(newline != nullptr ? length + 1 : length);
  if (strip_cr && !line->empty() && line->back() == '\r') {
    line->remove_suffix(1);
  }
  if (line->empty()) {
    // An empty last line ("...\n\n" at the end) is no record.
    absl::StatusOr<size_t> filled = in_.Fill(1);
    if (!filled.ok()) return Fail(filled.status());
    if (*filled == 0) return false;
  }
  ++line_;
  return true;
}

absl::Status LineReaderBase::CutShort() const {
  return absl::DataLossError(StrCat(
      Location(),
      ": no newline at the end of the input: its last line may be cut "
      "short (a producer stopped mid-line); --allow-missing-final-newline "
      "reads it as a record"));
}

// Rather than buffer all of the line, drops it up to its newline.
absl::Status LineReaderBase::SkipLongLine() {
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

}  // namespace roost
