// roost-load end to end, errors: malformed input named by file and line,
// --max-bad-records, and bad flags and usage, with their exit codes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"
#include "tests/loader/roost_load_fixture.h"
#include "util/build_info.h"
#include "util/json.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

namespace fs = std::filesystem;

TEST_F(RoostLoadTest, MalformedInputNamesWhereAndPublishesNothing) {
  struct Case {
    std::string flags, input, error;
  };
  const std::vector<Case> cases = {
      {"", "a\t1\nno tab here\n", ":2: no tab between key and value"},
      {"--key-encoding hex", "6161\t1\nzz\t2\n", ":2: bad hex in key"},
      {"--value-encoding base64", "a\tYQ==\nb\t!!!\n",
       ":2: bad base64 in value"},
      {"--max-key-size 4", "abcd\t1\nabcde\t2\n", ":2: key of 5 bytes"},
      {"--input-format fixed --key-size 2 --value-size 2", "aabbc",
       "@4: truncated record"},
  };
  for (const std::string format : {"cuckoo", "block"}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(format + " " + c.flags);
      const std::string in = Write("bad.in", c.input);
      const std::string data = dir_.File("data");
      Result r = RoostLoad("build -q --format " + format + " " + c.flags +
                           " -i " + in + " --data-dir " + data + " --table t");
      EXPECT_EQ(r.exit_code, 65) << r.out;
      EXPECT_NE(r.out.find("roost-load: " + in + c.error), std::string::npos)
          << r.out;
      EXPECT_TRUE(Versions(data + "/t").empty());
      const std::string out = dir_.File("t.sst");
      r = RoostLoad("build -q --format " + format + " " + c.flags + " -i " +
                    in + " -o " + out);
      EXPECT_EQ(r.exit_code, 65);
      EXPECT_FALSE(fs::exists(out));
    }
  }
}

TEST_F(RoostLoadTest, MaxBadRecordsSkipsAndCounts) {
  const std::string in = Write("in.tsv", "a\t1\nbad\nb\t2\nworse\nc\t3\n");
  const std::string out = dir_.File("t.sst");
  Result r =
      RoostLoad("build -q -i " + in + " -o " + out + " --max-bad-records 1");
  EXPECT_EQ(r.exit_code, 65);
  EXPECT_NE(r.out.find(in + ":4: no tab"), std::string::npos) << r.out;
  r = RoostLoadStdout("build -i " + in + " -o " + out +
                      " --max-bad-records 2 --output-format json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Json j = ParseOrFail(r.out);
  EXPECT_EQ(JsonUint64(j, "bad_records"), 2u);
  EXPECT_EQ(JsonUint64(j, "keys"), 3u);
  EXPECT_EQ(JsonString(j, "status"), "ok");
  // Locations stay right after skipped lines.
  const std::string dup = Write("dup.tsv", "a\t1\nbad\na\t2\n");
  r = RoostLoad("build -q -i " + dup + " -o " + out + " --max-bad-records 1");
  EXPECT_NE(
      r.out.find(dup + ":3: duplicate key \"a\" (first seen at " + dup + ":1)"),
      std::string::npos)
      << r.out;
}

TEST_F(RoostLoadTest, UsageErrorsAndHelp) {
  Result r = RoostLoad("build -o x");
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_NE(r.out.find("--input is required"), std::string::npos) << r.out;
  r = RoostLoad("build -i a -o b --utilization abc");
  EXPECT_EQ(r.exit_code, 64);
  r = RoostLoad("build -i a -o b --format hash");
  EXPECT_EQ(r.exit_code, 64);
  r = RoostLoad("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("inspect"), std::string::npos);
  r = RoostLoad("build --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--memory-limit TEXT=1G"), std::string::npos) << r.out;
  r = RoostLoad("--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, VersionLine("roost-load") + "\n");
  EXPECT_THAT(
      r.out, ::testing::MatchesRegex(
                 "roost-load [0-9.]+ \\(revision ([0-9a-f]{40}|unknown)\\)\n"));
  r = RoostLoad("get /nonexistent.sst k");
  EXPECT_EQ(r.exit_code, 74);
  EXPECT_NE(r.out.find("/nonexistent.sst"), std::string::npos);
  r = RoostLoad("build -i /nonexistent.tsv -o " + dir_.File("t.sst"));
  EXPECT_EQ(r.exit_code, 74);
  const std::string in = Write("in.tsv", "a\t1\n");
  r = RoostLoad("build -i " + in + " -o " + dir_.File("t.sst") +
                " --utilization 1.5");
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_NE(r.out.find("utilization must be in (0, 1)"), std::string::npos);
  r = RoostLoad("build -i " + in);
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_NE(r.out.find("give either --output FILE or --data-dir"),
            std::string::npos);
  r = RoostLoadStdout("build -i /nonexistent.tsv -o x --output-format json");
  EXPECT_EQ(JsonString(ParseOrFail(r.out), "status"), "error");
}

// Defect 25: a bad flag value or combination is a usage error (64), not bad
// input (65), and --help shows how the commands are used.
TEST_F(RoostLoadTest, UsageErrorsExit64AndHelpShowsExamples) {
  const std::string in = Write("in.tsv", "a\t1\n");
  const std::string out = dir_.File("t.sst");
  const std::string data = dir_.File("data");
  for (const std::string& flags :
       {"-o " + out + " --data-dir " + data + " --table t",
        "--data-dir " + data, "-o " + out + " --table t",
        "-o " + out + " --max-shrink 10%",
        "--data-dir " + data + " --table t --max-shrink 120%",
        "-o " + out + " --input-format fixed --key-size 4"}) {
    SCOPED_TRACE(flags);
    const Result r = RoostLoad("build -q -i " + in + " " + flags);
    EXPECT_EQ(r.exit_code, 64) << r.out;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(data + "/t"));
  }
  const Result help = RoostLoad("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Examples:\n  roost-load build -i users.tsv"),
            std::string::npos)
      << help.out;
  EXPECT_NE(help.out.find("64 bad usage"), std::string::npos) << help.out;
}

