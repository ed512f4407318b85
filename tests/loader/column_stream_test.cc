// The arrow-columns stream's reader (loader/column_stream_reader.h): the
// worked example of docs/format/column_stream.md read from the doc, values
// of each type as the doc's table says, and every kind of inconsistent
// stream refused with a message naming where, never read past a buffer
// (this suite runs under --sanitize too). clients/python/tests/test_build.py
// round-trips real Parquet through roost-build; this suite covers the bytes.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "loader/column_stream_reader.h"
#include "tests/loader/column_stream_fixture.h"
#include "tests/loader/record_reader_fixture.h"

namespace roost::testing {
namespace {

class ColumnStreamTest : public RecordReaderTest {
 protected:
  ReadResult Read(const std::string& stream) {
    RecordReaderOptions options;
    options.format = InputFormat::kArrowColumns;
    options.buffer_size = buffer_size_;
    auto reader = Open(Write("in.cols", stream), options);
    return ReadAll(*reader);
  }
  // The one value of a stream of key column "k" and one value column `v`
  // (mode 1: {"v":...}; the object's wrapping is cut off).
  std::string ValueOf(const std::string& type, const std::string& array) {
    ReadResult r = Read(
        Stream(1, {{"k", kString}, {"v", type}}, {Batch(1, {Keys(1), array})}));
    EXPECT_OK(r.end);
    if (r.records.size() != 1) return "<no record>";
    const std::string& v = r.records[0].second;
    return v.substr(5, v.size() - 6);
  }
  size_t buffer_size_ = size_t{1} << 20;
};

// The hexdump of docs/format/column_stream.md's worked example: its `xxd`
// lines ("00000010: 0102 0000 ...  text"), the hex between ": " and the
// two spaces before the text.
std::string TheDocsExample() {
  std::ifstream in(std::string(ROOST_SOURCE_DIR) +
                   "/docs/format/column_stream.md");
  std::string bytes;
  for (std::string line; std::getline(in, line);) {
    if (line.size() < 12 || line.compare(8, 2, ": ") != 0 ||
        line.find_first_not_of("0123456789abcdef") != 8) {
      continue;
    }
    const std::string hex = line.substr(10, line.find("  ", 10) - 10);
    for (size_t k = 0; k + 1 < hex.size();) {
      if (hex[k] == ' ') {
        ++k;
        continue;
      }
      bytes.push_back(
          static_cast<char>(std::stoi(hex.substr(k, 2), nullptr, 16)));
      k += 2;
    }
  }
  return bytes;
}

TEST_F(ColumnStreamTest, ReadsTheDocsWorkedExample) {
  const std::string example = TheDocsExample();
  ASSERT_EQ(example.size(), 196u);
  for (size_t buffer : {size_t{1}, size_t{7}, size_t{1} << 20}) {
    buffer_size_ = buffer;
    ReadResult r = Read(example);
    EXPECT_OK(r.end);
    EXPECT_EQ(r.records, (Pairs{{"a", "{\"n\":1}"}, {"b", "{\"n\":null}"}}));
  }
}

TEST_F(ColumnStreamTest, EveryCutOfTheExampleIsRefusedAsCutShort) {
  const std::string example = TheDocsExample();
  for (size_t n = 0; n < example.size(); ++n) {
    ReadResult r = Read(example.substr(0, n));
    EXPECT_FALSE(r.end.ok()) << n;
    if (n >= 16) {
      EXPECT_TRUE(absl::IsDataLoss(r.end)) << n << r.end;
    }
  }
}

TEST_F(ColumnStreamTest, EveryByteFlippedIsReadOrRefusedNeverOverrun) {
  // Under --sanitize an out-of-bounds read fails this test.
  const std::string example = TheDocsExample();
  for (size_t i = 0; i < example.size(); ++i) {
    for (uint8_t x : {0x01, 0x80, 0xff}) {
      std::string bad = example;
      bad[i] = static_cast<char>(bad[i] ^ x);
      ReadResult r = Read(bad);
      if (!r.end.ok()) {
        EXPECT_FALSE(Message(r.end).empty());
      }
    }
  }
}

TEST_F(ColumnStreamTest, NumbersAsTheDocSays) {
  EXPECT_EQ(
      ValueOf("\x09", Array(1, 0, 0, {"", Values<uint64_t>({UINT64_MAX})})),
      "18446744073709551615");
  EXPECT_EQ(ValueOf("\x02", Array(1, 0, 0, {"", Values<int8_t>({-128})})),
            "-128");
  EXPECT_EQ(ValueOf("\x0a", Array(1, 0, 0, {"", Values<float>({0.1f})})),
            "0.1");
  EXPECT_EQ(ValueOf("\x0b", Array(1, 0, 0, {"", Values<double>({3.0})})), "3");
  EXPECT_EQ(ValueOf("\x0b", Array(1, 0, 0, {"", Values<double>({1e100})})),
            "1e+100");
  EXPECT_EQ(ValueOf("\x0b", Array(1, 0, 0, {"", Values<double>({NAN})})),
            "null");
  EXPECT_EQ(ValueOf("\x0b", Array(1, 0, 0, {"", Values<double>({-INFINITY})})),
            "null");
  EXPECT_EQ(ValueOf("\x01", Array(1, 0, 0, {"", "\x01"})), "true");
  // decimal128(5, 2) of -1250: "-12.50"; of 5: "0.05".
  const __int128 d = -1250;
  EXPECT_EQ(
      ValueOf(std::string("\x17") + U32(5) + U32(2),
              Array(1, 0, 0,
                    {"", std::string(reinterpret_cast<const char*>(&d), 16)})),
      "\"-12.50\"");
  const __int128 small = 5;
  EXPECT_EQ(
      ValueOf(
          std::string("\x17") + U32(5) + U32(2),
          Array(1, 0, 0,
                {"", std::string(reinterpret_cast<const char*>(&small), 16)})),
      "\"0.05\"");
}

TEST_F(ColumnStreamTest, TimesAsTheDocSays) {
  // date32 -1 is 1969-12-31.
  EXPECT_EQ(ValueOf("\x11", Array(1, 0, 0, {"", Values<int32_t>({-1})})),
            "\"1969-12-31\"");
  // timestamp[ms, UTC] 1500 and timestamp[s] (no zone) 86399.
  EXPECT_EQ(ValueOf(std::string("\x13\x01", 2) + Str("UTC"),
                    Array(1, 0, 0, {"", Values<int64_t>({1500})})),
            "\"1970-01-01T00:00:01.500Z\"");
  EXPECT_EQ(ValueOf(std::string("\x13\x00", 2) + Str(""),
                    Array(1, 0, 0, {"", Values<int64_t>({86399})})),
            "\"1970-01-01T23:59:59\"");
  EXPECT_EQ(ValueOf(std::string("\x15\x02", 2),
                    Array(1, 0, 0, {"", Values<int64_t>({3723000001})})),
            "\"01:02:03.000001\"");
  EXPECT_EQ(ValueOf(std::string("\x16\x03", 2),
                    Array(1, 0, 0, {"", Values<int64_t>({-5})})),
            "-5");
}

TEST_F(ColumnStreamTest, TimesAtTheEndsOfInt64) {
  // A fuzzer's finding: the time of day of a timestamp within a day of
  // INT64_MIN was its value less its day times a day's units, a product
  // that overflows. It is the floor remainder now.
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  // -9223372036854775808 ms is 16:47:04.192 of day -106751991168, and
  // 9223372036854775807 ms 07:12:55.807 of day 106751991167 (Python's
  // divmod by 86400000).
  const std::string ms = std::string("\x13\x01", 2) + Str("");
  const std::string at_min =
      ValueOf(ms, Array(1, 0, 0, {"", Values<int64_t>({kMin})}));
  EXPECT_TRUE(at_min.ends_with("T16:47:04.192\"")) << at_min;
  const std::string at_max =
      ValueOf(ms, Array(1, 0, 0, {"", Values<int64_t>({kMax})}));
  EXPECT_TRUE(at_max.ends_with("T07:12:55.807\"")) << at_max;
  // time64[ns] of INT64_MIN: a time of day, whatever the value is.
  EXPECT_EQ(ValueOf(std::string("\x15\x03", 2),
                    Array(1, 0, 0, {"", Values<int64_t>({kMin})})),
            "\"00:12:43.145224192\"");
}

TEST_F(ColumnStreamTest, StringsBinaryAndNesting) {
  EXPECT_EQ(ValueOf(kString, Strings({"a\"\\\n\x01\xc3\xa9"})),
            "\"a\\\"\\\\\\n\\u0001\xc3\xa9\"");
  EXPECT_EQ(ValueOf("\x0e", Strings({std::string("\x00\x01\x02\xff", 4)})),
            "\"AAEC/w==\"");
  // list<int32> [[7, null]]; struct<x: int32> {x: 7} sliced at offset 1.
  const std::string ints = Array(2, 0, 1, {"\x01", Values<int32_t>({7, 0})});
  EXPECT_EQ(ValueOf(std::string("\x18") + kInt32,
                    Array(1, 0, 0, {"", Values<int32_t>({0, 2})}, {ints})),
            "[7,null]");
  EXPECT_EQ(ValueOf(std::string("\x1b") + U32(1) + Str("x") + kInt32,
                    Array(1, 1, 0, {""},
                          {Array(1, 1, 0, {"", Values<int32_t>({0, 7})})})),
            "{\"x\":7}");
  // map<string, int32> {"k": 7}.
  EXPECT_EQ(ValueOf(std::string("\x1c") + kString + kInt32,
                    Array(1, 0, 0, {"", Values<int32_t>({0, 1})},
                          {Strings({"k"}),
                           Array(1, 0, 0, {"", Values<int32_t>({7})})})),
            "{\"k\":7}");
  // fixed_size_list<int32>[2] at offset 1: the child's positions 2 and 3.
  EXPECT_EQ(
      ValueOf(std::string("\x1a") + U32(2) + kInt32,
              Array(1, 1, 0, {""},
                    {Array(4, 0, 0, {"", Values<int32_t>({1, 2, 3, 4})})})),
      "[3,4]");
}

TEST_F(ColumnStreamTest, IntegerKeysAndOneColumnsBytes) {
  ReadResult r =
      Read(Stream(0, {{"id", kInt64}, {"v", kString}},
                  {Batch(2, {Array(2, 0, 0, {"", Values<int64_t>({-3, 42})}),
                             Strings({"x", "{\"raw\":1}"})})}));
  EXPECT_OK(r.end);
  EXPECT_EQ(r.records, (Pairs{{"-3", "x"}, {"42", "{\"raw\":1}"}}));
}

TEST_F(ColumnStreamTest, RefusesANullKeyNamingTheSourcesRow) {
  ReadResult r =
      Read(Stream(1, {{"id", kInt64}, {"v", kInt32}},
                  {Batch(2,
                         {Array(2, 0, 1, {"\x01", Values<int64_t>({1, 0})}),
                          Array(2, 0, 0, {"", Values<int32_t>({1, 2})})},
                         "p.parquet row group 4", 100)}));
  EXPECT_TRUE(absl::IsInvalidArgument(r.end)) << r.end;
  EXPECT_EQ(Message(r.end),
            "p.parquet row group 4 row 101, column id: the key is null");
  EXPECT_EQ(r.records.size(), 1u);
}

TEST_F(ColumnStreamTest, RefusesInvalidUtf8NamingTheRowAndColumn) {
  ReadResult r = Read(Stream(1, {{"k", kString}, {"name", kString}},
                             {Batch(2, {Keys(2), Strings({"ok", "b\xff"})})}));
  EXPECT_EQ(Message(r.end),
            "t.parquet row group 0 row 1, column name: invalid UTF-8 at byte "
            "1 of a string");
  // Overlong and surrogate forms too.
  for (const std::string bad :
       {"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80"}) {
    ReadResult s = Read(Stream(1, {{"k", kString}, {"name", kString}},
                               {Batch(1, {Keys(1), Strings({bad})})}));
    EXPECT_TRUE(absl::IsInvalidArgument(s.end)) << bad;
  }
}

TEST_F(ColumnStreamTest, RefusesANullValueOfOneColumnsBytes) {
  ReadResult r =
      Read(Stream(0, {{"k", kString}, {"v", kString}},
                  {Batch(1, {Keys(1), Array(1, 0, 1,
                                            {std::string(1, '\0'),
                                             Values<int32_t>({0, 0}), ""})})}));
  EXPECT_EQ(Message(r.end),
            "t.parquet row group 0 row 0, column v: the value is null "
            "(--value-columns keeps nulls, as JSON null)");
}

// Each inconsistent batch, and the message's tail naming what is wrong.
TEST_F(ColumnStreamTest, RefusesInconsistentBuffersNamingBatchAndColumn) {
  const std::string prefix =
      "t.parquet row group 0 batch 1 (first row 0), column v: ";
  struct Case {
    std::string array;
    std::string problem;
  };
  const std::vector<Case> cases = {
      {Array(2, 0, 0, {"", Values<int32_t>({7})}),
       "values buffer of 4 bytes is shorter than the 8 its 2 values at "
       "offset 0 need"},
      {Array(2, 0, 1, {"\x03", Values<int32_t>({7, 8})}),
       "null count 1 disagrees with the validity bitmap's 0"},
      {Array(2, 0, 1, {"", Values<int32_t>({7, 8})}),
       "null count 1 without a validity bitmap"},
      {Array(2, 6, 0, {"", Values<int32_t>({1, 2, 3, 4, 5, 6, 7})}),
       "values buffer of 28 bytes is shorter than the 32 its 2 values at "
       "offset 6 need"},
      {Array(1, 0, 0, {"", Values<int32_t>({0, 1})}),
       "1 values in a batch of 2 rows"},
      {Array(uint64_t{1} << 41, 0, 0, {"", ""}),
       "length 2199023255552 or offset 0 is larger than 2^40"},
  };
  for (const Case& c : cases) {
    ReadResult r = Read(Stream(1, {{"k", kString}, {"v", kInt32}},
                               {Batch(2, {Keys(2), c.array})}));
    EXPECT_EQ(Message(r.end), prefix + c.problem);
    EXPECT_TRUE(r.records.empty());
  }
  const std::vector<Case> strings = {
      {Array(2, 0, 0, {"", Values<int32_t>({0, 2, 1}), "abc"}),
       "row 1: offset 1 is smaller than the one before it, 2"},
      {Array(2, 0, 0, {"", Values<int32_t>({0, 2, 9}), "abc"}),
       "row 1: offset 9 is past the end of the data buffer (3)"},
      {Array(2, 0, 0, {"", Values<int32_t>({-1, 2, 3}), "abc"}),
       "row 0: offset -1 is negative"},
      {Array(2, 0, 0, {"", Values<int32_t>({0, 2}), "abc"}),
       "offsets buffer of 8 bytes is shorter than the 12 its 2 values at "
       "offset 0 need"},
  };
  for (const Case& c : strings) {
    ReadResult r = Read(Stream(1, {{"k", kString}, {"v", kString}},
                               {Batch(2, {Keys(2), c.array})}));
    EXPECT_EQ(Message(r.end), prefix + c.problem);
  }
  // A list's offsets past its child.
  ReadResult r = Read(Stream(
      1, {{"k", kString}, {"v", std::string("\x18") + kInt32}},
      {Batch(1, {Keys(1),
                 Array(1, 0, 0, {"", Values<int32_t>({0, 3})},
                       {Array(2, 0, 0, {"", Values<int32_t>({1, 2})})})})}));
  EXPECT_EQ(Message(r.end),
            prefix + "row 0: offset 3 is past the end of the child array (2)");
}

TEST_F(ColumnStreamTest, RefusesABadHeader) {
  ReadResult r = Read("key\tvalue\n");
  EXPECT_THAT(Message(r.end),
              ::testing::HasSubstr("not an arrow-columns stream"));
  std::string v2 = Stream(1, {{"k", kString}, {"v", kInt32}}, {});
  v2[8] = 2;
  EXPECT_THAT(Message(Read(v2).end),
              ::testing::HasSubstr("arrow-columns version 2 is not"));
  EXPECT_THAT(Message(Read(Stream(1, {{"k", kString}, {"v", "\x63"}}, {})).end),
              ::testing::HasSubstr("column \"v\": unknown type code 99"));
  EXPECT_THAT(Message(Read(Stream(1, {{"k", "\x0b"}, {"v", kInt32}}, {})).end),
              ::testing::HasSubstr("key column k is double: a key is a string, "
                                   "binary or integer column"));
  EXPECT_THAT(Message(Read(Stream(1, {{"k", kString}, {"k", kInt32}}, {})).end),
              ::testing::HasSubstr("column \"k\" appears twice"));
  EXPECT_THAT(
      Message(Read(Stream(1,
                          {{"k", kString},
                           {"m", std::string("\x1c") + kInt32 + kInt32}},
                          {}))
                  .end),
      ::testing::HasSubstr("map keys must be strings, not int32"));
  EXPECT_THAT(
      Message(
          Read(Stream(0, {{"k", kString}, {"a", kInt32}, {"b", kInt32}}, {}))
              .end),
      ::testing::HasSubstr("3 columns: a key column and one value column"));
  std::string deep = kInt32;
  for (int i = 0; i < 40; ++i) deep = std::string("\x18") + deep;
  EXPECT_THAT(Message(Read(Stream(1, {{"k", kString}, {"v", deep}}, {})).end),
              ::testing::HasSubstr("nested deeper than 32"));
}

TEST_F(ColumnStreamTest, RefusesAStreamCutShortOrWithBytesAfterTheEnd) {
  const std::vector<Column> columns = {{"k", kString}, {"v", kInt32}};
  const std::string batch =
      Batch(1, {Keys(1), Array(1, 0, 0, {"", Values<int32_t>({5})})});
  ReadResult cut = Read(Stream(1, columns, {batch}, /*end=*/false));
  EXPECT_TRUE(absl::IsDataLoss(cut.end)) << cut.end;
  EXPECT_THAT(Message(cut.end), ::testing::HasSubstr("before the end marker"));
  // The batch's record came first: the build refuses the whole input.
  EXPECT_EQ(cut.records.size(), 1u);
  ReadResult after = Read(Stream(1, columns, {batch}) + "x");
  EXPECT_THAT(Message(after.end),
              ::testing::HasSubstr("bytes after the end marker"));
  // Empty batches and no batches at all are fine.
  ReadResult empty =
      Read(Stream(1, columns, {Batch(0, {Keys(0), Array(0, 0, 0, {"", ""})})}));
  EXPECT_OK(empty.end);
  EXPECT_TRUE(empty.records.empty());
}

TEST_F(ColumnStreamTest, SpansNameEachBatchsSource) {
  RecordReaderOptions options;
  options.format = InputFormat::kArrowColumns;
  const std::string ints = Array(2, 0, 0, {"", Values<int32_t>({1, 2})});
  auto reader = Open(
      Write("in.cols",
            Stream(1, {{"k", kString}, {"v", kInt32}},
                   {Batch(2, {Keys(2), ints}, "a.parquet row group 0", 0),
                    Batch(2, {Keys(2), ints}, "a.parquet row group 0", 2),
                    Batch(2, {Keys(2), ints}, "b.parquet row group 3", 0)})),
      options);
  ReadResult r = ReadAll(*reader);
  EXPECT_OK(r.end);
  EXPECT_EQ(r.records.size(), 6u);
  const std::vector<RecordReader::Span> spans = reader->spans();
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[1].first_record, 2u);
  EXPECT_EQ(spans[1].first_row, 2u);
  EXPECT_EQ(spans[2].source, "b.parquet row group 3");
}

}  // namespace
}  // namespace roost::testing
