// RecordReader's CSV and JSON Lines formats (loader/csv_reader.h,
// loader/json_lines_reader.h) on real files, each through windows of 1, 7
// and 1 MiB bytes so that rows cross window boundaries: quoting, headers,
// the JSON value, JSON pointers, and the text and location of every
// refusal. Parquet and Arrow refused in every input format too.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "loader/csv_reader.h"
#include "loader/record_reader.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"
#include "tests/loader/record_reader_fixture.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

constexpr size_t kWindows[] = {1, 7, size_t{1} << 20};

RecordReaderOptions Csv() {
  RecordReaderOptions o;
  o.format = InputFormat::kCsv;
  return o;
}

RecordReaderOptions Jsonl(std::string key, std::string value = "") {
  RecordReaderOptions o;
  o.format = InputFormat::kJsonLines;
  o.key_field = std::move(key);
  o.value_field = std::move(value);
  return o;
}

class TextFormatsTest : public RecordReaderTest {
 protected:
  // Reads `data` through every window size, expecting the same each time.
  ReadResult Read(const std::string& data, RecordReaderOptions options) {
    ReadResult first;
    for (size_t i = 0; i < std::size(kWindows); ++i) {
      options.buffer_size = kWindows[i];
      ReadResult r = ReadFileAs("in", data, options);
      if (i == 0) {
        first = r;
        continue;
      }
      EXPECT_EQ(r.records, first.records) << "window " << kWindows[i];
      EXPECT_EQ(r.errors, first.errors) << "window " << kWindows[i];
      EXPECT_EQ(r.end, first.end) << "window " << kWindows[i];
    }
    return first;
  }
  std::string In() { return dir_.File("in"); }
};

// --- CSV ---------------------------------------------------------------------

TEST_F(TextFormatsTest, CsvQuotedFieldsHoldDelimitersNewlinesAndQuotes) {
  const std::string csv =
      "id,name,note\r\n"
      "1,\"Smith, J\",\"say \"\"hi\"\"\"\r\n"
      "2,\"two\nlines\",plain\n"
      "\"3\",,\"\"\n"
      "4,\"a\r\nb\",\"\"\"\"\n";
  RecordReaderOptions o = Csv();
  o.value_column = "name";
  ReadResult r = Read(csv, o);
  ASSERT_OK(r.end);
  EXPECT_TRUE(r.errors.empty()) << r.errors.front();
  EXPECT_EQ(
      r.records,
      (Pairs{
          {"1", "Smith, J"}, {"2", "two\nlines"}, {"3", ""}, {"4", "a\r\nb"}}));
  o.value_column = "note";
  r = Read(csv, o);
  EXPECT_EQ(
      r.records,
      (Pairs{{"1", "say \"hi\""}, {"2", "plain"}, {"3", ""}, {"4", "\""}}));
}

TEST_F(TextFormatsTest, CsvDefaultValueIsAJsonObjectOfTheOtherColumns) {
  const std::string csv =
      "name,id,city\n"
      "Ann,7,Oslo\n"
      "\"q\"\"\\\",8,\"tab\there\nnl\x01\"\n"
      "\xc3\xa9t\xc3\xa9,9,\n";
  RecordReaderOptions o = Csv();
  o.key_column = "id";
  ReadResult r = Read(csv, o);
  ASSERT_OK(r.end);
  EXPECT_EQ(r.records,
            (Pairs{{"7", R"({"name":"Ann","city":"Oslo"})"},
                   {"8", R"({"name":"q\"\\","city":"tab\there\nnl\u0001"})"},
                   {"9", "{\"name\":\"\xc3\xa9t\xc3\xa9\",\"city\":\"\"}"}}));
  // The first column is the key by default.
  r = Read(csv, Csv());
  ASSERT_OK(r.end);
  EXPECT_EQ(r.records.front(), (std::pair<std::string, std::string>{
                                   "Ann", R"({"id":"7","city":"Oslo"})"}));
}

TEST_F(TextFormatsTest, CsvWithoutHeaderNumbersColumnsAndOtherDelimiters) {
  RecordReaderOptions o = Csv();
  o.header = false;
  o.delimiter = ';';
  o.key_column = "2";
  ReadResult r = Read("a;b;c\nd;e;\"f;g\"\n", o);
  ASSERT_OK(r.end);
  EXPECT_EQ(r.records, (Pairs{{"b", R"({"1":"a","3":"c"})"},
                              {"e", R"({"1":"d","3":"f;g"})"}}));
  o.delimiter = '\t';
  o.key_column.clear();
  o.value_column = "3";
  r = Read("\xef\xbb\xbfk1\tx\tv1\nk2\tx\t\"v\t2\"\n", o);
  ASSERT_OK(r.end);
  EXPECT_EQ(r.records, (Pairs{{"k1", "v1"}, {"k2", "v\t2"}}));
}

