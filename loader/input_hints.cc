#include "loader/input_hints.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "util/str_cat.h"

namespace roost {
namespace {

constexpr std::string_view kReads =
    "roost-load reads TSV (key<TAB>value lines), CSV, JSON Lines, fixed-size "
    "or length-prefixed records (--input-format), plain, gzipped or "
    "zstd-compressed";

constexpr std::string_view kRoostBuild =
    "Build the table from it with roost-build, from the Python package: "
    "pip install './clients/python[batch]', then roost-build -i ";

// How a format is converted to TSV.
enum class Convert {
  kParquet,
  kArrow,
  kOrc,
  kAvro,
  kCsv,
  kJsonLines,
  kXz,
  kBzip2
};

struct Magic {
  std::string_view bytes;
  // Printable letters that could start a TSV key: they decide only with a
  // first line that is no TSV record.
  bool text;
  std::string_view what;   // "a Parquet file"
  std::string_view shown;  // what "it starts with"
  Convert convert;
};

constexpr std::string_view operator""_b(const char* s, size_t n) {
  return {s, n};
}

const Magic kMagics[] = {
    {"PAR1", true, "a Parquet file", "PAR1", Convert::kParquet},
    {"ORC", true, "an ORC file", "ORC", Convert::kOrc},
    {"FEA1", true, "a Feather (v1) file", "FEA1", Convert::kArrow},
    {"ARROW1\0\0"_b, false, "an Arrow IPC (Feather) file", "ARROW1",
     Convert::kArrow},
    {"Obj\x01"_b, false, "an Avro container file", "Avro's magic number",
     Convert::kAvro},
    {"\xfd"
     "7zXZ\0"_b,
     false, "xz-compressed", "the xz magic number", Convert::kXz},
};

// bzip2: "BZh", the block size 1-9, then a block's magic number or the
// end of stream's.
bool IsBzip2(std::string_view head) {
  if (head.size() < 10 || head.substr(0, 3) != "BZh" || head[3] < '1' ||
      head[3] > '9') {
    return false;
  }
  const std::string_view next = head.substr(4, 6);
  return next == "\x31\x41\x59\x26\x53\x59"_b ||
         next == "\x17\x72\x45\x38\x50\x90"_b;
}

// The lines of `head` to look at: its complete lines, and its last one too
// when it is the whole input; at most kSniffLines.
std::vector<std::string_view> Lines(std::string_view head, bool whole) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < head.size() && lines.size() < kSniffLines) {
    const size_t newline = head.find('\n', pos);
    if (newline == std::string_view::npos) {
      if (whole) lines.push_back(head.substr(pos));
      break;
    }
    lines.push_back(head.substr(pos, newline - pos));
    pos = newline + 1;
  }
  return lines;
}

std::string_view Trim(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || s.size() > 64 || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_';
  });
}

// The input's path as a shell word, and the file a conversion writes.
std::string ShellWord(std::string_view s) {
  const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') ||
           std::string_view("_./+-=:@,").find(c) != std::string_view::npos;
  });
  if (plain && !s.empty()) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string TsvPath(std::string_view name) {
  std::filesystem::path path{std::string(name)};
  path.replace_extension(".tsv");
  return path.string() == name ? StrCat(name, ".tsv") : path.string();
}

// "python3 -c '...' FILE > FILE.tsv" for rows that `rows` (Python code over
// sys.argv[1]) reads, the column `key` their key.
std::string PythonCommand(std::string_view imports, std::string_view rows,
                          std::string_view key, std::string_view in,
                          std::string_view out) {
  return StrCat("python3 -c 'import sys, json", imports, "; [print(r.pop(\"",
                key, "\"), json.dumps(r, default=str), sep=\"\\t\") for r in ",
                rows, "]' ", in, " > ", out);
}

std::string HowToConvert(Convert convert, std::string_view name,
                         std::string_view key) {
  const bool from_stdin = name == "<stdin>";
  const std::string in = from_stdin ? "FILE" : ShellWord(name);
  const std::string out = from_stdin ? "FILE.tsv" : ShellWord(TsvPath(name));
  std::string_view tool;
  switch (convert) {
    case Convert::kXz:
      tool = "xz";
      break;
    case Convert::kBzip2:
      tool = "bzip2";
      break;
    default:
      break;
  }
  if (!tool.empty()) {
    return StrCat(
        "Decompress it first: ",
        from_stdin ? StrCat("... | ", tool, " -dc") : StrCat(tool, " -dc ", in),
        " | roost-load build -i - ...");
  }
  if (convert == Convert::kParquet || convert == Convert::kArrow) {
    return StrCat(kRoostBuild, in, " ...");
  }
  if (convert == Convert::kCsv || convert == Convert::kJsonLines) {
    const bool csv = convert == Convert::kCsv;
    return StrCat("Read it as ", csv ? "CSV" : "JSON Lines",
                  ": roost-load build -i ", from_stdin ? "-" : in,
                  " --input-format ", csv ? "csv" : "jsonl",
                  csv ? (key.empty() ? "" : StrCat(" --key-column ", key))
                      : StrCat(" --key-field ", key.empty() ? "KEY" : key),
                  " ...");
  }
  const std::string which = key.empty() ? std::string("with KEY the key column")
                                        : StrCat("with ", key, " the key");
  if (key.empty()) key = "KEY";
  std::string command;
  switch (convert) {
    case Convert::kOrc:
      command = PythonCommand(", pyarrow.orc as orc",
                              "orc.read_table(sys.argv[1]).to_pylist()", key,
                              in, out);
      break;
    case Convert::kAvro:
      command = PythonCommand(", fastavro",
                              "fastavro.reader(open(sys.argv[1], \"rb\"))", key,
                              in, out);
      break;
    default:
      break;
  }
  return StrCat("Convert it to TSV first, e.g. ", which,
                " and the rest of each row a JSON value: ", command);
}

