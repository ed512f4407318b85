// util/: the helpers every folder shares. Most are exercised through their
// users' suites; these are the cases those cannot reach.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/status_matchers.h"
#include "tests/test_util.h"
#include "util/encoding.h"
#include "util/file.h"

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

}  // namespace
}  // namespace roost::testing
