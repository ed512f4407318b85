// ParseRespCommand (server/resp_parser.h): commands whole and cut at every
// byte, pipelines, inline commands, and each refusal with its message.

#include "server/resp_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace roost {
namespace {

using Args = std::vector<std::string>;

Args ToArgs(const RespCommand& c) { return Args(c.args.begin(), c.args.end()); }

TEST(RespParserTest, ArrayCommandsWholeAndCutAtEveryByte) {
  const std::string get = "*2\r\n$3\r\nGET\r\n$5\r\nt:a\r\n\r\n";
  const std::string binary =
      std::string("*2\r\n$3\r\nGET\r\n$4\r\n\0\r\n\n\r\n", 23);
  const std::string empty = "*2\r\n$4\r\nMGET\r\n$0\r\n\r\n";
  struct Case {
    std::string bytes;
    Args args;
  };
  const std::vector<Case> cases = {
      {get, {"GET", "t:a\r\n"}},
      {binary, {"GET", std::string("\0\r\n\n", 4)}},
      {empty, {"MGET", ""}},
  };
  const RespLimits limits;
  for (const Case& c : cases) {
    RespCommand command;
    ASSERT_EQ(ParseRespCommand(c.bytes, limits, &command), RespParse::kCommand);
    EXPECT_EQ(ToArgs(command), c.args);
    EXPECT_EQ(command.consumed, c.bytes.size());
    // Any shorter prefix is incomplete, never an error or a command.
    for (size_t cut = 0; cut < c.bytes.size(); ++cut) {
      EXPECT_EQ(ParseRespCommand(std::string_view(c.bytes).substr(0, cut),
                                 limits, &command),
                RespParse::kIncomplete)
          << cut;
      EXPECT_LE(command.needed, c.bytes.size()) << cut;
      EXPECT_GT(command.needed, cut) << cut;
    }
  }
}

TEST(RespParserTest, APipelineIsTakenOneCommandAtATime) {
  std::string in =
      "*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING x\r\n";
  const RespLimits limits;
  RespCommand command;
  std::vector<Args> seen;
  std::string_view rest = in;
  while (ParseRespCommand(rest, limits, &command) == RespParse::kCommand) {
    seen.push_back(ToArgs(command));
    rest.remove_prefix(command.consumed);
  }
  EXPECT_TRUE(rest.empty());
  EXPECT_EQ(seen, (std::vector<Args>{{"PING"}, {"GET", "k"}, {"PING", "x"}}));
}

TEST(RespParserTest, InlineCommands) {
  const RespLimits limits;
  RespCommand command;
  ASSERT_EQ(ParseRespCommand("  GET\t t:k  \r\n", limits, &command),
            RespParse::kCommand);
  EXPECT_EQ(ToArgs(command), (Args{"GET", "t:k"}));
  ASSERT_EQ(ParseRespCommand("PING\n", limits, &command), RespParse::kCommand);
  EXPECT_EQ(ToArgs(command), Args{"PING"});
  // An empty line is consumed and runs nothing.
  ASSERT_EQ(ParseRespCommand("\r\nPING\r\n", limits, &command),
            RespParse::kCommand);
  EXPECT_TRUE(command.args.empty());
  EXPECT_EQ(command.consumed, 2u);
  EXPECT_EQ(ParseRespCommand("PIN", limits, &command), RespParse::kIncomplete);
  // "*0" and "*-1" are no command, as Redis takes them.
  ASSERT_EQ(ParseRespCommand("*0\r\n", limits, &command), RespParse::kCommand);
  EXPECT_TRUE(command.args.empty());
  ASSERT_EQ(ParseRespCommand("*-1\r\n", limits, &command), RespParse::kCommand);
  EXPECT_TRUE(command.args.empty());
}

TEST(RespParserTest, RefusalsNameWhatWasWrong) {
  RespLimits limits;
  limits.max_args = 4;
  limits.max_command_bytes = 100;
  limits.max_inline_bytes = 20;
  struct Case {
    std::string bytes, error;
  };
  const std::vector<Case> cases = {
      {"*x\r\n", "Protocol error: invalid multibulk length"},
      {"*-2\r\n", "Protocol error: invalid multibulk length"},
      {"*99999999999999999999\r\n", "Protocol error: invalid multibulk length"},
      {"*1234567890123456789012345",
       "Protocol error: invalid multibulk length"},
      {"*5\r\n",
       "Protocol error: a command of 5 arguments; at most 4 are taken"},
      {"*1\r\n+PING\r\n", "Protocol error: expected '$', got '+'"},
      {"*1\r\n$-1\r\n", "Protocol error: invalid bulk length"},
      {"*1\r\n$1x\r\n", "Protocol error: invalid bulk length"},
      {"*1\r\n$4\r\nPINGPONG",
       "Protocol error: a bulk string does not end "
       "with CRLF"},
      {"*1\r\n$101\r\n",
       "Protocol error: a command of more than 100 bytes (--max-request-size)"},
      {"*2\r\n$50\r\n" + std::string(50, 'a') + "\r\n$50\r\n",
       "Protocol error: a command of more than 100 bytes (--max-request-size)"},
      {std::string(21, 'x'),
       "Protocol error: too big inline request (over 20 bytes)"},
      {"a b c d e\r\n", "Protocol error: more than 4 arguments"},
      {"GET 'k'\r\n",
       "Protocol error: quoted inline arguments are not supported; send the "
       "command as a RESP array"},
  };
  for (const Case& c : cases) {
    RespCommand command;
    EXPECT_EQ(ParseRespCommand(c.bytes, limits, &command), RespParse::kError)
        << c.bytes;
    EXPECT_EQ(command.error, c.error) << c.bytes;
  }
}

}  // namespace
}  // namespace roost
