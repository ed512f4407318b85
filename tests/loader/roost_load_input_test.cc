// roost-load end to end, what the input is: a stream cut short (a producer
// killed mid-line or mid-record, a gzip stream cut), a file of another
// format than roost-load reads (Parquet, Arrow, CSV, JSON Lines, xz, ...),
// TSV written by a CSV writer (every value quote-wrapped), and empty keys.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "storage/coding.h"
#include "tests/harness/test_util.h"
#include "tests/loader/roost_load_fixture.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

namespace fs = std::filesystem;

class RoostLoadInputTest : public RoostLoadTest {
 protected:
  // Builds `input` (shell words: "-i FILE" or "-i - < FILE") into DATA/t.
  Result Build(const std::string& input, const std::string& flags = "") {
    return RoostLoad(StrCat("build -q ", flags, " ", input, " --data-dir ",
                            data_, " --table t"));
  }
  // `bytes` gzipped as one whole member, as `producer | gzip` writes it
  // when the producer dies: gzip sees the end of its input and finishes.
  std::string Gzipped(const std::string& name, const std::string& bytes) {
    const std::string path = Write(name, bytes);
    EXPECT_EQ(std::system(("gzip -f " + path).c_str()), 0);
    return path + ".gz";
  }

  const std::string data_ = dir_.File("data");
};

// The half line a producer killed mid-line leaves (k:029999<TAB>v29-29, no
// newline) is no record: exit 65 naming the line, nothing published, from
// a file, a pipe or a whole gzip member alike; --max-bad-records does not
// skip it (the input is cut, not one record bad); only
// --allow-missing-final-newline (a hand-made file) takes it.
TEST_F(RoostLoadInputTest, ATsvStreamCutMidLineIsNotPublished) {
  const std::string cut =
      Write("cut.tsv", "k:029997\tv29-27\nk:029998\tv29-28\nk:029999\tv29-29");
  const std::string gz = Gzipped("cut-gz.tsv", ReadFile(cut));
  const std::string message =
      ":3: no newline at the end of the input: its last line may be cut short "
      "(a producer stopped mid-line); --allow-missing-final-newline reads it "
      "as a record";
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {"-i " + cut, cut}, {"-i - < " + cut, "<stdin>"}, {"-i " + gz, gz}};
  for (const auto& [input, name] : inputs) {
    for (const std::string flags : {"", "--max-bad-records 10"}) {
      SCOPED_TRACE(input + " " + flags);
      const Result r = Build(input, flags);
      EXPECT_EQ(r.exit_code, 65) << r.out;
      EXPECT_NE(r.out.find("roost-load: " + name + message), std::string::npos)
          << r.out;
      EXPECT_TRUE(Versions(data_ + "/t").empty());
    }
  }
  // A file written by hand, its last line without a newline: taken as it
  // was, when the flag says so.
  const Result r = Build("-i - < " + cut, "--allow-missing-final-newline");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(RoostLoad("get " + data_ + "/t k:029999").out,
            "k:029999\tv29-29\n");
  // A last line that ends in its newline is complete, blank lines and all.
  EXPECT_EQ(Build("-i " + Write("ok.tsv", "a\t1\nb\t2\n\n")).exit_code, 0);
  EXPECT_EQ(Versions(data_ + "/t").size(), 2u);
}

// A gzip stream cut inside a member, and binary records cut short, are
// refused too, and --max-bad-records does not skip them either.
TEST_F(RoostLoadInputTest, CutGzipAndCutBinaryRecordsAreNotPublished) {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += StrCat("key", i, "\tvalue", i, "\n");
  const std::string whole = ReadFile(Gzipped("whole.tsv", text));
  const std::string gz =
      Write("cut.tsv.gz", whole.substr(0, whole.size() * 2 / 3));
  std::string prefixed;
  for (int i = 0; i < 10; ++i) {
    const std::string k = StrCat("key", i), v = StrCat("value", i);
    PutVarint64(&prefixed, k.size());
    PutVarint64(&prefixed, v.size());
    prefixed += k + v;
  }
  struct Case {
    std::string flags, input, message;
  };
  const std::vector<Case> cases = {
      {"", gz, gz + ": gzip data ends in the middle of a member"},
      {"--input-format fixed --key-size 4 --value-size 4",
       Write("cut.bin", "aaaa1111bbbb2222ccc"),
       "cut.bin@16: truncated record (3 of 8 bytes)"},
      {"--input-format length-prefixed",
       Write("cut.lp", prefixed.substr(0, prefixed.size() - 3)),
       "cut.lp@108: truncated record (9 of 12 bytes)"},
      {"--input-format length-prefixed",
       Write("cut-varint.lp", prefixed + "\x83"),
       "cut-varint.lp@120: truncated record"},
  };
  for (const Case& c : cases) {
    for (const std::string more : {"", " --max-bad-records 10"}) {
      SCOPED_TRACE(c.input + more);
      const Result r = Build("-i " + c.input, c.flags + more);
      EXPECT_EQ(r.exit_code, 65) << r.out;
      EXPECT_NE(r.out.find(c.message), std::string::npos) << r.out;
      EXPECT_TRUE(Versions(data_ + "/t").empty());
    }
  }
}