std::string Message(std::string_view name, std::string_view what,
                    std::string_view why, Convert convert,
                    std::string_view key = "") {
  return StrCat(name, ": ", what, " (", why, "), not TSV: ", kReads, ". ",
                HowToConvert(convert, name, key));
}

std::string FirstLines(size_t n) {
  return n == 1 ? std::string("its first line")
                : StrCat("its first ", n, " lines");
}

// CSV or JSON Lines: lines none of which holds a tab.
std::optional<std::string> TextFormat(std::string_view head, bool whole,
                                      std::string_view name) {
  std::vector<std::string_view> lines = Lines(head, whole);
  // Blank lines (a JSON Lines file may end in one) say nothing.
  std::erase_if(lines, [](std::string_view l) { return Trim(l).empty(); });
  if (lines.empty()) return std::nullopt;
  for (std::string_view line : lines) {
    if (line.find('\t') != std::string_view::npos) return std::nullopt;
  }
  const bool json = std::all_of(lines.begin(), lines.end(), [](auto line) {
    const std::string_view t = Trim(line);
    return t.front() == '{' && t.back() == '}';
  });
  if (json) {
    // The first member of the first object, as the key of the example.
    std::string_view key;
    std::string_view t = Trim(lines[0]).substr(1);
    t = Trim(t);
    if (!t.empty() && t[0] == '"') {
      const size_t end = t.find('"', 1);
      if (end != std::string_view::npos && IsIdentifier(t.substr(1, end - 1))) {
        key = t.substr(1, end - 1);
      }
    }
    const std::string why =
        lines.size() == 1
            ? std::string("its first line is a JSON object, without a tab")
            : StrCat("every one of its first ", lines.size(),
                     " lines is a JSON object, none holds a tab");
    return Message(name, "JSON Lines", why, Convert::kJsonLines, key);
  }
  if (lines[0].find(',') == std::string_view::npos) return std::nullopt;
  // The first field of a header line, as the key of the example.
  std::string_view first = Trim(lines[0].substr(0, lines[0].find(',')));
  if (first.size() >= 2 && first.front() == '"' && first.back() == '"') {
    first = first.substr(1, first.size() - 2);
  }
  const std::string why =
      lines.size() == 1 ? std::string("commas but no tab in its first line")
                        : StrCat("no tab in ", FirstLines(lines.size()),
                                 ", commas in the first");
  return Message(name, "CSV", why, Convert::kCsv,
                 IsIdentifier(first) ? first : std::string_view());
}

}  // namespace

std::optional<std::string> OtherFormat(std::string_view head, bool whole,
                                       std::string_view name) {
  const std::string_view first_line = head.substr(0, head.find('\n'));
  const bool first_line_is_no_record =
      first_line.find('\t') == std::string_view::npos ||
      first_line.find('\0') != std::string_view::npos;
  for (const Magic& m : kMagics) {
    if (head.substr(0, m.bytes.size()) == m.bytes &&
        (!m.text || first_line_is_no_record)) {
      return Message(name, m.what, StrCat("it starts with ", m.shown),
                     m.convert);
    }
  }
  if (IsBzip2(head)) {
    return Message(name, "bzip2-compressed",
                   "it starts with the bzip2 magic number", Convert::kBzip2);
  }
  return TextFormat(head, whole, name);
}

std::optional<std::string> ColumnarFormat(std::string_view head,
                                          std::string_view name) {
  std::string_view what;
  std::string_view shown;
  if (head.substr(0, 8) == "ARROW1\0\0"_b) {
    what = "an Arrow IPC (Feather) file";
    shown = "ARROW1";
  } else if (head.substr(0, 4) == "PAR1") {
    // A Parquet file's first page header follows, Thrift's binary: a CSV
    // header or a key that starts with PAR1 goes on in text.
    const unsigned char next = head.size() > 4 ? head[4] : 0;
    const bool text =
        next >= 0x20 || next == '\t' || next == '\n' || next == '\r';
    if (head.size() > 4 && text) return std::nullopt;
    what = "a Parquet file";
    shown = "PAR1";
  } else {
    return std::nullopt;
  }
  const std::string in =
      name == "<stdin>" ? std::string("FILE") : ShellWord(name);
  return StrCat(name, ": ", what, " (it starts with ", shown,
                "), which roost-load does not read: ", kReads, ". ",
                kRoostBuild, in, " ...");
}

bool IsCsvQuoted(std::string_view value) {
  if (value.size() < 4 || value.front() != '"' || value.back() != '"') {
    return false;
  }
  bool doubled = false;
  for (size_t i = 1; i + 1 < value.size(); ++i) {
    if (value[i] != '"') continue;
    // A quote inside must be the first of two, both before the last one.
    if (i + 2 >= value.size() || value[i + 1] != '"') return false;
    ++i;
    doubled = true;
  }
  return doubled;
}

}  // namespace roost
