// ParseRespCommand: one command of the Redis protocol (RESP2) from the front
// of what a client sent, for the Redis front end (redis_front.h).
//
// A command is an array of bulk strings ("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
// what every Redis client sends) or an inline line of words separated by
// spaces ("PING\r\n", what a person types into nc). The arguments are views
// into the input, valid while it is. Input that cannot be a command, or
// that passes the limits, is an error naming what was wrong, as Redis words
// its "Protocol error: ..." replies; the connection is then closed, since
// where the next command starts is unknown.
//
// Example:
//   RespCommand command;
//   switch (ParseRespCommand(buffer, limits, &command)) {
//     case RespParse::kCommand: Run(command.args);
//                               buffer.remove_prefix(command.consumed); break;
//     case RespParse::kIncomplete: /* read more */ break;
//     case RespParse::kError: Reply("-ERR " + command.error); Close(); break;
//   }
#ifndef ROOST_SERVER_RESP_PARSER_H_
#define ROOST_SERVER_RESP_PARSER_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace roost {

struct RespLimits {
  // Arguments of one command (its name included).
  size_t max_args = 1 << 20;
  // Bytes of one command, framing included: a bulk string, or the whole
  // command, past this is refused before it is read to its end.
  size_t max_command_bytes = 4 << 20;
  // Bytes of an inline command's line (Redis: 64 KiB).
  size_t max_inline_bytes = 64 << 10;
};

enum class RespParse { kCommand, kIncomplete, kError };

struct RespCommand {
  std::vector<std::string_view> args;
  size_t consumed = 0;  // bytes of the input the command took
  // With kIncomplete: no call can succeed before the input holds this many
  // bytes (a bulk string's announced end), so that a long argument
  // arriving in many reads is not parsed again at each.
  size_t needed = 0;
  std::string error;  // with kError
};

// Parses the command at the front of `in` into *out. kIncomplete: `in`
// holds a valid beginning; read more (to out->needed bytes at least) and
// call again with all of it. Parsing again from the start is cheap as long
// as max_args bounds a command's small arguments: the caller sets it from
// --max-batch. An
// empty inline line is skipped (consumed, no arguments) as Redis does.
RespParse ParseRespCommand(std::string_view in, const RespLimits& limits,
                           RespCommand* out);

}  // namespace roost

#endif  // ROOST_SERVER_RESP_PARSER_H_