// After a malformed binary record there is no telling where the next one
// starts. --max-bad-records used to skip it and end that input there, so
// that every record after it was dropped and the rest published, with "1
// bad" in the summary; such a record now stops the build.
TEST_F(RoostLoadInputTest, ABadBinaryRecordDoesNotDropTheRestOfTheInput) {
  std::string prefixed;
  for (int i = 0; i < 100; ++i) {
    const std::string k = StrCat("key", i);
    const std::string v = i == 10 ? std::string(2000, 'v') : StrCat("v", i);
    PutVarint64(&prefixed, k.size());
    PutVarint64(&prefixed, v.size());
    prefixed += k + v;
  }
  const std::string in = Write("in.lp", prefixed);
  const Result r = Build("-i " + in,
                         "--input-format length-prefixed --max-value-size 1k "
                         "--max-bad-records 5");
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_NE(r.out.find(in + "@80: value of 2000 bytes exceeds the limit of "
                            "1024"),
            std::string::npos)
      << r.out;
  EXPECT_TRUE(Versions(data_ + "/t").empty());
}

// Files of another format are named, with what roost-load reads and the
// flag, tool or command that reads or converts them, instead of "FILE:1: no
// tab between key and value" (or, worse, records made of their bytes).
TEST_F(RoostLoadInputTest, OtherFormatsAreNamedWithAConversion) {
  // The first bytes of each, and enough after them for the sniffing.
  const std::string parquet =
      std::string("PAR1\x15\x00\x15\xa0\x01\x15\xa0\x01\x2c\x15\x0a", 15) +
      "\x15\x00\x15\x06\x15\x06\x1c\x18\x08k\tv\nmore\tbytes\n";
  struct Case {
    std::string name, bytes;
    std::vector<std::string> says;
  };
  const std::vector<Case> cases = {
      {"users.parquet",
       parquet,
       {": a Parquet file (it starts with PAR1), not TSV",
        "Build the table from it with roost-build, from the Python package: "
        "pip install './clients/python[batch]', then roost-build -i "
        "DIR/users.parquet ..."}},
      {"users.arrow",
       std::string("ARROW1\0\0\xff\xff\xff\xff\x10\x01\0\0", 16) + "k\tv\n",
       {": an Arrow IPC (Feather) file (it starts with ARROW1), not TSV",
        "roost-build -i DIR/users.arrow ..."}},
      {"users.tsv.xz",
       std::string("\xfd"
                   "7zXZ\0\0\x04",
                   8) +
           "k\tv\n",
       {": xz-compressed (it starts with the xz magic number), not TSV",
        "xz -dc DIR/users.tsv.xz | roost-load build -i - "}},
      {"users.csv",
       "id,name,email\n0,alice,a@example.com\n1,bob,b@example.com\n",
       {": CSV (no tab in its first 3 lines, commas in the first), not TSV",
        "Read it as CSV: roost-load build -i DIR/users.csv --input-format csv "
        "--key-column id ..."}},
      {"users.jsonl",
       "{\"user_id\": 0, \"name\": \"alice\"}\n{\"user_id\": 1}\n",
       {": JSON Lines (every one of its first 2 lines is a JSON object, none "
        "holds a tab), not TSV",
        "Read it as JSON Lines: roost-load build -i DIR/users.jsonl "
        "--input-format jsonl --key-field user_id ..."}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = Write(c.name, c.bytes);
    for (const std::string flags : {"", "--max-bad-records 100"}) {
      const Result r = Build("-i " + path, flags);
      EXPECT_EQ(r.exit_code, 65) << r.out;
      EXPECT_NE(r.out.find("roost-load: " + path + c.says[0]),
                std::string::npos)
          << r.out;
      EXPECT_NE(r.out.find("roost-load reads TSV (key<TAB>value lines), CSV, "
                           "JSON Lines, fixed-size or length-prefixed records "
                           "(--input-format), plain, gzipped or "
                           "zstd-compressed"),
                std::string::npos)
          << r.out;
      for (size_t i = 1; i < c.says.size(); ++i) {
        std::string says = c.says[i];
        for (size_t at; (at = says.find("DIR/")) != std::string::npos;) {
          says.replace(at, 3, dir_.path().string());
        }
        EXPECT_NE(r.out.find(says), std::string::npos) << r.out;
      }
      EXPECT_TRUE(Versions(data_ + "/t").empty());
    }
  }
  // Gzipped, it is named all the same.
  const std::string gz = Gzipped("users.parquet", parquet);
  const Result r = Build("-i " + gz);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_NE(r.out.find(gz + ": a Parquet file"), std::string::npos) << r.out;
  // Zstd-compressed TSV is read, no longer named as another format.
  const std::string zst = dir_.File("users.tsv.zst");
  if (std::system(("printf 'k\\tv\\n' | zstd -q -c > " + zst).c_str()) == 0) {
    const Result z = Build("-i " + zst);
    EXPECT_EQ(z.exit_code, 0) << z.out;
    EXPECT_EQ(RoostLoad("get " + data_ + "/t k").out, "k\tv\n");
  }
}

// TSV that merely looks like those is TSV: keys that start with a magic
// number, values of JSON, commas or quotes.
TEST_F(RoostLoadInputTest, TsvLikeTheOtherFormatsIsReadAsTsv) {
  const std::string in = Write("in.tsv",
                               "PAR1-7\t{\"id\": 1, \"tags\": [\"a\", \"b\"]}\n"
                               "ORC-2\tred,green,blue\n"
                               "{\"k\":1}\t\"quoted\"\n");
  const Result r = Build("-i " + in);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "");  // no warning either
  EXPECT_EQ(RoostLoad("get " + data_ + "/t PAR1-7 '{\"k\":1}'").out,
            "PAR1-7\t{\"id\": 1, \"tags\": [\"a\", \"b\"]}\n"
            "{\"k\":1}\t\"quoted\"\n");
}

