// roost-load end to end: the real binary on real files.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

#include "storage/cuckoo_table.h"
#include "tests/test_util.h"

namespace roost::testing {
namespace {

struct Result {
  int exit_code;
  std::string out;  // stdout and stderr together
};

// Runs roost-load with `args` (a shell word list) and captures its output.
Result RoostLoad(const std::string& args) {
  const std::string cmd = std::string(ROOST_LOAD_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  Result run{-1, ""};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) run.out.append(buf, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

class RoostLoadTest : public ::testing::Test {
 protected:
  std::string Tsv(const std::string& name, const std::string& text) {
    const std::string path = dir_.File(name);
    WriteFile(path, text);
    return path;
  }
  ScratchDir dir_;
};

TEST_F(RoostLoadTest, BuildsAndLooksUp) {
  const std::string in =
      Tsv("in.tsv", "alpha\t1\nbeta\ttwo\tparts\n\tempty key\n");
  const std::string out = dir_.File("t.sst");
  Result r = RoostLoad("build -q -i " + in + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "");
  r = RoostLoad("get " + out + " alpha beta ''");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "alpha\t1\nbeta\ttwo\tparts\n\tempty key\n");
  r = RoostLoad("get " + out + " gamma");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "roost-load: \"gamma\": not found\n");
}

TEST_F(RoostLoadTest, ReadsStdinAndSeveralFiles) {
  const std::string a = Tsv("a.tsv", "k1\tv1\n");
  const std::string out = dir_.File("t.sst");
  Result r = RoostLoad("build -q -i " + a + " - -o " + out + " < " +
                       Tsv("b.tsv", "k2\tv2\n"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = RoostLoad("get " + out + " k1 k2");
  EXPECT_EQ(r.out, "k1\tv1\nk2\tv2\n");
}

TEST_F(RoostLoadTest, MalformedLineNamesFileAndLineAndWritesNothing) {
  const std::string in = Tsv("in.tsv", "a\t1\nno tab here\nc\t3\n");
  const std::string out = dir_.File("t.sst");
  Result r = RoostLoad("build -i " + in + " -o " + out);
  EXPECT_EQ(r.exit_code, 65);
  EXPECT_EQ(r.out, "roost-load: " + in + ":2: no tab between key and value\n");
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST_F(RoostLoadTest, DuplicatesUnderEachPolicy) {
  const std::string a = Tsv("a.tsv", "x\t1\ny\t2\n");
  const std::string b = Tsv("b.tsv", "z\t3\nx\t4\n");
  const std::string out = dir_.File("t.sst");
  Result r = RoostLoad("build -i " + a + " " + b + " -o " + out);
  EXPECT_EQ(r.exit_code, 65);
  EXPECT_EQ(r.out, "roost-load: " + b +
                       ":2: duplicate key \"x\" (first seen at " + a +
                       ":1); --on-duplicate=first or last keeps one\n");
  EXPECT_FALSE(std::filesystem::exists(out));
  ASSERT_EQ(RoostLoad("build -q --on-duplicate first -i " + a + " " + b +
                      " -o " + out)
                .exit_code,
            0);
  EXPECT_EQ(RoostLoad("get " + out + " x").out, "x\t1\n");
  r = RoostLoad("build --on-duplicate last -i " + a + " " + b + " -o " + out);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("dropped 1 duplicate keys"), std::string::npos);
  EXPECT_EQ(RoostLoad("get " + out + " x").out, "x\t4\n");
}

TEST_F(RoostLoadTest, InspectAndVerify) {
  std::string text;
  for (int i = 0; i < 1000; ++i) {
    text += "key" + std::to_string(1000 + i) + "\tvalue\n";
  }
  const std::string out = dir_.File("t.sst");
  ASSERT_EQ(
      RoostLoad("build -q -i " + Tsv("in.tsv", text) + " -o " + out).exit_code,
      0);
  Result r = RoostLoad("inspect " + out);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("keys             1000\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("layout           inline\n"), std::string::npos);
  EXPECT_NE(r.out.find("key width        7\n"), std::string::npos);
  r = RoostLoad("verify " + out);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, out + ": ok (1000 keys)\n");

  std::string bytes = ReadFile(out);
  bytes[bytes.size() / 2] ^= 0x40;
  WriteFile(out, bytes);
  r = RoostLoad("verify " + out);
  EXPECT_EQ(r.exit_code, 65);
  EXPECT_EQ(r.out, "roost-load: corrupt table " + out +
                       ": bucket checksum mismatch\n");
}

TEST_F(RoostLoadTest, UsageErrorsAndHelp) {
  Result r = RoostLoad("build -o x");
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_NE(r.out.find("--input is required"), std::string::npos) << r.out;
  r = RoostLoad("build -i a -o b --utilization abc");
  EXPECT_EQ(r.exit_code, 64);
  r = RoostLoad("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("inspect"), std::string::npos);
  r = RoostLoad("get /nonexistent.sst k");
  EXPECT_EQ(r.exit_code, 74);
  EXPECT_NE(r.out.find("cannot open /nonexistent.sst"), std::string::npos);
  r = RoostLoad("build -i /nonexistent.tsv -o " + dir_.File("t.sst"));
  EXPECT_EQ(r.exit_code, 74);
  const std::string in = Tsv("in.tsv", "a\t1\n");
  r = RoostLoad("build -i " + in + " -o " + dir_.File("t.sst") +
                " --utilization 1.5");
  EXPECT_EQ(r.exit_code, 65);
  EXPECT_NE(r.out.find("utilization must be in (0, 1)"), std::string::npos);
}

}  // namespace
}  // namespace roost::testing
