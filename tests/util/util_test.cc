// util/: the helpers every folder shares. Most are exercised through their
// users' suites; these are the cases those cannot reach.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"
#include "util/cli.h"
#include "util/encoding.h"
#include "util/file.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(WriteFileAtomicallyTest, ReplacesTheFileWholeAndLeavesNothingElse) {
  ScratchDir scratch;
  const std::string path = scratch.File("state");
  ASSERT_OK(WriteFileAtomically(path, "first"));
  EXPECT_EQ(ReadFile(path), "first");
  ASSERT_OK(WriteFileAtomically(path, std::string(1 << 20, 'x'), 0600));
  EXPECT_EQ(ReadFile(path), std::string(1 << 20, 'x'));
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(Names(scratch.path().string()), std::vector<std::string>{"state"});
}

TEST(WriteFileAtomicallyTest, AFailedRenameNamesThePathAndLeavesNoTemporary) {
  ScratchDir scratch;
  const std::string path = scratch.File("taken");
  fs::create_directories(path + "/inside");  // rename(2) over it: EISDIR
  const absl::Status s = WriteFileAtomically(path, "x");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(std::string(s.message()).rfind("cannot write " + path + ": ", 0),
            0u)
      << s;
  EXPECT_EQ(Names(scratch.path().string()), std::vector<std::string>{"taken"});
}

std::string Message(const absl::Status& status) {
  return std::string(status.message());
}

// The decoders: every error names the field, the character and where.

TEST(EncodingTest, HexDecodes) {
  EXPECT_EQ(*DecodeHex(""), "");
  EXPECT_EQ(*DecodeHex("00ff7F80"), std::string("\x00\xff\x7f\x80", 4));
  EXPECT_EQ(*DecodeHex("DeadBeef"), "\xde\xad\xbe\xef");
}

TEST(EncodingTest, HexRejects) {
  EXPECT_EQ(Message(DecodeHex("abc", "key").status()),
            "bad hex in key (odd length)");
  EXPECT_EQ(Message(DecodeHex("abcg", "key").status()),
            "bad hex in key (character 'g' at 3)");
  EXPECT_EQ(Message(DecodeHex("x0", "value").status()),
            "bad hex in value (character 'x' at 0)");
  EXPECT_EQ(Message(DecodeHex(std::string("00\0a", 4), "key").status()),
            "bad hex in key (character '\\x00' at 2)");
  EXPECT_EQ(Message(DecodeHex("0x12", "key").status()),
            "bad hex in key (character 'x' at 1)");
  EXPECT_EQ(Message(DecodeHex("12 4", "key").status()),
            "bad hex in key (character ' ' at 2)");
}

TEST(EncodingTest, Base64DecodesRfc4648VectorsPaddedAndNot) {
  const std::vector<std::pair<std::string, std::string>> vectors = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(*DecodeBase64(encoded), plain) << encoded;
    std::string unpadded = encoded;
    while (!unpadded.empty() && unpadded.back() == '=') unpadded.pop_back();
    EXPECT_EQ(*DecodeBase64(unpadded), plain) << unpadded;
  }
  // Every byte value, and both characters that differ from URL-safe base64.
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  EXPECT_EQ(*DecodeBase64(EncodeBase64(all)), all);
  EXPECT_EQ(*DecodeBase64("+/+/"), "\xfb\xff\xbf");
}

TEST(EncodingTest, Base64Rejects) {
  auto error = [](std::string_view in) {
    return Message(DecodeBase64(in, "value").status());
  };
  EXPECT_EQ(error("ab!c"), "bad base64 in value (character '!' at 2)");
  EXPECT_EQ(error("Zm9v!"), "bad base64 in value (length 5 is not valid)");
  EXPECT_EQ(error("Zm9vY!=="), "bad base64 in value (character '!' at 5)");
  EXPECT_EQ(error("Z"), "bad base64 in value (length 1 is not valid)");
  EXPECT_EQ(error("Zg="), "bad base64 in value (bad padding)");
  EXPECT_EQ(error("Zg==="), "bad base64 in value (bad padding)");
  EXPECT_EQ(error("Z==="), "bad base64 in value (bad padding)");
  EXPECT_EQ(error("===="), "bad base64 in value (bad padding)");
  EXPECT_EQ(error("Zg==Zg=="),
            "bad base64 in value (character 'Z' at 4 after padding)");
  EXPECT_EQ(error("Zm\nv"), "bad base64 in value (character '\\x0a' at 2)");
  EXPECT_EQ(error(" Zm9"), "bad base64 in value (character ' ' at 0)");
  EXPECT_EQ(error("Zm-_"), "bad base64 in value (character '-' at 2)");
}

