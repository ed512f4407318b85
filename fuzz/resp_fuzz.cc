// resp_fuzz: commands of the Redis protocol as roost-server's Redis front
// end meets them (server/resp_parser.h), untrusted, from a client.
//
// Input: the bytes a client sent, parsed from the front command by command
// as the front end does, under small limits (so that they are reached).
//
// Checked: each parse comes to an answer that stays inside the input
// (AddressSanitizer); a command consumed no more than there was, and its
// arguments, written again as a RESP array, parse to the same arguments and
// the same length; the command's own bytes alone parse to it too; an
// incomplete input says it needs more than it has; an error says why, as a
// "Protocol error".
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "server/resp_parser.h"

namespace roost::fuzz {
namespace {

std::string Encode(const std::vector<std::string_view>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (std::string_view a : args) {
    out += "$" + std::to_string(a.size()) + "\r\n";
    out.append(a);
    out += "\r\n";
  }
  return out;
}

}  // namespace
}  // namespace roost::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roost;
  using namespace roost::fuzz;
  RespLimits limits;
  limits.max_args = 16;
  limits.max_command_bytes = 4096;
  limits.max_inline_bytes = 256;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  RespCommand command, again;
  while (!in.empty()) {
    const RespParse parsed = ParseRespCommand(in, limits, &command);
    if (parsed == RespParse::kIncomplete) {
      if (command.needed <= in.size()) Fail("incomplete, yet needs no more");
      break;
    }
    if (parsed == RespParse::kError) {
      if (command.error.rfind("Protocol error: ", 0) != 0) {
        Fail("an error that is not a protocol error: ", command.error);
      }
      break;
    }
    if (command.consumed == 0 || command.consumed > in.size()) {
      Fail("consumed ", command.consumed, " of ", in.size());
    }
    if (command.args.size() > limits.max_args) Fail("past max_args");
    const std::string encoded = Encode(command.args);
    if (encoded.size() <= limits.max_command_bytes) {
      if (ParseRespCommand(encoded, limits, &again) != RespParse::kCommand ||
          again.args != command.args || again.consumed != encoded.size()) {
        Fail("its arguments written again do not parse to themselves");
      }
    }
    if (ParseRespCommand(in.substr(0, command.consumed), limits, &again) !=
            RespParse::kCommand ||
        again.args != command.args || again.consumed != command.consumed) {
      Fail("the command's own bytes do not parse to it");
    }
    in.remove_prefix(command.consumed);
  }
  return 0;
}