// Defect 17: options are checked before any input is opened, and sizes that
// would wrap or overflow are refused.
TEST_F(RoostLoadTest, BadOptionsAreRefusedBeforeAnyInputIsOpened) {
  struct Case {
    std::string flags, error;
  };
  const std::vector<Case> cases = {
      {"--utilization 0", "utilization must be in (0, 1), not 0"},
      {"--hash-functions 9", "number of hash functions must be in [2, "},
      {"--overflow-bits 3", "overflow bits per block must be 1, 2, 4 or 8"},
      {"--format block --block-size 0", "block size must be in [1, 2^30]"},
      {"--format block --restart-interval 0",
       "restart interval must be at least 1"},
      {"--memory-limit -1", "bad size \"-1\""},
      {"--memory-limit 99999999999G", "bad size \"99999999999G\""},
      {"--memory-limit 18446744073709551617", "bad size"},
      {"--max-value-size 1.5G", "bad size \"1.5G\""},
      {"--threads 0",
       "bad --threads \"0\" (auto, or a whole number from 1 "
       "to 64)"},
      {"--threads 65", "bad --threads \"65\""},
      {"--threads two", "bad --threads \"two\""},
  };
  // The input does not exist: had it been opened first, the error would be
  // an I/O error (74) about it.
  for (const Case& c : cases) {
    SCOPED_TRACE(c.flags);
    const Result r = RoostLoad("build -q " + c.flags +
                               " -i /nonexistent.tsv -o " + dir_.File("t.sst"));
    EXPECT_EQ(r.exit_code, 64) << r.out;
    EXPECT_NE(r.out.find(c.error), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("nonexistent"), std::string::npos) << r.out;
  }
  // The largest accepted size still builds.
  const std::string in = Write("in.tsv", "a\t1\n");
  EXPECT_EQ(RoostLoad("build -q --memory-limit 1048576G -i " + in + " -o " +
                      dir_.File("t.sst"))
                .exit_code,
            0);
}

// Defect 18: a value the server could never return is refused at build
// time, against a limit the MANIFEST records.
TEST_F(RoostLoadTest, BadDataTimestampsAreUsageErrors) {
  const std::string in = Write("in.tsv", "a\t1\n");
  const std::string data = dir_.File("data");
  struct Case {
    std::string value, error;
  };
  const std::vector<Case> cases = {
      {"yesterday", "bad timestamp \"yesterday\" (an RFC 3339"},
      {"''", "bad timestamp \"\" (an RFC 3339"},
      {"2024-05-01", "bad timestamp \"2024-05-01\" (an RFC 3339"},
      {"2024-05-01T12:00:00", "bad timestamp \"2024-05-01T12:00:00\""},
      {"2024-02-30T12:00:00Z", "bad timestamp \"2024-02-30T12:00:00Z\""},
      {"1969-12-31T23:59:59Z", "bad timestamp \"1969-12-31T23:59:59Z\""},
      {"-5", "bad timestamp \"-5\""},
      {"1714564800.5", "bad timestamp \"1714564800.5\""},
      {"1714564800000",
       "bad timestamp \"1714564800000\": after the year 9999; milliseconds?"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.value);
    Result r = RoostLoad("build -q -i " + in + " --data-dir " + data +
                         " --table t --data-timestamp " + c.value);
    EXPECT_EQ(r.exit_code, 64) << r.out;
    EXPECT_NE(r.out.find("roost-load: " + c.error), std::string::npos) << r.out;
  }
  EXPECT_TRUE(Versions(data + "/t").empty());
  // A table file has no MANIFEST to write it into.
  Result r = RoostLoad("build -q -i " + in + " -o " + dir_.File("t.sst") +
                       " --data-timestamp 1714564800");
  EXPECT_EQ(r.exit_code, 64) << r.out;
  EXPECT_NE(r.out.find("--data-timestamp goes with --data-dir or "
                       "--repository"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(dir_.File("t.sst")));
}

TEST_F(RoostLoadTest, ValuesOverTheServingLimitAreRefused) {
  const std::string big(16 * 1024 * 1024 + 1, 'v');
  const std::string in = Write("in.tsv", "small\t1\nbig\t" + big + "\n");
  const std::string data = dir_.File("data");
  for (const std::string format : {"cuckoo", "block"}) {
    SCOPED_TRACE(format);
    Result r = RoostLoad("build -q --format " + format + " -i " + in +
                         " --data-dir " + data + " --table t");
    EXPECT_EQ(r.exit_code, 65) << r.out;
    EXPECT_NE(
        r.out.find(in + ":2: value of 16777217 bytes exceeds the limit of "
                        "16777216"),
        std::string::npos)
        << r.out;
    EXPECT_FALSE(fs::exists(data + "/t"));
  }
  Result r = RoostLoad("build -q --max-value-size 17M -i " + in +
                       " --data-dir " + data + " --table t");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Json m = ParseOrFail(ReadFile(data + "/t/v000001/MANIFEST"));
  EXPECT_EQ(JsonUint64(m, "max_value_length"), big.size());
  EXPECT_EQ(JsonUint64(m, "max_key_length"), 5u);
  EXPECT_EQ(JsonUint64(m.at("build_options"), "max_value_size"),
            17u * 1024 * 1024);
}

}  // namespace
}  // namespace roost::testing
