#include "server/resp_parser.h"

#include <cstdint>

#include "util/str_cat.h"

namespace roost {
namespace {

// The decimal number of `digits` ("-1" allowed when `allow_minus_one`), or
// -2 when it is not one Redis would take.
int64_t ParseLength(std::string_view digits, bool allow_minus_one) {
  if (allow_minus_one && digits == "-1") return -1;
  if (digits.empty() || digits.size() > 18) return -2;
  int64_t n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -2;
    n = n * 10 + (c - '0');
  }
  return n;
}

// The line at `pos` of `in`, up to "\r\n" (not included); sets *next past
// it. False while the line is not complete.
bool Line(std::string_view in, size_t pos, std::string_view* line,
          size_t* next) {
  const size_t end = in.find("\r\n", pos);
  if (end == std::string_view::npos) return false;
  *line = in.substr(pos, end - pos);
  *next = end + 2;
  return true;
}

RespParse Error(RespCommand* out, std::string message) {
  out->error = StrCat("Protocol error: ", message);
  return RespParse::kError;
}

RespParse ParseInline(std::string_view in, const RespLimits& limits,
                      RespCommand* out) {
  const size_t end = in.find('\n');
  if (end == std::string_view::npos) {
    if (in.size() > limits.max_inline_bytes) {
      return Error(out, StrCat("too big inline request (over ",
                               limits.max_inline_bytes, " bytes)"));
    }
    return RespParse::kIncomplete;
  }
  if (end > limits.max_inline_bytes) {
    return Error(out, StrCat("too big inline request (over ",
                             limits.max_inline_bytes, " bytes)"));
  }
  std::string_view line = in.substr(0, end);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  out->consumed = end + 1;
  size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
    if (pos == line.size()) break;
    if (line[pos] == '"' || line[pos] == '\'') {
      // Redis unquotes these; roost's inline form is for a person's PING
      // or GET of a plain key: quoted words are refused, not misread.
      return Error(out,
                   "quoted inline arguments are not supported; send "
                   "the command as a RESP array");
    }
    size_t word = pos;
    while (pos < line.size() && line[pos] != ' ' && line[pos] != '\t') ++pos;
    if (out->args.size() == limits.max_args) {
      return Error(out, StrCat("more than ", limits.max_args, " arguments"));
    }
    out->args.push_back(line.substr(word, pos - word));
  }
  return RespParse::kCommand;
}

}  // namespace

RespParse ParseRespCommand(std::string_view in, const RespLimits& limits,
                           RespCommand* out) {
  out->args.clear();
  out->consumed = 0;
  out->needed = in.size() + 1;
  out->error.clear();
  if (in.empty()) return RespParse::kIncomplete;
  if (in[0] != '*') return ParseInline(in, limits, out);

  std::string_view line;
  size_t pos = 0;
  if (!Line(in, 1, &line, &pos)) {
    if (in.size() > 24) return Error(out, "invalid multibulk length");
    return RespParse::kIncomplete;
  }
  const int64_t count = ParseLength(line, true);
  if (count < -1) return Error(out, "invalid multibulk length");
  if (count > static_cast<int64_t>(limits.max_args)) {
    return Error(out, StrCat("a command of ", count, " arguments; at most ",
                             limits.max_args, " are taken"));
  }
  // "*0" and "*-1" are no command: consumed, nothing to run.
  for (int64_t i = 0; i < count; ++i) {
    if (pos == in.size()) return RespParse::kIncomplete;
    if (in[pos] != '$') {
      return Error(out, StrCat("expected '$', got '",
                               std::string_view(&in[pos], 1), "'"));
    }
    if (!Line(in, pos + 1, &line, &pos)) {
      if (in.size() - pos > 24) return Error(out, "invalid bulk length");
      return RespParse::kIncomplete;
    }
    const int64_t size = ParseLength(line, false);
    if (size < 0) return Error(out, "invalid bulk length");
    if (static_cast<uint64_t>(size) + pos > limits.max_command_bytes) {
      return Error(out,
                   StrCat("a command of more than ", limits.max_command_bytes,
                          " bytes (--max-request-size)"));
    }
    if (in.size() - pos < static_cast<size_t>(size) + 2) {
      out->needed = pos + size + 2;
      return RespParse::kIncomplete;
    }
    if (in[pos + size] != '\r' || in[pos + size + 1] != '\n') {
      return Error(out, "a bulk string does not end with CRLF");
    }
    out->args.push_back(in.substr(pos, size));
    pos += size + 2;
  }
  out->consumed = pos;
  return RespParse::kCommand;
}

}  // namespace roost
