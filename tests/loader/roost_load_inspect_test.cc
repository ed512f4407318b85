// roost-load end to end, reading tables back: inspect and verify on good
// and corrupt tables, and get with binary keys.
#include <gtest/gtest.h>

#include <string>

#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"
#include "tests/loader/roost_load_fixture.h"
#include "util/json.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

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
    // roost-load gives block tables a filter by default: format 2.0.
    const std::string version = format == "block" ? "2.0" : "1.0";
    EXPECT_NE(r.out.find("format            " + format + " " + version + "\n"),
              std::string::npos)
        << r.out;
    if (format == "block") {
      EXPECT_NE(r.out.find("filter            bloom, 1280 bytes, 10.24 bits "
                           "a key (10 asked), 6 probes, "),
                std::string::npos)
          << r.out;
    }
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
  // Without a filter: format 1.0, as before filters.
  const std::string plain = dir_.File("plain.sst");
  ASSERT_EQ(RoostLoad("build -q --format block --filter-bits-per-key 0 -i " +
                      in + " -o " + plain)
                .exit_code,
            0);
  Result p = RoostLoad("inspect " + plain);
  EXPECT_NE(p.out.find("format            block 1.0\n"), std::string::npos)
      << p.out;
  EXPECT_NE(p.out.find("filter            none\n"), std::string::npos) << p.out;
  EXPECT_EQ(RoostLoad("build -q --format block --filter-bits-per-key 33 -i " +
                      in + " -o " + plain)
                .exit_code,
            64);

  WriteFile(dir_.File("junk"), "not a table at all");
  Result r = RoostLoad("inspect " + dir_.File("junk"));
  EXPECT_EQ(r.exit_code, 65);
  EXPECT_NE(r.out.find("not a roost table"), std::string::npos);
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

}  // namespace
}  // namespace roost::testing