// pandas' to_csv(sep="\t") quote-wraps every value that holds a quote,
// doubling the quotes inside ("{""id"":0}"), and writes a header line whose
// first field (the unnamed index) is empty. Both are stored as they are (a
// value may be anything; the server looks the empty key up), with a warning
// on stderr, once each, even with -q.
TEST_F(RoostLoadInputTest, CsvQuotedValuesAndEmptyKeysAreWarnedAbout) {
  std::string text = "\tvalue\n";
  for (int i = 0; i < 50; ++i) {
    text +=
        StrCat(i, "\t\"{\"\"id\"\":", i, ",\"\"name\"\":\"\"u", i, "\"\"}\"\n");
  }
  const std::string in = Write("pandas.tsv", text);
  const Result r = Build("-i " + in);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("roost-load: " + in +
                       ":1: warning: empty key (the line starts with a tab), "
                       "stored as the key \"\": a header line, or a missing "
                       "key?"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(
                "roost-load: " + in +
                ": warning: values are CSV-quoted: each of the first 20 after "
                "line 1 starts and ends with \" and doubles the quotes inside "
                "(line 2: \"{\"\"id\"\":0,\"\"name\"\":\"\"u0\"\"}\"), as a "
                "CSV writer quotes them; they are stored as they are, quotes "
                "included. Write the TSV unquoted (pandas: to_csv(sep=\"\\t\", "
                "quoting=csv.QUOTE_NONE, header=False))"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(RoostLoad("get " + data_ + "/t '' 3").out,
            "\tvalue\n3\t\"{\"\"id\"\":3,\"\"name\"\":\"\"u3\"\"}\"\n");

  // Values that only start with a quote, or are JSON strings, or a mix, or
  // too few to be sure of (one after line 1): no warning.
  for (const std::string values :
       {"a\t\"hello\"\nb\t\"say \\\"hi\\\"\"\nc\t\"\"\n",
        "a\t\"x\"\"y\"\nb\tplain\nc\t\"p\"\"q\"\n",
        "a\t\"only \"\" at the start\nb\t\"\"\"\"\n"}) {
    SCOPED_TRACE(values);
    const Result quiet = Build("-i " + Write("values.tsv", values));
    EXPECT_EQ(quiet.exit_code, 0) << quiet.out;
    EXPECT_EQ(quiet.out.find("CSV-quoted"), std::string::npos) << quiet.out;
  }
}

}  // namespace
}  // namespace roost::testing