TEST_F(TextFormatsTest, CsvMalformedRowsNameLineAndColumnAndReadingGoesOn) {
  const std::string csv =
      "id,a,b\n"                  // 1
      "1,x\"y,z\n"                // 2: quote in an unquoted field
      "2,\"x\"y,z\n"              // 3: text after the closing quote
      "3,x\n"                     // 4: too few fields
      "4,x,y,z\n"                 // 5: too many
      "5,\"multi\nline\",\xff\n"  // 6-7: not UTF-8 in a JSON field
      "\n"                        // 8: blank: one field
      "\"toolongkey\",a,b\n"      // 9
      "6,ok,ok\n";                // 10
  RecordReaderOptions o = Csv();
  o.max_key_size = 5;
  ReadResult r = Read(csv, o);
  ASSERT_OK(r.end);
  EXPECT_EQ(r.records, (Pairs{{"6", R"({"a":"ok","b":"ok"})"}}));
  const std::string in = In();
  EXPECT_EQ(
      r.errors,
      (std::vector<std::string>{
          in + ":2: column \"a\": a quote inside an unquoted field (a field "
               "with quotes must be quoted whole, its quotes doubled: \"a "
               "\"\"b\"\"\")",
          in + ":3: column \"a\": text after the closing quote of a quoted "
               "field",
          in + ":4: row has 2 fields, the header 3: no column \"b\"",
          in + ":5: row has 4 fields, the header 3: field 4 is after the "
               "last column, column \"b\"",
          in + ":6: column \"b\": not UTF-8, which a field of the JSON value "
               "must be (or pick the value's column with --value-column, "
               "stored as it is)",
          in + ":8: row has 1 field, the header 3: no column \"a\"",
          in + ":9: column \"id\": key of 10 bytes exceeds the limit of 5"}));
}

TEST_F(TextFormatsTest, CsvHeaderProblemsStopBeforeAnyRecord) {
  struct Case {
    std::string csv;
    std::string key, value;
    bool header;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"id,a\n1,2\n", "user", "", true,
       ":1: no column \"user\" (--key-column) in the header, whose columns "
       "are \"id\", \"a\""},
      {"id,a\n1,2\n", "", "b", true,
       ":1: no column \"b\" (--value-column) in the header, whose columns "
       "are \"id\", \"a\""},
      {"1,2\n", "3", "", false,
       ":1: no column \"3\" (--key-column): without a header the columns are "
       "numbered 1 to 2 (the first row's fields)"},
      {"id,a,a\n1,2,3\n", "", "", true,
       ":1: column 3 of the header (\"a\") repeats the name of column 2"},
      {"id,,b\n1,2,3\n", "", "", true,
       ":1: column 2 of the header has no name"},
      {"id,\"a\n", "", "", true,
       ":1: column 2: unterminated quote: the quoted field opened on line 1 "
       "is not closed before the end of the input"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.csv);
    RecordReaderOptions o = Csv();
    o.key_column = c.key;
    o.value_column = c.value;
    o.header = c.header;
    ReadResult r = Read(c.csv, o);
    EXPECT_TRUE(r.records.empty());
    ASSERT_FALSE(r.errors.empty());
    EXPECT_EQ(r.errors.front().rfind(In() + c.says, 0), 0u) << r.errors.front();
    // Final: the same error again (ReadAll stops at the repeat).
    EXPECT_TRUE(absl::IsInvalidArgument(r.end)) << r.end;
  }
  // Repeated or empty names are fine when no JSON object needs them.
  RecordReaderOptions o = Csv();
  o.value_column = "b";
  ReadResult r = Read("id,,b,b2,b2\n1,2,3,4,5\n", o);
  ASSERT_OK(r.end);
  EXPECT_EQ(r.records, (Pairs{{"1", "3"}}));
}

