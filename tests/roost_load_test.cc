// roost-load end to end: the real binary on real files and directories.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "storage/block_table.h"
#include "storage/cuckoo_table.h"
#include "tests/status_matchers.h"
#include "tests/test_util.h"
#include "util/json.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

namespace fs = std::filesystem;

// The binary built beside the test, unless ROOST_TEST_LOAD_BINARY names
// another (to show that a test fails against an earlier build).
const char* LoadBinary() {
  const char* other = std::getenv("ROOST_TEST_LOAD_BINARY");
  return other != nullptr && *other != '\0' ? other : ROOST_LOAD_BINARY;
}

struct Result {
  int exit_code;
  std::string out;  // stdout and stderr together
};

// Runs roost-load with `args` (shell words) and captures its output, with
// stderr (`redirect`) merged into it by default.
Result RoostLoad(const std::string& args,
                 const std::string& redirect = " 2>&1") {
  const std::string cmd = std::string(LoadBinary()) + " " + args + redirect;
  FILE* pipe = popen(cmd.c_str(), "r");
  Result run{-1, ""};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) run.out.append(buf, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// Only stdout (the JSON summary), stderr dropped.
Result RoostLoadStdout(const std::string& args) {
  return RoostLoad(args, " 2>/dev/null");
}

Json ParseOrFail(const std::string& text) {
  auto j = ParseJson(text);
  EXPECT_OK(j) << text;
  return j.ok() ? *j : Json();
}

class RoostLoadTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_.File(name);
    WriteFile(path, bytes);
    return path;
  }
  // The version directories of a table, and whether any is incomplete.
  std::vector<std::string> Versions(const std::string& table_dir) {
    std::vector<std::string> out;
    if (!fs::exists(table_dir)) return out;
    for (const auto& e : fs::directory_iterator(table_dir)) {
      const std::string name = e.path().filename().string();
      if (name[0] == 'v') out.push_back(name);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  ScratchDir dir_;
};

TEST_F(RoostLoadTest, BuildsAndLooksUpBothFormats) {
  const std::string in =
      Write("in.tsv", "beta\ttwo\tparts\nalpha\t1\n\tempty key\n");
  for (const std::string format : {"cuckoo", "block"}) {
    SCOPED_TRACE(format);
    const std::string out = dir_.File(format + ".sst");
    Result r =
        RoostLoad("build -q --format " + format + " -i " + in + " -o " + out);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(r.out, "");
    r = RoostLoad("get " + out + " alpha beta ''");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(r.out, "alpha\t1\nbeta\ttwo\tparts\n\tempty key\n");
    r = RoostLoad("get " + out + " gamma");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.out, "roost-load: \"gamma\": not found\n");
    for (const auto& e : fs::directory_iterator(dir_.path())) {
      EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << e.path();
    }
  }
}