TEST(EncodingTest, DecodeIntoReusesTheBuffer) {
  std::string buffer;
  absl::StatusOr<std::string_view> a = DecodeHexInto("010203", "key", &buffer);
  ASSERT_OK(a);
  EXPECT_EQ(*a, "\x01\x02\x03");
  absl::StatusOr<std::string_view> b = DecodeBase64Into("BA", "key", &buffer);
  ASSERT_OK(b);
  EXPECT_EQ(*b, "\x04");
  EXPECT_EQ(b->data(), buffer.data());
  EXPECT_GE(buffer.size(), 3u);  // never shrinks
}

// Abseil's encoders, as roost-get prints values.
TEST(EncodingTest, EncodersAreTheInversesOfTheDecoders) {
  const std::string bytes("\x00\x01\xfe\xff a\n", 7);
  EXPECT_EQ(EncodeHex("a\n"), "610a");
  EXPECT_EQ(EncodeBase64("ab"), "YWI=");
  EXPECT_EQ(*DecodeHex(EncodeHex(bytes)), bytes);
  for (size_t n = 0; n <= bytes.size(); ++n) {
    EXPECT_EQ(*DecodeBase64(EncodeBase64(bytes.substr(0, n))),
              bytes.substr(0, n));
  }
}

// The "did you mean" of the four programs' unknown flags and subcommands
// (tests/util/cli_test.cc has them end to end).
TEST(ClosestMatchTest, OneEditInAShortWordMoreInALongOne) {
  const std::vector<std::string> flags = {
      "--input", "--output", "--index-search", "--max-message-size",
      "--addr",  "-i"};
  struct Case {
    std::string word;
    std::optional<std::string> want;
  };
  for (const Case& c : std::vector<Case>{
           {"--inptu", "--input"},  // two neighbours swapped
           {"--Input", "--input"},  // case
           {"-input", "--input"},   // dashes do not count
           {"--outptu", "--output"},
           {"--adr", "--addr"},  // a letter left out
           {"--max-mesage-size", "--max-message-size"},
           {"--maxmessagesize", "--max-message-size"},  // 3 edits, long word
           {"--inp", "--input"},         // the only one it begins
           {"--ind", "--index-search"},  // "
           {"--in", std::nullopt},       // too short to guess
           {"--xyz", std::nullopt},
           {"--adrr", "--addr"},
           {"--output-format", std::nullopt},  // 5 edits from --output
           {"", std::nullopt},
       }) {
    EXPECT_EQ(ClosestMatch(c.word, flags), c.want) << c.word;
  }
  EXPECT_EQ(ClosestMatch("biuld", {"build", "inspect", "verify", "get"}),
            "build");
  EXPECT_EQ(ClosestMatch("tabels", {"rollback", "unpin", "tables"}), "tables");
  EXPECT_EQ(ClosestMatch("x", {"get"}), std::nullopt);
}

// Sizes as roost-load and roost-server take them.
TEST(ParseSizeTest, UnitsArePowersOf1024AndNothingWraps) {
  EXPECT_EQ(*ParseSize("0"), 0u);
  EXPECT_EQ(*ParseSize("1073741824"), uint64_t{1} << 30);
  EXPECT_EQ(*ParseSize("64M"), uint64_t{64} << 20);
  EXPECT_EQ(*ParseSize("64MiB"), uint64_t{64} << 20);
  EXPECT_EQ(*ParseSize("512k"), uint64_t{512} << 10);
  EXPECT_EQ(*ParseSize("1G"), uint64_t{1} << 30);
  EXPECT_EQ(*ParseSize("1048576G"), uint64_t{1} << 50);
  for (const char* bad : {"", "-1", "G", "1.5G", "64X", "1048577G",
                          "18446744073709551617", "99999999999G", " 1"}) {
    absl::StatusOr<uint64_t> n = ParseSize(bad);
    EXPECT_FALSE(n.ok()) << bad;
    EXPECT_EQ(Message(n.status()),
              StrCat("bad size \"", bad,
                     "\" (a whole number of bytes up to 2^50, optionally with "
                     "k, M or G)"));
  }
}

}  // namespace
}  // namespace roost::testing