TEST_F(TextFormatsTest, CsvUnterminatedQuoteNamesTheLineItOpenedOn) {
  ReadResult r = Read("id,v\n1,a\n2,\"open\n3,x\n4,y\n", Csv());
  EXPECT_EQ(r.records, (Pairs{{"1", R"({"v":"a"})"}}));
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0], In() +
                             ":3: column \"v\": unterminated quote: the "
                             "quoted field opened on line 3 is not closed "
                             "before the end of the input");
}

TEST_F(TextFormatsTest, CsvLastRowWithoutItsLineEndIsInputCutShort) {
  ReadResult r = Read("id,v\n1,a\n2,b", Csv());
  EXPECT_EQ(r.records.size(), 1u);
  EXPECT_TRUE(absl::IsDataLoss(r.end)) << r.end;
  EXPECT_EQ(Message(r.end).rfind(In() + ":3: no line end", 0), 0u) << r.end;
  RecordReaderOptions o = Csv();
  o.allow_missing_final_newline = true;
  r = Read("id,v\n1,a\n2,\"b\"", o);
  ASSERT_OK(r.end);
  EXPECT_EQ(r.records, (Pairs{{"1", R"({"v":"a"})"}, {"2", R"({"v":"b"})"}}));
  // Empty input, and a header alone: no records.
  EXPECT_TRUE(Read("", Csv()).records.empty());
  EXPECT_TRUE(Read("id,v\n", Csv()).records.empty());
}

TEST(JsonStringTest, EscapesQuotesBackslashesAndControlCharacters) {
  std::string out;
  AppendJsonStringBody(std::string("a\"b\\c\n\r\t\b\f\x01\x1f\x7f\0z", 15),
                       &out);
  EXPECT_EQ(out, "a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\\u001f\x7f\\u0000z");
}

// --- JSON Lines ------------------------------------------------------------

TEST_F(TextFormatsTest, JsonlKeysAndValues) {
  const std::string jsonl =
      "{\"id\": \"a\\u00e9\\n\", \"v\": {\"x\": [1, 2]}}\n"
      "{\"id\": 42, \"v\": \"str\\\"q\"}\r\n"
      "{\"id\": -7, \"v\": null}\n"
      "{\"id\": 18446744073709551615, \"v\": 1.5}\n";
  ReadResult r = Read(jsonl, Jsonl("id"));
  ASSERT_OK(r.end);
  ASSERT_EQ(r.records.size(), 4u);
  EXPECT_EQ(r.records[0].first, "a\xc3\xa9\n");
  EXPECT_EQ(r.records[0].second,
            "{\"id\": \"a\\u00e9\\n\", \"v\": {\"x\": [1, 2]}}");
  EXPECT_EQ(r.records[1], (std::pair<std::string, std::string>{
                              "42", "{\"id\": 42, \"v\": \"str\\\"q\"}"}));
  EXPECT_EQ(r.records[2].first, "-7");
  EXPECT_EQ(r.records[3].first, "18446744073709551615");
  r = Read(jsonl, Jsonl("id", "v"));
  ASSERT_OK(r.end);
  EXPECT_EQ(r.records, (Pairs{{"a\xc3\xa9\n", R"({"x":[1,2]})"},
                              {"42", "str\"q"},
                              {"-7", "null"},
                              {"18446744073709551615", "1.5"}}));
}

TEST_F(TextFormatsTest, JsonlPointersNestAndEscape) {
  const std::string jsonl =
      R"({"user": {"id": 1, "a/b": "slash", "m~n": "tilde"}, "l": [10, {"k": "z"}]})"
      "\n";
  struct Case {
    std::string key, value, want_key, want_value;
  };
  for (const Case& c : std::vector<Case>{
           {"/user/id", "/user/a~1b", "1", "slash"},
           {"/user/m~0n", "/l/1", "tilde", R"({"k":"z"})"},
           {"/l/1/k", "/l/0", "z", "10"},
           {"/user/id", "user", "1", R"({"id":1,"a/b":"slash","m~n":"tilde"})"},
       }) {
    SCOPED_TRACE(c.key + " " + c.value);
    ReadResult r = Read(jsonl, Jsonl(c.key, c.value));
    ASSERT_OK(r.end);
    ASSERT_TRUE(r.errors.empty()) << r.errors.front();
    EXPECT_EQ(r.records, (Pairs{{c.want_key, c.want_value}}));
  }
}

