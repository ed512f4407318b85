// roost-load build --rows on arrow-columns input, in process: the reader
// (loader/column_stream_reader.h with RecordReaderOptions::rows) makes each
// value a roost-row-1 row of the value columns (loader/column_rows.h), on
// streams made by hand: every type its row type, nulls as null fields, and
// every value or type that has no row form refused naming the column (and
// the source's row). clients/python/tests/test_build.py round-trips real
// Parquet through roost-build --rows.

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "loader/column_stream_reader.h"
#include "storage/row/row_codec.h"
#include "storage/row/row_schema.h"
#include "tests/loader/column_stream_fixture.h"
#include "tests/loader/record_reader_fixture.h"
#include "util/json.h"

namespace roost::testing {
namespace {

// Two rows: row 0 has a value, row 1 is null (validity 0b01).
template <typename T>
std::string Fixed(T v) {
  return Array(2, 0, 1, {"\x01", Values<T>({v, T{}})});
}

struct Typed {
  std::string name;
  std::string type;
  std::string array;  // two rows, the second null
  FieldType row_type;
  std::string json;  // row 0's value
};

std::vector<Typed> EveryType() {
  const std::string floats = Array(2, 0, 0, {"", Values<float>({1.5f, -2})});
  return {
      {"bool", "\x01", Array(2, 0, 1, {"\x01", "\x01"}), FieldType::kBool,
       "true"},
      {"int8", "\x02", Fixed<int8_t>(-128), FieldType::kInt32, "-128"},
      {"int16", "\x03", Fixed<int16_t>(32767), FieldType::kInt32, "32767"},
      {"int32", kInt32, Fixed<int32_t>(-2147483647 - 1), FieldType::kInt32,
       "-2147483648"},
      {"uint8", "\x06", Fixed<uint8_t>(255), FieldType::kInt32, "255"},
      {"uint16", "\x07", Fixed<uint16_t>(65535), FieldType::kInt32, "65535"},
      {"int64", kInt64, Fixed<int64_t>(std::numeric_limits<int64_t>::min()),
       FieldType::kInt64, "-9223372036854775808"},
      {"uint32", "\x08", Fixed<uint32_t>(4294967295u), FieldType::kInt64,
       "4294967295"},
      {"uint64", "\x09",
       Fixed<uint64_t>(uint64_t{std::numeric_limits<int64_t>::max()}),
       FieldType::kInt64, "9223372036854775807"},
      // timestamp[ms, UTC]: its count of milliseconds.
      {"ts", std::string("\x13\x01") + Str("UTC"),
       Fixed<int64_t>(1714564800500), FieldType::kInt64, "1714564800500"},
      {"float32", "\x0a", Fixed<float>(0.25f), FieldType::kFloat32, "0.25"},
      {"float64", "\x0b", Fixed<double>(1e300), FieldType::kFloat64, "1e300"},
      {"string", kString,
       Array(2, 0, 1, {"\x01", Values<int32_t>({0, 3, 3}), "\xc3\xa9x"}),
       FieldType::kString, "\"\xc3\xa9x\""},
      {"large_string", "\x0d",
       Array(2, 0, 1, {"\x01", Values<int64_t>({0, 1, 1}), "z"}),
       FieldType::kString, "\"z\""},
      {"binary", "\x0e",
       Array(2, 0, 1,
             {"\x01", Values<int32_t>({0, 3, 3}),
              std::string("\x00\x01\xff", 3)}),
       FieldType::kBytes, "\"AAH/\""},
      {"fixed_binary", std::string("\x10") + U32(2),
       Array(2, 0, 1, {"\x01", std::string("ab\0\0", 4)}), FieldType::kBytes,
       "\"YWI=\""},
      {"embedding", std::string("\x18\x0a"),
       Array(2, 0, 1, {"\x01", Values<int32_t>({0, 2, 2})}, {floats}),
       FieldType::kFloat32List, "[1.5, -2.0]"},
      {"large_ints", std::string("\x19\x03"),
       Array(2, 0, 1, {"\x01", Values<int64_t>({0, 2, 2})},
             {Array(2, 0, 0, {"", Values<int16_t>({-7, 300})})}),
       FieldType::kInt64List, "[-7, 300]"},
      {"pair", std::string("\x1a") + U32(2) + "\x06",
       Array(2, 0, 1, {"\x01"},
             {Array(4, 0, 0, {"", Values<uint8_t>({1, 2, 0, 0})})}),
       FieldType::kInt64List, "[1, 2]"},
      {"tags", std::string("\x18") + kString,
       Array(2, 0, 1, {"\x01", Values<int32_t>({0, 3, 3})},
             {Strings({"a", "", "bc"})}),
       FieldType::kStringList, "[\"a\", \"\", \"bc\"]"},
  };
}

class ColumnRowsTest : public RecordReaderTest {
 protected:
  std::unique_ptr<RecordReader> OpenRows(const std::string& stream,
                                         bool rows = true) {
    RecordReaderOptions options;
    options.format = InputFormat::kArrowColumns;
    options.rows = rows;
    return Open(Write("in.cols", stream), options);
  }
  // The error reading a stream of key column "k" and value column `name`
  // of `type`, one batch of `rows` rows with `array`; "" when none.
  std::string ErrorOf(const std::string& name, const std::string& type,
                      const std::string& array, uint64_t rows = 1) {
    auto reader = OpenRows(Stream(
        1, {{"k", kString}, {name, type}},
        {Batch(rows, {Keys(rows), array}, "t.parquet row group 2", 100)}));
    ReadResult r = ReadAll(*reader);
    if (!r.errors.empty()) return r.errors[0];
    return r.end.ok() ? "" : Message(r.end);
  }
};

TEST_F(ColumnRowsTest, EveryTypeIsItsRowTypeAndNullsAreNullFields) {
  std::vector<Column> columns = {{"k", kString}};
  std::vector<std::string> arrays = {Keys(2)};
  for (const Typed& t : EveryType()) {
    columns.push_back({t.name, t.type});
    arrays.push_back(t.array);
  }
  auto reader = OpenRows(Stream(1, columns, {Batch(2, arrays)}));
  ReadResult r = ReadAll(*reader);
  ASSERT_OK(r.end);
  ASSERT_EQ(r.records.size(), 2u);
  const RowSchema* schema = reader->row_schema();
  ASSERT_NE(schema, nullptr);
  const std::vector<Typed> types = EveryType();
  ASSERT_EQ(schema->size(), types.size());
  Json want = Json::object(), nulls = Json::object();
  for (size_t f = 0; f < types.size(); ++f) {
    EXPECT_EQ(schema->field(f).name, types[f].name);
    EXPECT_EQ(schema->field(f).type, types[f].row_type) << types[f].name;
    EXPECT_TRUE(schema->field(f).nullable) << types[f].name;
    auto v = ParseJson(types[f].json);
    ASSERT_OK(v);
    want[types[f].name] = *v;
    nulls[types[f].name] = nullptr;
  }
  for (size_t i = 0; i < 2; ++i) {
    const std::string& row = r.records[i].second;
    ASSERT_OK(CheckRow(*schema, row)) << i;
    auto got = ParseJson(DumpJson(RowToJson(*schema, row), false));
    ASSERT_OK(got);
    EXPECT_EQ(*got, i == 0 ? want : nulls) << got->dump();
  }
}

TEST_F(ColumnRowsTest, OneValueColumnIsARowOfOneField) {
  // Value mode 0 (roost-build --value-column V --rows): still a row.
  auto reader = OpenRows(Stream(
      0, {{"k", kString}, {"n", kInt64}},
      {Batch(1, {Keys(1), Array(1, 0, 0, {"", Values<int64_t>({42})})})}));
  ReadResult r = ReadAll(*reader);
  ASSERT_OK(r.end);
  ASSERT_EQ(r.records.size(), 1u);
  ASSERT_NE(reader->row_schema(), nullptr);
  EXPECT_EQ(
      DumpJson(RowToJson(*reader->row_schema(), r.records[0].second), false),
      "{\"n\":42}");
}

TEST_F(ColumnRowsTest, TypesWithoutARowTypeAreRefusedNamingTheColumn) {
  const std::string int32s = Array(1, 0, 0, {"", Values<int32_t>({7})});
  struct Case {
    std::string type, array, named;
  };
  const std::vector<Case> cases = {
      {std::string("\x1b") + U32(1) + Str("x") + kInt32,
       Array(1, 0, 0, {""}, {int32s}), "struct<x: int32>"},
      {std::string("\x1c") + kString + kInt32,
       Array(1, 0, 0, {"", Values<int32_t>({0, 1})}, {Strings({"a"}), int32s}),
       "map<string, int32>"},
      {"\x11", int32s, "date32"},
      {std::string("\x16\x00", 2), Array(1, 0, 0, {"", Values<int64_t>({1})}),
       "duration"},
      {std::string("\x18\x0b"),
       Array(1, 0, 0, {"", Values<int32_t>({0, 1})},
             {Array(1, 0, 0, {"", Values<double>({1})})}),
       "list<double>"},
      {std::string("\x00", 1), Array(1, 0, 1, {""}), "null"},
  };
  for (const Case& c : cases) {
    const std::string e = ErrorOf("v", c.type, c.array);
    EXPECT_NE(e.find("column \"v\" is "), std::string::npos) << e;
    EXPECT_NE(e.find("which has no row type"), std::string::npos) << e;
    EXPECT_NE(e.find(c.named.substr(0, 4)), std::string::npos) << e;
    // Without --rows the same column is a JSON value.
    auto opaque = OpenRows(Stream(1, {{"k", kString}, {"v", c.type}},
                                  {Batch(1, {Keys(1), c.array})}),
                           /*rows=*/false);
    EXPECT_OK(ReadAll(*opaque).end) << c.named;
  }
}

TEST_F(ColumnRowsTest, ValuesWithoutARowFormAreRefusedNamingRowAndColumn) {
  // A uint64 past INT64_MAX, in the source's row 101.
  EXPECT_EQ(
      ErrorOf("u", "\x09",
              Array(2, 0, 0, {"", Values<uint64_t>({1, uint64_t{1} << 63})}),
              2),
      "t.parquet row group 2 row 101, column u: uint64 value "
      "9223372036854775808 is past int64's largest, 9223372036854775807 (a "
      "row's integers are int64)");
  // ... and as an element of a list.
  EXPECT_NE(
      ErrorOf(
          "us", "\x18\x09",
          Array(1, 0, 0, {"", Values<int32_t>({0, 2})},
                {Array(2, 0, 0, {"", Values<uint64_t>({1, ~uint64_t{0}})})}))
          .find("row 100, column us: element 1: uint64 value "
                "18446744073709551615"),
      std::string::npos);
  // A null inside a list.
  EXPECT_NE(ErrorOf("e", "\x18\x0a",
                    Array(1, 0, 0, {"", Values<int32_t>({0, 2})},
                          {Array(2, 0, 1, {"\x01", Values<float>({1, 0})})}))
                .find("row 100, column e: element 1 of the list is null"),
            std::string::npos);
  // A string that is not UTF-8, alone and in a list.
  EXPECT_NE(ErrorOf("s", kString, Strings({"ok\xff"}))
                .find("row 100, column s: invalid UTF-8 at byte 2"),
            std::string::npos);
  EXPECT_NE(ErrorOf("ss", std::string("\x18") + kString,
                    Array(1, 0, 0, {"", Values<int32_t>({0, 2})},
                          {Strings({"a", "\xc3"})}))
                .find("row 100, column ss: element 1: invalid UTF-8"),
            std::string::npos);
}

}  // namespace
}  // namespace roost::testing
