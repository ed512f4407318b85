// What roost-load can tell about an input read as TSV that it cannot read
// right: a file of another format (Parquet, Arrow, ORC, Avro, CSV, JSON
// Lines, or TSV compressed with xz or bzip2), named with the flag that
// reads it (CSV, JSON Lines), the tool that does (Parquet, Arrow:
// roost-build) or a command that converts it; and values that a CSV writer
// quote-wrapped. Parquet and Arrow files are recognised in every input
// format (ColumnarFormat).
//
// Example:
//   if (auto other = OtherFormat(head, head_is_all, "users.parquet")) {
//     return absl::FailedPreconditionError(*other);
//     // "users.parquet: a Parquet file (it starts with PAR1), not TSV: ..."
//   }
//   IsCsvQuoted("\"{\"\"id\"\":0}\"")  // true
//
// Recognising a format by its first bytes: a binary magic number (xz,
// bzip2, Arrow, Avro) is no TSV line anyone writes, so it decides alone. A
// magic number of printable letters (PAR1, ORC, FEA1) could start a key, so
// it decides only when the first line is no TSV record either: it holds no
// tab, or a zero byte. CSV and JSON Lines are recognised by their lines:
// none of the first ones holds a tab (so none is a TSV record), and they
// hold commas, or are each one JSON object.
#ifndef ROOST_LOADER_INPUT_HINTS_H_
#define ROOST_LOADER_INPUT_HINTS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace roost {

// How many bytes at the start of an input OtherFormat is given, at most,
// and how many of their lines it looks at.
inline constexpr size_t kSniffBytes = size_t{64} << 10;
inline constexpr size_t kSniffLines = 100;

// When `head`, the first bytes of the input called `name` (all of it when
// `whole`), is plainly of another format than TSV: a message naming the
// input, what it is and why it looks so, what roost-load reads, and a
// command that converts it. std::nullopt when it may be TSV.
std::optional<std::string> OtherFormat(std::string_view head, bool whole,
                                       std::string_view name);

// How many bytes at the start of an input ColumnarFormat needs.
inline constexpr size_t kColumnarMagicBytes = 8;

// When `head`, the first bytes of the input called `name`, is a Parquet
// file (PAR1 and then no text byte) or an Arrow IPC file (ARROW1\0\0),
// whatever the input format: a message naming it and roost-build, the
// Python package's command that reads it. std::nullopt otherwise.
std::optional<std::string> ColumnarFormat(std::string_view head,
                                          std::string_view name);

// Whether `value` is a field as a CSV writer quotes one that holds quotes:
// wrapped in '"', with every '"' inside doubled and at least one there
// ("{""id"":0}"). A JSON string ("hello", "say \"hi\"") is not.
bool IsCsvQuoted(std::string_view value);

}  // namespace roost

#endif  // ROOST_LOADER_INPUT_HINTS_H_
