// roost-load end to end: the real binary on real files and directories.
// This suite builds: inputs from files, globs and stdin, hex and base64,
// binary records and gzip, duplicates, the external sort, reproducible
// output and CRLF input. The other roost-load suites are listed in
// tests/loader/roost_load_fixture.h.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "storage/block/block_table.h"
#include "storage/cuckoo/cuckoo_table.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"
#include "tests/loader/roost_load_fixture.h"
#include "util/json.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

namespace fs = std::filesystem;

TEST_F(RoostLoadTest, BuildsAndLooksUpBothFormats) {
  const std::string in =
      Write("in.tsv", "beta\ttwo\tparts\nalpha\t1\n\tempty key\n");
  for (const std::string format : {"cuckoo", "block"}) {
    SCOPED_TRACE(format);
    const std::string out = dir_.File(format + ".sst");
    Result r =
        RoostLoad("build -q --format " + format + " -i " + in + " -o " + out);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    // The empty key is a key (the server looks it up), stored with a
    // warning, even with -q: in TSV it is most often a mistake.
    EXPECT_EQ(r.out, "roost-load: " + in +
                         ":3: warning: empty key (the line starts with a "
                         "tab), stored as the key \"\": a header line, or a "
                         "missing key?\n");
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

// A cuckoo build on several threads places and writes each share of the
// table apart; the file is the one a single thread writes, duplicates
// dropped or refused alike.
TEST_F(RoostLoadTest, AnyThreadCountBuildsTheSameCuckooFile) {
  std::string text;
  for (int i = 0; i < 120000; ++i) {
    text += StrCat("k", (i * 7919) % 100000, "\tv", i, "\n");
  }
  const std::string in = Write("in.tsv", text);
  for (const std::string policy : {"first", "last"}) {
    SCOPED_TRACE(policy);
    std::vector<std::string> files;
    for (const std::string threads : {"1", "2", "5"}) {
      const std::string out = dir_.File("t" + threads + ".sst");
      const Result r = RoostLoadStdout(
          "build --output-format json --on-duplicate " + policy +
          " --threads " + threads + " -i " + in + " -o " + out);
      ASSERT_EQ(r.exit_code, 0) << r.out;
      EXPECT_EQ(JsonUint64(ParseOrFail(r.out), "duplicates_dropped"), 20000u);
      files.push_back(ReadFile(out));
    }
    ASSERT_FALSE(files[0].empty());
    EXPECT_TRUE(files[0] == files[1]);
    EXPECT_TRUE(files[0] == files[2]);
    // k7919 is first the value of record 1, then of record 100001.
    EXPECT_EQ(RoostLoad("get " + dir_.File("t2.sst") + " k7919").out,
              policy == "first" ? "k7919\tv1\n" : "k7919\tv100001\n");
  }
  const Result one =
      RoostLoad("build -q --threads 1 -i " + in + " -o " + dir_.File("e1.sst"));
  const Result two =
      RoostLoad("build -q --threads 2 -i " + in + " -o " + dir_.File("e2.sst"));
  EXPECT_EQ(one.exit_code, 65);
  EXPECT_EQ(two.exit_code, 65);
  EXPECT_NE(one.out.find("duplicate key"), std::string::npos) << one.out;
  EXPECT_EQ(one.out, two.out);
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

}  // namespace
}  // namespace roost::testing
