// roost-load build with --input-format csv and jsonl, end to end on the real
// binary: tables built from CSV and JSON Lines (plain, gzipped, zstd, on
// stdin, from globs) read back with roost-load get; every refusal's exit
// code and message; flags checked before any input is opened; what the
// summary and the MANIFEST record.

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "tests/loader/roost_load_fixture.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

bool HaveTool(const std::string& tool) {
  return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}

class RoostLoadCsvTest : public RoostLoadTest {
 protected:
  // Builds `args` into a table file; returns it.
  std::string Build(const std::string& args) {
    const std::string out = dir_.File("t.sst");
    std::filesystem::remove(out);
    Result r = RoostLoad("build -q " + args + " -o " + out);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return out;
  }
  // What roost-load get prints for `keys` (hex values, so bytes compare).
  std::string Get(const std::string& table, const std::string& keys) {
    Result r = RoostLoad("get --value-encoding hex " + table + " " + keys);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return r.out;
  }
  static std::string Hex(std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : s) {
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
    return out;
  }
};

constexpr char kUsersCsv[] =
    "id,name,note\r\n"
    "1,\"Smith, J\",\"said \"\"hi\"\"\nthen left\"\r\n"
    "2,Ann,\r\n";

TEST_F(RoostLoadCsvTest, CsvTableReadsBackTheExpectedBytes) {
  const std::string in = Write("users.csv", kUsersCsv);
  const std::string t = Build("--input-format csv -i " + in);
  EXPECT_EQ(Get(t, "1 2"),
            "1\t" +
                Hex(R"({"name":"Smith, J","note":"said \"hi\"\nthen left"})") +
                "\n2\t" + Hex(R"({"name":"Ann","note":""})") + "\n");
  const std::string v = Build(
      "--input-format csv --key-column name --value-column note -i " + in);
  EXPECT_EQ(Get(v, "'Smith, J' Ann"),
            "Smith, J\t" + Hex("said \"hi\"\nthen left") + "\nAnn\t\n");
}

TEST_F(RoostLoadCsvTest, CsvNoHeaderTabDelimiterGzipZstdStdinAndGlobs) {
  const std::string rows = "k1\tx\tv1\nk2\ty\t\"v\t2\"\n";
  const std::string plain = Write("a.tsvish", rows);
  const std::string csv_flags =
      "--input-format csv --no-header --key-column 1 --value-column 3 ";
  const std::string flags = csv_flags + "--delimiter tab ";
  const std::string want = "k1\t" + Hex("v1") + "\nk2\t" + Hex("v\t2") + "\n";
  EXPECT_EQ(Get(Build(flags + "-i " + plain), "k1 k2"), want);
  EXPECT_EQ(
      Get(Build(csv_flags + "--delimiter '\\t' -i - < " + plain), "k1 k2"),
      want);
  ASSERT_EQ(
      std::system(("gzip -c " + plain + " > " + dir_.File("b.csv.gz")).c_str()),
      0);
  EXPECT_EQ(Get(Build(flags + "-i " + dir_.File("b.csv.gz")), "k1 k2"), want);
  if (HaveTool("zstd")) {
    ASSERT_EQ(
        std::system(
            ("zstd -q -c " + plain + " > " + dir_.File("c.csv.zst")).c_str()),
        0);
    EXPECT_EQ(Get(Build(flags + "-i - < " + dir_.File("c.csv.zst")), "k1 k2"),
              want);
  }
  // Globs: two files, the header read in each.
  Write("part-1.csv", "id,v\n1,a\n");
  Write("part-2.csv", "id,v\n2,b\n");
  EXPECT_EQ(Get(Build("--input-format csv --value-column v -i '" +
                      dir_.File("part-*.csv") + "'"),
                "1 2"),
            "1\t" + Hex("a") + "\n2\t" + Hex("b") + "\n");
}