TEST_F(RoostLoadTest, ReadsStdinGlobsAndSeveralFiles) {
  Write("part-1.tsv", "k1\tv1\n");
  Write("part-2.tsv", "k2\tv2\n");
  const std::string out = dir_.File("t.sst");
  Result r = RoostLoad("build -q -i '" + dir_.File("part-*.tsv") + "' - -o " +
                       out + " < " + Write("c.tsv", "k3\tv3\n"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(RoostLoad("get " + out + " k1 k2 k3").out,
            "k1\tv1\nk2\tv2\nk3\tv3\n");
  r = RoostLoad("build -q -i '" + dir_.File("nothing-*.tsv") + "' -o " + out);
  EXPECT_EQ(r.exit_code, 74) << r.out;
}

TEST_F(RoostLoadTest, DecodesHexAndBase64) {
  // key "ab\0", value "\xff\x01" in hex; key "hi", value "yo!" in base64.
  const std::string hex = Write("h.tsv", "616200\tff01\n");
  const std::string b64 = Write("b.tsv", "aGk=\teW8h\n");
  const std::string out = dir_.File("t.sst");
  ASSERT_EQ(RoostLoad("build -q --key-encoding hex --value-encoding hex -i " +
                      hex + " -o " + out)
                .exit_code,
            0);
  auto t = CuckooTable::Open(out);
  ASSERT_OK(t);
  std::string_view v;
  ASSERT_TRUE((*t)->Get(std::string("ab\0", 3), &v));
  EXPECT_EQ(v, "\xff\x01");
  ASSERT_EQ(RoostLoad("build -q --key-encoding base64 --value-encoding "
                      "base64 -i " +
                      b64 + " -o " + out)
                .exit_code,
            0);
  EXPECT_EQ(RoostLoad("get " + out + " hi").out, "hi\tyo!\n");
}

TEST_F(RoostLoadTest, ReadsBinaryRecordsAndGzip) {
  std::string fixed, prefixed;
  for (int i = 0; i < 100; ++i) {
    const std::string k = StrCat("key", 100 + i);  // 6 bytes
    const std::string v = StrCat("v", 1000 + i);   // 5 bytes
    fixed += k + v;
    prefixed += std::string(1, static_cast<char>(k.size())) +
                std::string(1, static_cast<char>(v.size())) + k + v;
  }
  const std::string out = dir_.File("t.sst");
  ASSERT_EQ(RoostLoad("build -q --input-format fixed --key-size 6 "
                      "--value-size 5 --format block -i " +
                      Write("f.bin", fixed) + " -o " + out)
                .exit_code,
            0);
  EXPECT_EQ(RoostLoad("get " + out + " key150").out, "key150\tv1050\n");
  const std::string lp = Write("p.bin", prefixed);
  ASSERT_EQ(std::system(("gzip -k " + lp).c_str()), 0);
  Result r = RoostLoad("build -q --input-format length-prefixed -i " + lp +
                       ".gz -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(RoostLoad("get " + out + " key199").out, "key199\tv1099\n");
  const std::string tsv = Write("g.tsv", "a\t1\nb\t2\n");
  ASSERT_EQ(std::system(("gzip " + tsv).c_str()), 0);
  ASSERT_EQ(RoostLoad("build -q -i " + tsv + ".gz -o " + out).exit_code, 0);
  EXPECT_EQ(RoostLoad("get " + out + " b").out, "b\t2\n");
}

TEST_F(RoostLoadTest, DuplicatesUnderEachPolicyInBothFormats) {
  const std::string a = Write("a.tsv", "x\t1\ny\t2\n");
  const std::string b = Write("b.tsv", "z\t3\nx\t4\n");
  for (const std::string format : {"cuckoo", "block"}) {
    SCOPED_TRACE(format);
    const std::string data = dir_.File("data-" + format);
    const std::string common =
        "build -q --format " + format + " -i " + a + " " + b;
    Result r = RoostLoad(common + " --data-dir " + data + " --table t");
    EXPECT_EQ(r.exit_code, 65);
    EXPECT_EQ(r.out, "roost-load: " + b +
                         ":2: duplicate key \"x\" (first seen "
                         "at " +
                         a +
                         ":1); --on-duplicate=first or last keeps "
                         "one\n");
    EXPECT_TRUE(Versions(data + "/t").empty());
    const std::string out = dir_.File(format + ".sst");
    ASSERT_EQ(RoostLoad(common + " --on-duplicate first -o " + out).exit_code,
              0);
    EXPECT_EQ(RoostLoad("get " + out + " x").out, "x\t1\n");
    r = RoostLoadStdout(common +
                        " --on-duplicate last --output-format json "
                        "-o " +
                        out);
    ASSERT_EQ(r.exit_code, 0);
    EXPECT_EQ(JsonUint64(ParseOrFail(r.out), "duplicates_dropped"), 1u);
    EXPECT_EQ(JsonUint64(ParseOrFail(r.out), "keys"), 3u);
    EXPECT_EQ(RoostLoad("get " + out + " x").out, "x\t4\n");
  }
}

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

TEST_F(RoostLoadTest, PublishesVersionsWithManifests) {
  const std::string in = Write("in.tsv", "k1\tv1\nk2\tv2\n");
  const std::string data = dir_.File("data");
  for (int i = 1; i <= 3; ++i) {
    Result r =
        RoostLoadStdout("build --output-format json --format " +
                        std::string(i == 2 ? "block" : "cuckoo") + " -i " + in +
                        " --data-dir " + data + " --table users");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(JsonUint64(ParseOrFail(r.out), "version"), uint64_t(i));
  }
  EXPECT_EQ(Versions(data + "/users"),
            (std::vector<std::string>{"v000001", "v000002", "v000003"}));
  const Json m = ParseOrFail(ReadFile(data + "/users/v000002/MANIFEST"));
  EXPECT_EQ(JsonString(m, "format"), "block");
  EXPECT_EQ(JsonUint64(m, "version"), 2u);
  EXPECT_EQ(JsonUint64(m, "keys"), 2u);
  EXPECT_EQ(JsonUint64(m, "key_width"), 2u);
  EXPECT_EQ(JsonUint64(m.at("files").at(0), "size"),
            fs::file_size(data + "/users/v000002/table.sst"));
  EXPECT_EQ(JsonString(m.at("inputs").at(0), "path"), in);
  EXPECT_EQ(JsonUint64(m.at("build_options"), "restart_interval"), 16u);
  EXPECT_EQ(JsonString(m, "loader"), "roost-load 0.1.0");

  // verify of the table directory checks its newest version.
  Result r = RoostLoad("verify " + data + "/users");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, data +
                       "/users/v000003/table.sst: ok (cuckoo table, 2 "
                       "keys, MANIFEST agrees)\n");
  EXPECT_EQ(RoostLoad("get " + data + "/users k2").out, "k2\tv2\n");
  EXPECT_EQ(RoostLoad("verify " + data + "/users/v000002").exit_code, 0);

  // A MANIFEST that disagrees with its files fails verification.
  std::string text = ReadFile(data + "/users/v000001/MANIFEST");
  text.replace(text.find("\"keys\": 2"), 9, "\"keys\": 3");
  WriteFile(data + "/users/v000001/MANIFEST", text);
  r = RoostLoad("verify " + data + "/users/v000001");
  EXPECT_EQ(r.exit_code, 65);
  EXPECT_NE(r.out.find("MANIFEST: says keys 3; the table file has 2"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(RoostLoad("build -q -i " + in + " --data-dir " + data +
                      " --table ../escape")
                .exit_code,
            64);
}

TEST_F(RoostLoadTest, InterruptedBuildLeavesOnlyCompleteVersions) {
  // Enough input that the build is still running when it is killed.
  std::string big;
  for (int i = 0; i < 400000; ++i) {
    big += StrCat("key", 1000000 + i * 7 % 400000, "\tvalue-", i, "\n");
  }
  const std::string in = Write("big.tsv", big);
  const std::string data = dir_.File("data");
  ASSERT_EQ(RoostLoad("build -q -i " + in + " --data-dir " + data +
                      " --table t --format block")
                .exit_code,
            0);
  for (int delay_ms : {20, 150}) {
    const pid_t pid = fork();
    if (pid == 0) {
      execl(LoadBinary(), LoadBinary(), "build", "-q", "-i", in.c_str(),
            "--data-dir", data.c_str(), "--table", "t", "--format", "block",
            "--memory-limit", "2M", nullptr);
      _exit(127);
    }
    usleep(delay_ms * 1000);
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    for (const std::string& v : Versions(data + "/t")) {
      EXPECT_TRUE(fs::exists(data + "/t/" + v + "/MANIFEST")) << v;
      EXPECT_EQ(RoostLoad("verify " + data + "/t/" + v).exit_code, 0) << v;
    }
  }
  // The next build succeeds and clears what the killed ones left.
  Result r = RoostLoad("build -q -i " + in + " --data-dir " + data +
                       " --table t --format block");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const auto& e : fs::directory_iterator(data + "/t")) {
    EXPECT_NE(e.path().filename().string().rfind(".staging-", 0), 0u)
        << e.path();
  }
  EXPECT_EQ(RoostLoad("verify " + data + "/t").exit_code, 0);
}

TEST_F(RoostLoadTest, ExternalSortGivesTheSameTable) {
  std::string text;
  for (int i = 0; i < 50000; ++i) {
    text += StrCat("k", (i * 7919) % 50000 + 100000, "\tv", i, "\n");
  }
  const std::string in = Write("in.tsv", text);
  const std::string a = dir_.File("a.sst"), b = dir_.File("b.sst");
  Result r = RoostLoadStdout("build --format block --output-format json -i " +
                             in + " -o " + a);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(JsonUint64(ParseOrFail(r.out), "sort_runs_spilled"), 0u);
  r = RoostLoadStdout(
      "build --format block --output-format json "
      "--memory-limit 64k --temp-dir " +
      dir_.File("") + " -i " + in + " -o " + b);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_GT(JsonUint64(ParseOrFail(r.out), "sort_runs_spilled").value_or(0),
            1u);
  EXPECT_TRUE(ReadFile(a) == ReadFile(b));
  EXPECT_FALSE(ReadFile(a).empty());
}

TEST_F(RoostLoadTest, SameInputGivesIdenticalFiles) {
  std::string text;
  for (int i = 0; i < 5000; ++i) {
    text += StrCat("key", i * 31 % 5000, "\t", i, "\n");
  }
  const std::string in = Write("in.tsv", text);
  for (const std::string format : {"cuckoo", "block"}) {
    const std::string a = dir_.File("a.sst"), b = dir_.File("b.sst");
    ASSERT_EQ(
        RoostLoad("build -q --format " + format + " -i " + in + " -o " + a)
            .exit_code,
        0);
    ASSERT_EQ(
        RoostLoad("build -q --format " + format + " -i " + in + " -o " + b)
            .exit_code,
        0);
    EXPECT_TRUE(ReadFile(a) == ReadFile(b)) << format;
  }
}

TEST_F(RoostLoadTest, InspectAndVerifyGoodAndCorruptTables) {
  std::string text;
  for (int i = 0; i < 1000; ++i) {
    text += StrCat("key", 1000 + i, "\tvalue\n");
  }
  const std::string in = Write("in.tsv", text);
  for (const std::string format : {"cuckoo", "block"}) {
    SCOPED_TRACE(format);
    const std::string out = dir_.File(format + ".sst");
    ASSERT_EQ(
        RoostLoad("build -q --format " + format + " -i " + in + " -o " + out)
            .exit_code,
        0);
    Result r = RoostLoad("inspect " + out);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("keys              1000\n"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("format            " + format + " 1.0\n"),
              std::string::npos)
        << r.out;
    r = RoostLoad("verify " + out);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.out, out + ": ok (" + format + " table, 1000 keys)\n");

    std::string bytes = ReadFile(out);
    bytes[bytes.size() / 3] ^= 0x40;
    WriteFile(out, bytes);
    r = RoostLoad("verify " + out);
    EXPECT_EQ(r.exit_code, 65);
    EXPECT_NE(r.out.find("roost-load: corrupt table " + out + ": "),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("checksum mismatch"), std::string::npos) << r.out;
    EXPECT_EQ(RoostLoad("get " + out + " key1000").exit_code, 65);
  }
  WriteFile(dir_.File("junk"), "not a table at all");
  Result r = RoostLoad("inspect " + dir_.File("junk"));
  EXPECT_EQ(r.exit_code, 65);
  EXPECT_NE(r.out.find("not a roost table"), std::string::npos);
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
  EXPECT_EQ(RoostLoad("--version").out, "roost-load 0.1.0\n");
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

// Defect 19: the spill directory of a killed build is removed by the next
// build that sorts in the same place; that of a running one is kept. So is
// the directory a killed `build -o FILE` was writing in.
TEST_F(RoostLoadTest, WorkingDirectoriesOfDeadBuildsAreRemoved) {
  const std::string temp = dir_.File("tmp");
  fs::create_directories(temp);
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  int status;
  waitpid(dead, &status, 0);
  const std::string dead_dir = StrCat(temp, "/roost-sort-", dead, "-Ab12Cd");
  const std::string live_dir =
      StrCat(temp, "/roost-sort-", getpid(), "-Ef34Gh");
  const std::string unrelated = temp + "/roost-sort-notapid";
  for (const std::string& d : {dead_dir, live_dir, unrelated}) {
    fs::create_directories(d);
    WriteFile(d + "/run-000000", "spilled");
  }
  const std::string out = dir_.File("t.sst");
  const std::string dead_out = StrCat(out, ".tmp-", dead, "-Ij56Kl");
  fs::create_directories(dead_out);
  WriteFile(dead_out + "/table.sst", "half a table");
  const std::string in = Write("in.tsv", "b\t2\na\t1\n");
  const Result r = RoostLoad("build -q --format block --temp-dir " + temp +
                             " -i " + in + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_FALSE(fs::exists(dead_out));
  EXPECT_FALSE(fs::exists(dead_dir));
  EXPECT_TRUE(fs::exists(live_dir + "/run-000000"));
  EXPECT_TRUE(fs::exists(unrelated + "/run-000000"));
  // And this build left nothing of its own.
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(temp)) ++entries;
  EXPECT_EQ(entries, 2u);
}

// Defect 20: CRLF input is warned about (quiet or not), and --strip-cr
// drops the \r.
TEST_F(RoostLoadTest, CrlfInputIsWarnedAboutOrStripped) {
  const std::string in = Write("in.tsv", "a\t1\r\nb\t2\r\n");
  const std::string out = dir_.File("t.sst");
  Result r = RoostLoad("build -q -i " + in + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "roost-load: " + in +
                       ":1: warning: lines end in \\r, which stays at the end "
                       "of each value; --strip-cr drops it\n");
  EXPECT_EQ(RoostLoad("get " + out + " a").out, "a\t1\r\n");
  r = RoostLoad("build -q --strip-cr -i " + in + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(RoostLoad("get " + out + " a b").out, "a\t1\nb\t2\n");
}

// Defect 22: get takes keys and prints values in hex or base64, as
// roost-get does, so a key with a zero byte can be looked up.
TEST_F(RoostLoadTest, GetLooksUpBinaryKeysInHexAndBase64) {
  // key "a\0b" -> value "\0\xff", key "k" -> "v".
  const std::string in = Write("in.tsv", "610062\t00ff\n6b\t76\n");
  const std::string out = dir_.File("t.sst");
  ASSERT_EQ(RoostLoad("build -q --key-encoding hex --value-encoding hex -i " +
                      in + " -o " + out)
                .exit_code,
            0);
  Result r = RoostLoad("get --key-encoding hex --value-encoding hex " + out +
                       " 610062 6b");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "610062\t00ff\n6b\t76\n");
  r = RoostLoad("get --key-encoding base64 --value-encoding base64 " + out +
                " YQBi");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "YQBi\tAP8=\n");
  r = RoostLoad("get --key-encoding hex " + out + " 6b 6100");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "6b\tv\nroost-load: \"6100\": not found\n");
  r = RoostLoad("get --key-encoding hex " + out + " zz");
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_NE(r.out.find("bad hex"), std::string::npos) << r.out;
}

// Defect 23: empty input publishes nothing unless --allow-empty, and
// --max-shrink refuses a version that lost too many keys.
TEST_F(RoostLoadTest, EmptyOrShrunkenInputIsRefused) {
  const std::string data = dir_.File("data");
  Result r = RoostLoad("build -q -i - --data-dir " + data +
                       " --table users < /dev/null");
  EXPECT_EQ(r.exit_code, 65);
  EXPECT_EQ(r.out,
            "roost-load: no records in the input; --allow-empty publishes an "
            "empty table\n");
  EXPECT_FALSE(fs::exists(data + "/users"));
  EXPECT_EQ(RoostLoad("build -q -i - -o " + dir_.File("e.sst") + " < /dev/null")
                .exit_code,
            65);
  EXPECT_FALSE(fs::exists(dir_.File("e.sst")));

  std::string text;
  for (int i = 0; i < 100; ++i) text += StrCat("key", i, "\tv\n");
  ASSERT_EQ(RoostLoad("build -q -i " + Write("100.tsv", text) + " --data-dir " +
                      data + " --table users")
                .exit_code,
            0);
  text.clear();
  for (int i = 0; i < 89; ++i) text += StrCat("key", i, "\tv\n");
  const std::string in89 = Write("89.tsv", text);
  r = RoostLoad("build -q -i " + in89 + " --data-dir " + data +
                " --table users --max-shrink 10%");
  EXPECT_EQ(r.exit_code, 65);
  EXPECT_EQ(r.out,
            "roost-load: the new version of users holds 89 keys; v000001 "
            "holds 100, and --max-shrink 10% allows no fewer than 90; nothing "
            "was published\n");
  EXPECT_EQ(Versions(data + "/users"), std::vector<std::string>{"v000001"});
  EXPECT_EQ(RoostLoad("build -q -i " + in89 + " --data-dir " + data +
                      " --table users --max-shrink 11%")
                .exit_code,
            0);
  r = RoostLoad("build -q --allow-empty -i - --data-dir " + data +
                " --table users < /dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(Versions(data + "/users"),
            (std::vector<std::string>{"v000001", "v000002", "v000003"}));
  EXPECT_EQ(JsonUint64(ParseOrFail(ReadFile(data + "/users/v000003/MANIFEST")),
                       "keys"),
            0u);
}

// Defect 13: a refused first build leaves no table directory behind (which
// a server would report as a table without a version); a refused later one
// leaves the table as it was.
TEST_F(RoostLoadTest, ARefusedFirstBuildLeavesNoTableDirectory) {
  const std::string data = dir_.File("data");
  const std::string bad = Write("bad.tsv", "a\t1\nno tab\n");
  for (const std::string format : {"cuckoo", "block"}) {
    SCOPED_TRACE(format);
    const Result r = RoostLoad("build -q --format " + format + " -i " + bad +
                               " --data-dir " + data + " --table new");
    EXPECT_EQ(r.exit_code, 65) << r.out;
    EXPECT_FALSE(fs::exists(data + "/new"));
    EXPECT_TRUE(fs::is_directory(data));
  }
  ASSERT_EQ(RoostLoad("build -q -i " + Write("ok.tsv", "a\t1\n") +
                      " --data-dir " + data + " --table new")
                .exit_code,
            0);
  EXPECT_EQ(
      RoostLoad("build -q -i " + bad + " --data-dir " + data + " --table new")
          .exit_code,
      65);
  EXPECT_EQ(Versions(data + "/new"), std::vector<std::string>{"v000001"});
}

// Defect 11: `build -o FILE` writes through no link planted beside FILE;
// it used to open FILE.tmp-<pid> with a create-and-truncate that followed
// symbolic links.
TEST_F(RoostLoadTest, BuildWritesThroughNoPlantedLink) {
  const std::string victim = Write("victim", "precious");
  const std::string in = Write("in.tsv", "a\t1\n");
  const std::string out = dir_.File("t.sst");
  const pid_t pid = fork();
  if (pid == 0) {
    // roost-load runs with this pid: plant the link it used to write
    // through, then become it.
    const std::string link = StrCat(out, ".tmp-", getpid());
    if (symlink(victim.c_str(), link.c_str()) != 0) _exit(126);
    execl(LoadBinary(), LoadBinary(), "build", "-q", "-i", in.c_str(), "-o",
          out.c_str(), nullptr);
    _exit(127);
  }
  ASSERT_GT(pid, 0);
  int status;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(ReadFile(victim), "precious");
  EXPECT_EQ(RoostLoad("get " + out + " a").out, "a\t1\n");
  // A link at FILE itself is replaced, not written through.
  fs::remove(out);
  fs::create_symlink(victim, out);
  ASSERT_EQ(RoostLoad("build -q -i " + in + " -o " + out).exit_code, 0);
  EXPECT_EQ(ReadFile(victim), "precious");
  EXPECT_FALSE(fs::is_symlink(out));
  EXPECT_EQ(RoostLoad("get " + out + " a").out, "a\t1\n");
}

}  // namespace
}  // namespace roost::testing
