// RESP2, the protocol of Redis, as bench/redis_load.cc speaks it: commands
// written as arrays of bulk strings, replies read one element at a time out
// of whatever bytes have arrived so far.
//
// Every line ends in CRLF:
//   simple string  "+" text CRLF             text holds no CR or LF
//   error          "-" text CRLF             e.g. "-ERR unknown command"
//   integer        ":" ["-"] digits CRLF
//   bulk string    "$" length CRLF bytes CRLF, or "$-1" CRLF (nil)
//   array          "*" count CRLF, then count elements, or "*-1" CRLF (nil)
// So GET of the 8-byte key k is the 27 bytes
//   *2\r\n$3\r\nGET\r\n$8\r\n<k: 8 bytes>\r\n
// and its answer "$8\r\n<8 bytes>\r\n", or "$-1\r\n" when k is absent.
//
// An array's header is an element of its own (kArray, its count in
// `integer`), and its elements are the next ones: a caller that knows what
// shape to expect reads an MGET reply of 1000 values element by element as
// it arrives, without holding it whole or parsing any byte twice.
//
// Example:
//   std::string request;
//   AppendArrayHeader(&request, 2);
//   AppendBulk(&request, "GET");
//   AppendBulk(&request, key);
//   ... send it, then read into `received` ...
//   RespElement e;
//   switch (ParseRespElement(received, &e)) {
//     case RespParse::kIncomplete:  // read more; call again from the start
//     case RespParse::kMalformed:   // e.text says why; drop the connection
//     case RespParse::kOk:          // the first e.size bytes were e
//   }
#ifndef ROOST_BENCH_RESP_H_
#define ROOST_BENCH_RESP_H_

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace roost::bench {

// The longest simple string, error or header line accepted (with its CRLF).
inline constexpr size_t kRespMaxLine = 64 * 1024;
// The longest bulk string accepted: Redis's own default proto-max-bulk-len.
inline constexpr int64_t kRespMaxBulk = int64_t{512} << 20;

enum class RespType {
  kSimpleString,
  kError,
  kInteger,
  kBulkString,
  kNil,
  kArray
};

inline const char* RespTypeName(RespType t) {
  switch (t) {
    case RespType::kSimpleString:
      return "simple string";
    case RespType::kError:
      return "error";
    case RespType::kInteger:
      return "integer";
    case RespType::kBulkString:
      return "bulk string";
    case RespType::kNil:
      return "nil";
    case RespType::kArray:
      return "array";
  }
  return "?";
}

struct RespElement {
  RespType type = RespType::kNil;
  // kSimpleString, kError: the text; kBulkString: the bytes. A view into the
  // buffer given to ParseRespElement, valid as long as those bytes are. After
  // kMalformed: what is wrong (a static string).
  std::string_view text;
  // kInteger: the number; kArray: the element count.
  int64_t integer = 0;
  // The bytes the element takes, headers and CRLFs included.
  size_t size = 0;
};

enum class RespParse { kOk, kIncomplete, kMalformed };

namespace resp_internal {

inline RespParse Malformed(RespElement* out, const char* why) {
  out->text = why;
  return RespParse::kMalformed;
}

// Finds the CRLF ending the line that starts at in[0]; sets *end to the
// CR's offset.
inline RespParse FindLineEnd(std::string_view in, size_t* end,
                             RespElement* out) {
  const size_t limit = std::min(in.size(), kRespMaxLine);
  const void* cr = std::memchr(in.data(), '\r', limit);
  if (cr == nullptr) {
    return limit == kRespMaxLine
               ? Malformed(out, "a line longer than 64 KiB without CRLF")
               : RespParse::kIncomplete;
  }
  *end = static_cast<size_t>(static_cast<const char*>(cr) - in.data());
  if (*end + 1 == in.size()) return RespParse::kIncomplete;
  if (in[*end + 1] != '\n') return Malformed(out, "a CR not followed by LF");
  return RespParse::kOk;
}

// Parses all of `s` as an optional '-' and one or more decimal digits.
inline bool ParseInt(std::string_view s, int64_t* v) {
  if (s.empty() || s[0] == '+') return false;
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, *v);
  return ec == std::errc() && ptr == end;
}

}  // namespace resp_internal

// Parses the element that starts at in[0]. kOk: *out is it. kIncomplete:
// `in` holds only part of it. kMalformed: `in` cannot start an element;
// out->text says why.
inline RespParse ParseRespElement(std::string_view in, RespElement* out) {
  using resp_internal::Malformed;
  if (in.empty()) return RespParse::kIncomplete;
  size_t cr = 0;
  if (const RespParse r = resp_internal::FindLineEnd(in, &cr, out);
      r != RespParse::kOk) {
    return r;
  }
  const std::string_view line = in.substr(1, cr - 1);
  out->size = cr + 2;
  switch (in[0]) {
    case '+':
    case '-':
      if (line.find('\n') != std::string_view::npos) {
        return Malformed(out, "an LF inside a simple string or error");
      }
      out->type = in[0] == '+' ? RespType::kSimpleString : RespType::kError;
      out->text = line;
      return RespParse::kOk;
    case ':':
      if (!resp_internal::ParseInt(line, &out->integer)) {
        return Malformed(out, "an integer that is not a decimal number");
      }
      out->type = RespType::kInteger;
      return RespParse::kOk;
    case '*': {
      int64_t count = 0;
      if (!resp_internal::ParseInt(line, &count) || count < -1 ||
          count > INT32_MAX) {
        return Malformed(out, "an array count that is not -1 to 2^31-1");
      }
      out->type = count == -1 ? RespType::kNil : RespType::kArray;
      out->integer = count;
      return RespParse::kOk;
    }
    case '$': {
      int64_t length = 0;
      if (!resp_internal::ParseInt(line, &length) || length < -1 ||
          length > kRespMaxBulk) {
        return Malformed(out, "a bulk string length that is not -1 to 512 MiB");
      }
      if (length == -1) {
        out->type = RespType::kNil;
        return RespParse::kOk;
      }
      const size_t body = out->size;
      const size_t n = static_cast<size_t>(length);
      if (in.size() < body + n + 2) return RespParse::kIncomplete;
      if (in[body + n] != '\r' || in[body + n + 1] != '\n') {
        return Malformed(out, "a bulk string not followed by CRLF");
      }
      out->type = RespType::kBulkString;
      out->text = in.substr(body, n);
      out->size = body + n + 2;
      return RespParse::kOk;
    }
    default:
      return Malformed(out, "a reply that starts with none of + - : $ *");
  }
}

// Appends "*count\r\n": a command of `count` arguments follows.
inline void AppendArrayHeader(std::string* out, size_t count) {
  char digits[24];
  const auto r = std::to_chars(digits, digits + sizeof(digits), count);
  out->push_back('*');
  out->append(digits, static_cast<size_t>(r.ptr - digits));
  out->append("\r\n");
}

// Appends `s` as a bulk string; returns the offset of its first byte in
// *out, where a caller may overwrite it later with as many other bytes.
inline size_t AppendBulk(std::string* out, std::string_view s) {
  char digits[24];
  const auto r = std::to_chars(digits, digits + sizeof(digits), s.size());
  out->push_back('$');
  out->append(digits, static_cast<size_t>(r.ptr - digits));
  out->append("\r\n");
  const size_t offset = out->size();
  out->append(s);
  out->append("\r\n");
  return offset;
}

}  // namespace roost::bench

#endif  // ROOST_BENCH_RESP_H_