TEST_F(RoostLoadCsvTest, CsvRefusalsExitCodesAndMessages) {
  struct Case {
    std::string csv, flags;
    int exit_code;
    std::string says;  // after "roost-load: FILE"
  };
  const std::vector<Case> cases = {
      {"id,v\n1,\"open\n2,b\n", "", 65,
       ":2: column \"v\": unterminated quote: the quoted field opened on line "
       "2"},
      {"id,v\n1,a\"b\n", "", 65,
       ":2: column \"v\": a quote inside an unquoted"},
      {"id,v\n1,a,b\n", "", 65,
       ":2: row has 3 fields, the header 2: field 3 is after the last column"},
      {"id,v,v\n1,a,b\n", "", 65,
       ":1: column 3 of the header (\"v\") repeats the name of column 2"},
      {"id,\n1,a\n", "", 65, ":1: column 2 of the header has no name"},
      {"id,v\n1,a\n", "--key-column user", 65,
       ":1: no column \"user\" (--key-column) in the header, whose columns "
       "are \"id\", \"v\""},
      {"id,v\n123456,a\n", "--max-key-size 3", 65,
       ":2: column \"id\": key of 6 bytes exceeds the limit of 3"},
      {"id,v\n1,\xff\n", "", 65, ":2: column \"v\": not UTF-8"},
      {"id,v\n1,a\n2,b", "", 65, ":3: no line end at the end of the input"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.csv);
    const std::string in = Write("in.csv", c.csv);
    const std::string out = dir_.File("never.sst");
    Result r = RoostLoad("build -q --input-format csv " + c.flags + " -i " +
                         in + " -o " + out);
    EXPECT_EQ(r.exit_code, c.exit_code) << r.out;
    EXPECT_EQ(r.out.rfind("roost-load: " + in + c.says, 0), 0u) << r.out;
    EXPECT_FALSE(std::filesystem::exists(out));
  }
  // A malformed row is skipped with --max-bad-records; an unterminated
  // quote is not, whatever N.
  const std::string in = Write("in.csv", "id,v\n1,a\"b\n2,c\n");
  Result r = RoostLoad(
      "build --output-format json --max-bad-records 1 "
      "--input-format csv -i " +
      in + " -o " + dir_.File("skip.sst"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(ParseOrFail(r.out)["bad_records"], 1) << r.out;
  const std::string open = Write("open.csv", "id,v\n1,\"a\n2,c\n");
  r = RoostLoad("build -q --max-bad-records 100 --input-format csv -i " + open +
                " -o " + dir_.File("open.sst"));
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_NE(r.out.find("unterminated quote"), std::string::npos) << r.out;
}

TEST_F(RoostLoadCsvTest, DuplicateCsvKeyNamesItsRow) {
  const std::string in = Write("d.csv", "id,v\n1,a\n2,\"x\ny\"\n1,b\n");
  Result r = RoostLoad("build -q --input-format csv -i " + in + " -o " +
                       dir_.File("d.sst"));
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_NE(r.out.find(in +
                       " row 3 after the header: duplicate key \"1\" "
                       "(first seen at " +
                       in + " row 1 after the header)"),
            std::string::npos)
      << r.out;
}

TEST_F(RoostLoadCsvTest, JsonlTableReadsBackTheExpectedBytes) {
  const std::string lines =
      "{\"user\": {\"id\": 7, \"a/b\": \"s\"}, \"p\": {\"x\": [1, 2]}}\n"
      "{\"user\": {\"id\": \"k8\", \"a/b\": \"t\"}, \"p\": \"str\"}\r\n";
  const std::string in = Write("e.jsonl", lines);
  EXPECT_EQ(
      Get(Build("--input-format jsonl --key-field /user/id -i " + in), "7 k8"),
      "7\t" +
          Hex("{\"user\": {\"id\": 7, \"a/b\": \"s\"}, \"p\": {\"x\": "
              "[1, 2]}}") +
          "\nk8\t" +
          Hex("{\"user\": {\"id\": \"k8\", \"a/b\": \"t\"}, \"p\": "
              "\"str\"}") +
          "\n");
  EXPECT_EQ(Get(Build("--input-format jsonl --key-field /user/a~1b "
                      "--value-field p -i " +
                      in),
                "s t"),
            "s\t" + Hex(R"({"x":[1,2]})") + "\nt\t" + Hex("str") + "\n");
  // Gzipped, on stdin.
  ASSERT_EQ(
      std::system(("gzip -c " + in + " > " + dir_.File("e.jsonl.gz")).c_str()),
      0);
  EXPECT_EQ(Get(Build("--input-format jsonl --key-field /user/id "
                      "--value-field p -i - < " +
                      dir_.File("e.jsonl.gz")),
                "7"),
            "7\t" + Hex(R"({"x":[1,2]})") + "\n");
  if (HaveTool("zstd")) {
    ASSERT_EQ(
        std::system(
            ("zstd -q -c " + in + " > " + dir_.File("e.jsonl.zst")).c_str()),
        0);
    EXPECT_EQ(Get(Build("--input-format jsonl --key-field /user/id "
                        "--value-field p -i " +
                        dir_.File("e.jsonl.zst")),
                  "k8"),
              "k8\t" + Hex("str") + "\n");
  }
}

TEST_F(RoostLoadCsvTest, JsonlRefusals) {
  struct Case {
    std::string lines;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {"{\"id\": 1}\n{\"id\": 1.5}\n",
            ":2: key field \"id\" is a number with a fraction or exponent, "
            "not a string or an integer"},
           {"{\"id\": 1}\n{\"id\": {}}\n", ":2: key field \"id\" is an object"},
           {"{\"id\": 1}\n{\"id\": 2\n", ":2: invalid JSON: "},
           {"{\"id\": 1}\n\n{\"id\": 2}\n", ":2: blank line"},
           {"{\"x\": 1}\n", ":1: no key field \"id\""},
           {"{\"id\": 1}\n{\"id\": 1}\n",
            ":2: duplicate key \"1\" (first seen at "},
       }) {
    SCOPED_TRACE(c.lines);
    const std::string in = Write("in.jsonl", c.lines);
    Result r = RoostLoad("build -q --input-format jsonl --key-field id -i " +
                         in + " -o " + dir_.File("never.sst"));
    EXPECT_EQ(r.exit_code, 65) << r.out;
    EXPECT_EQ(r.out.rfind("roost-load: " + in + c.says, 0), 0u) << r.out;
  }
}

TEST_F(RoostLoadCsvTest, FlagsAreCheckedBeforeAnyInputIsOpened) {
  // The input does not exist: a usage error must come first.
  const std::string missing = dir_.File("missing");
  struct Case {
    std::string flags, says;
  };
  for (const Case& c : std::vector<Case>{
           {"--delimiter ';'",
            "--delimiter goes with --input-format csv, not "
            "tsv"},
           {"--no-header", "--no-header goes with --input-format csv"},
           {"--key-column id", "--key-column goes with --input-format csv"},
           {"--value-column v", "--value-column goes with --input-format csv"},
           {"--input-format csv --key-field id",
            "--key-field goes with --input-format jsonl, not csv"},
           {"--input-format fixed --key-size 1 --value-size 1 --value-field v",
            "--value-field goes with --input-format jsonl, not fixed"},
           {"--input-format jsonl", "--input-format jsonl needs --key-field"},
           {"--input-format csv --delimiter ab", "bad --delimiter \"ab\""},
           {"--input-format csv --delimiter '\"'", "bad --delimiter"},
       }) {
    SCOPED_TRACE(c.flags);
    Result r = RoostLoad("build " + c.flags + " -i " + missing + " -o " +
                         dir_.File("x.sst"));
    EXPECT_EQ(r.exit_code, 64) << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << r.out;
  }
}

TEST_F(RoostLoadCsvTest, ParquetAndArrowNameRoostBuild) {
  const std::string parquet =
      Write("t.parquet", std::string("PAR1\x15\x04\x15\x00", 8) + "rest");
  for (const std::string format : {"tsv", "csv", "jsonl --key-field id"}) {
    Result r = RoostLoad("build -q --input-format " + format + " -i " +
                         parquet + " -o " + dir_.File("x.sst"));
    EXPECT_EQ(r.exit_code, 65) << r.out;
    EXPECT_NE(r.out.find("pip install './clients/python[batch]', then "
                         "roost-build -i " +
                         parquet + " ..."),
              std::string::npos)
        << r.out;
  }
  // CSV read as TSV names --input-format csv.
  const std::string csv = Write("u.csv", "user_id,name\n1,a\n");
  Result r = RoostLoad("build -q -i " + csv + " -o " + dir_.File("x.sst"));
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_NE(r.out.find("roost-load build -i " + csv +
                       " --input-format csv --key-column user_id ..."),
            std::string::npos)
      << r.out;
}

TEST_F(RoostLoadCsvTest, SummaryAndManifestRecordTheInputOptions) {
  const std::string in = Write("m.csv", "a;b;c\n1;2;3\n");
  const std::string data = dir_.File("data");
  Result r = RoostLoadStdout(
      "build --output-format json --input-format csv --delimiter ';' "
      "--key-column b --value-column c -i " +
      in + " --data-dir " + data + " --table t");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Json summary = ParseOrFail(r.out);
  EXPECT_EQ(summary["input"]["input_format"], "csv");
  EXPECT_EQ(summary["input"]["delimiter"], ";");
  EXPECT_EQ(summary["input"]["key_column"], "b");
  EXPECT_EQ(summary["input"]["value_column"], "c");
  EXPECT_EQ(summary["input"]["header"], true);
  const Json m = ParseOrFail(
      ReadFile(data + "/t/" + Versions(data + "/t")[0] + "/MANIFEST"));
  EXPECT_EQ(m["build_options"]["input_format"], "csv");
  EXPECT_EQ(m["build_options"]["delimiter"], ";");
  EXPECT_EQ(m["build_options"]["key_column"], "b");

  const std::string j = Write("m.jsonl", "{\"k\": 1, \"v\": 2}\n");
  r = RoostLoadStdout(
      "build --output-format json --input-format jsonl --key-field k "
      "--value-field /v -i " +
      j + " -o " + dir_.File("j.sst"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Json s2 = ParseOrFail(r.out);
  EXPECT_EQ(s2["input"]["input_format"], "jsonl");
  EXPECT_EQ(s2["input"]["key_field"], "k");
  EXPECT_EQ(s2["input"]["value_field"], "/v");
}

}  // namespace
}  // namespace roost::testing