TEST_F(TextFormatsTest, JsonlRefusalsNameLineAndField) {
  const std::string jsonl =
      "{\"id\": 1}\n"            // 1 ok
      "{\"id\": 1.5}\n"          // 2 a double
      "{\"id\": [1]}\n"          // 3 an array
      "{\"id\": true}\n"         // 4
      "{\"id\": null}\n"         // 5
      "{\"other\": 1}\n"         // 6 no field
      "{\"id\": 2,}\n"           // 7 invalid JSON
      "   \n"                    // 8 blank
      "[1, 2]\n"                 // 9 not an object
      "{\"id\": \"\xff\"}\n"     // 10 not UTF-8
      "{\"id\": \"toolong\"}\n"  // 11
      "{\"id\": 3}\n";           // 12 ok
  RecordReaderOptions o = Jsonl("id");
  o.max_key_size = 5;
  ReadResult r = Read(jsonl, o);
  ASSERT_OK(r.end);
  EXPECT_EQ(r.records, (Pairs{{"1", "{\"id\": 1}"}, {"3", "{\"id\": 3}"}}));
  const std::string in = In();
  ASSERT_EQ(r.errors.size(), 10u);
  EXPECT_EQ(r.errors[0], in + ":2: key field \"id\" is a number with a "
                              "fraction or exponent, not a string or an "
                              "integer");
  EXPECT_EQ(r.errors[1], in + ":3: key field \"id\" is an array, not a "
                              "string or an integer");
  EXPECT_EQ(r.errors[2], in + ":4: key field \"id\" is a boolean, not a "
                              "string or an integer");
  EXPECT_EQ(r.errors[3],
            in + ":5: key field \"id\" is null, not a string or an integer");
  EXPECT_EQ(r.errors[4], in + ":6: no key field \"id\"");
  EXPECT_EQ(r.errors[5].rfind(in + ":7: invalid JSON: ", 0), 0u) << r.errors[5];
  EXPECT_EQ(r.errors[6], in + ":8: blank line: JSON Lines holds one JSON "
                              "value on each line");
  EXPECT_EQ(r.errors[7], in + ":9: the line is an array, not an object with "
                              "the key field \"id\"");
  EXPECT_EQ(r.errors[8].rfind(in + ":10: invalid JSON: ", 0), 0u)
      << r.errors[8];
  EXPECT_EQ(
      r.errors[9],
      in + ":11: key field \"id\": key of 7 bytes exceeds the limit of 5");
}

TEST_F(TextFormatsTest, JsonlEndOfInput) {
  // An empty last line is no record; a last line without "\n" is cut short.
  ReadResult r = Read("{\"id\":1}\n\n", Jsonl("id"));
  ASSERT_OK(r.end);
  EXPECT_EQ(r.records.size(), 1u);
  r = Read("{\"id\":1}\n{\"id\":2}", Jsonl("id"));
  EXPECT_EQ(r.records.size(), 1u);
  EXPECT_TRUE(absl::IsDataLoss(r.end)) << r.end;
  EXPECT_EQ(Message(r.end).rfind(In() + ":2: no newline", 0), 0u) << r.end;
}

// --- Parquet and Arrow, in every format ------------------------------------

TEST_F(TextFormatsTest, ParquetAndArrowAreRefusedInEveryFormat) {
  RecordReaderOptions fixed = Fixed(4, 4);
  std::vector<RecordReaderOptions> formats = {RecordReaderOptions(), Csv(),
                                              Jsonl("id"), fixed,
                                              LengthPrefixedOptions()};
  for (const std::string& head :
       {std::string("PAR1\x15\x04\x15\x00\x15", 9) + std::string(40, 'x'),
        std::string("ARROW1\0\0\xff\xff\xff\xff", 12) + std::string(40, 'x')}) {
    for (const RecordReaderOptions& format : formats) {
      SCOPED_TRACE(
          StrCat(head.substr(0, 4), " as ", InputFormatName(format.format)));
      ReadResult r = Read(head, format);
      EXPECT_TRUE(r.records.empty());
      EXPECT_TRUE(absl::IsFailedPrecondition(r.end)) << r.end;
      EXPECT_NE(Message(r.end).find(
                    "roost-build, from the Python package: pip install "
                    "'./clients/python[batch]', then roost-build -i " +
                    In()),
                std::string::npos)
          << r.end;
    }
  }
  // A CSV header or JSON that starts with PAR1 in text is read.
  ReadResult r = Read("PAR1,b\n1,2\n", Csv());
  ASSERT_OK(r.end);
  EXPECT_EQ(r.records, (Pairs{{"1", R"({"b":"2"})"}}));
}

}  // namespace
}  // namespace roost::testing
