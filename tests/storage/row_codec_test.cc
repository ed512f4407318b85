// Rows and their schemas (storage/row/): every type built and read back,
// defaults and nulls, the schema's JSON and its refusals, the evolution
// rules, projection as docs/format/rows.md gives it, and every malformed
// row CheckRow refuses, naming the field. format_golden_test compares the
// doc's worked example byte for byte.
#include "storage/row/row_codec.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "storage/row/row_schema.h"
#include "tests/harness/status_matchers.h"

namespace roost::testing {
namespace {

using ::testing::HasSubstr;

RowSchema Schema(const std::string& fields_json) {
  auto json = ParseJson(R"({"encoding": "roost-row-1", "fields": )" +
                        fields_json + "}");
  EXPECT_TRUE(json.ok()) << json.status();
  auto schema = RowSchema::FromJson(*json);
  EXPECT_TRUE(schema.ok()) << schema.status();
  return schema.ok() ? *schema : RowSchema();
}

// rows.md's example schema and row.
const char kExampleFields[] = R"([
    {"name": "ltv", "type": "float64", "nullable": true},
    {"name": "visits", "type": "int32", "nullable": false},
    {"name": "segments", "type": "string_list", "nullable": false},
    {"name": "embedding", "type": "float32_list", "nullable": false},
    {"name": "active", "type": "bool", "nullable": false},
    {"name": "country", "type": "string", "nullable": true}])";

std::string Floats(std::vector<float> v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

std::string ExampleRow(const RowSchema& schema) {
  RowBuilder b(&schema);
  b.SetFloat(0, 12.5);
  b.SetInt(1, 7);
  b.StartStringList(2);
  b.AddString(2, "a");
  b.AddString(2, "bc");
  b.SetVariable(3, Floats({1.0f, -0.5f}));
  b.SetBool(4, true);
  b.SetNull(5);
  std::string row;
  EXPECT_OK(b.Finish(&row));
  return row;
}

std::string Hex(std::string_view s) {
  std::string out;
  char buf[4];
  for (unsigned char c : s) {
    std::snprintf(buf, sizeof(buf), "%02x", c);
    out += buf;
  }
  return out;
}

TEST(RowCodecTest, EveryTypeReadsBack) {
  const RowSchema schema = Schema(R"([
      {"name": "b", "type": "bool", "nullable": false},
      {"name": "i32", "type": "int32", "nullable": false},
      {"name": "i64", "type": "int64", "nullable": false},
      {"name": "f32", "type": "float32", "nullable": false},
      {"name": "f64", "type": "float64", "nullable": false},
      {"name": "s", "type": "string", "nullable": false},
      {"name": "by", "type": "bytes", "nullable": false},
      {"name": "fl", "type": "float32_list", "nullable": false},
      {"name": "il", "type": "int64_list", "nullable": false},
      {"name": "sl", "type": "string_list", "nullable": false}])");
  RowBuilder b(&schema);
  // Set out of order: the builder lays them out in schema order.
  b.StartStringList(9);
  b.AddString(9, "");
  b.AddString(9, "zé");
  const int64_t ids[] = {std::numeric_limits<int64_t>::min(), 5};
  b.SetVariable(8, std::string_view(reinterpret_cast<const char*>(ids), 16));
  b.SetVariable(7, Floats({}));
  b.SetVariable(6, std::string("\0\xff", 2));
  b.SetVariable(5, "héllo");
  b.SetFloat(4, -1e300);
  b.SetFloat(3, 0.1);
  b.SetInt(2, std::numeric_limits<int64_t>::max());
  b.SetInt(1, -2147483648LL);
  b.SetBool(0, false);
  std::string row;
  ASSERT_OK(b.Finish(&row));
  ASSERT_OK(CheckRow(schema, row));
  RowReader r(&schema, row);
  EXPECT_FALSE(r.Bool(0));
  EXPECT_EQ(r.Int(1), -2147483648LL);
  EXPECT_EQ(r.Int(2), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(r.Float(3), 0.1f);
  EXPECT_EQ(r.Float(4), -1e300);
  EXPECT_EQ(r.Variable(5), "héllo");
  EXPECT_EQ(r.Variable(6), std::string("\0\xff", 2));
  EXPECT_EQ(r.Variable(7), "");
  EXPECT_EQ(r.Variable(8).size(), 16u);
  EXPECT_EQ(r.Strings(9), (std::vector<std::string_view>{"", "zé"}));
  EXPECT_EQ(DumpJson(RowToJson(schema, row), false),
            R"({"b":false,"i32":-2147483648,"i64":9223372036854775807,)"
            R"("f32":0.1,"f64":-1e+300,"s":"héllo","by":"AP8=","fl":[],)"
            R"("il":[-9223372036854775808,5],"sl":["","zé"]})");
  // The builder starts again from unset fields.
  b.SetBool(0, true);
  EXPECT_THAT(b.Finish(&row),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("field \"i32\" has no value")));
}

TEST(RowCodecTest, UnsetFieldsTakeTheirDefaultOrNull) {
  const RowSchema schema = Schema(R"([
      {"name": "n", "type": "int64", "nullable": true},
      {"name": "d", "type": "float32_list", "nullable": false,
       "default": [1.5, 2]},
      {"name": "t", "type": "string_list", "nullable": false,
       "default": ["x"]},
      {"name": "y", "type": "bytes", "nullable": false, "default": "YWI="}])");
  RowBuilder b(&schema);
  std::string row;
  ASSERT_OK(b.Finish(&row));
  ASSERT_OK(CheckRow(schema, row));
  EXPECT_EQ(DumpJson(RowToJson(schema, row), false),
            R"({"n":null,"d":[1.5,2.0],"t":["x"],"y":"YWI="})");
}

TEST(RowCodecTest, ANullOnAFieldThatIsNotNullableIsRefused) {
  const RowSchema schema =
      Schema(R"([{"name": "v", "type": "string", "nullable": false}])");
  RowBuilder b(&schema);
  b.SetNull(0);
  std::string row;
  EXPECT_THAT(b.Finish(&row),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("field \"v\" is null but not nullable")));
}

TEST(RowCodecTest, SchemasAreRefusedNamingWhatIsWrong) {
  auto refused = [](const std::string& json) {
    auto parsed = ParseJson(json);
    EXPECT_TRUE(parsed.ok());
    auto s = RowSchema::FromJson(*parsed);
    EXPECT_FALSE(s.ok()) << json;
    return s.ok() ? std::string() : std::string(s.status().message());
  };
  EXPECT_THAT(refused(R"({"encoding": "avro", "fields": []})"),
              HasSubstr("\"avro\", which this build does not read"));
  EXPECT_THAT(refused(R"({"encoding": "roost-row-1", "fields": []})"),
              HasSubstr("without fields"));
  EXPECT_THAT(refused(R"({"encoding": "roost-row-1", "fields": [
          {"name": "a", "type": "int16", "nullable": false}]})"),
              HasSubstr("field \"a\": unknown type \"int16\""));
  EXPECT_THAT(refused(R"({"encoding": "roost-row-1", "fields": [
          {"name": "a", "type": "bool", "nullable": false},
          {"name": "a", "type": "bool", "nullable": false}]})"),
              HasSubstr("field \"a\" appears twice"));
  EXPECT_THAT(refused(R"({"encoding": "roost-row-1", "fields": [
          {"name": "a", "type": "bool"}]})"),
              HasSubstr("field \"a\": missing or malformed \"nullable\""));
  EXPECT_THAT(refused(R"({"encoding": "roost-row-1", "fields": [
          {"name": "a", "type": "int32", "nullable": false,
           "default": 3000000000}]})"),
              HasSubstr("field \"a\": its default 3000000000 is not a int32"));
  EXPECT_THAT(refused(R"({"encoding": "roost-row-1", "fields": [
          {"name": "", "type": "bool", "nullable": false}]})"),
              HasSubstr("field 0: a name of 0 bytes"));
}

TEST(RowCodecTest, TheSchemaRoundTripsThroughJson) {
  const RowSchema schema = Schema(kExampleFields);
  auto again = ParseJson(DumpJson(schema.ToJson()));
  ASSERT_OK(again);
  auto back = RowSchema::FromJson(*again);
  ASSERT_OK(back);
  EXPECT_TRUE(*back == schema);
  EXPECT_EQ(schema.header_size(), 26u);
  EXPECT_EQ(schema.bitmap_size(), 1u);
}

TEST(RowCodecTest, EvolutionAddsNullableOrDefaultedFieldsOnly) {
  const RowSchema v1 = Schema(R"([
      {"name": "a", "type": "int64", "nullable": false},
      {"name": "b", "type": "string", "nullable": true}])");
  // Fields added anywhere, nullable or with a default; order may change.
  EXPECT_OK(CheckSchemaEvolution(v1, Schema(R"([
      {"name": "c", "type": "bool", "nullable": true},
      {"name": "b", "type": "string", "nullable": true},
      {"name": "a", "type": "int64", "nullable": false},
      {"name": "d", "type": "int32", "nullable": false, "default": 0}])")));
  const absl::Status s = CheckSchemaEvolution(v1, Schema(R"([
      {"name": "a", "type": "int32", "nullable": false},
      {"name": "b2", "type": "string", "nullable": true},
      {"name": "e", "type": "bool", "nullable": false}])"));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("field \"a\" changes type from int64 to "
                                     "int32"));
  EXPECT_THAT(s.message(), HasSubstr("field \"b\" is gone (dropped or "
                                     "renamed)"));
  EXPECT_THAT(s.message(), HasSubstr("field \"e\" is new, not nullable and "
                                     "has no default"));
  EXPECT_THAT(
      CheckSchemaEvolution(v1, Schema(R"([
          {"name": "a", "type": "int64", "nullable": true},
          {"name": "b", "type": "string", "nullable": true}])")),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr("field \"a\" changes from not nullable to nullable")));
}

TEST(RowCodecTest, AProjectionIsTheDocsBytes) {
  const RowSchema schema = Schema(kExampleFields);
  const std::string row = ExampleRow(schema);
  std::vector<uint32_t> indexes;
  const std::vector<std::string> names{"embedding", "visits"};
  auto projected = schema.Project(names, &indexes);
  ASSERT_OK(projected);
  EXPECT_EQ(indexes, (std::vector<uint32_t>{3, 1}));
  RowProjection p(&schema, &*projected, indexes);
  auto size = p.Size(row);
  ASSERT_OK(size);
  std::string out(*size, '\0');
  EXPECT_EQ(p.Write(row, out.data()), out.data() + out.size());
  EXPECT_EQ(Hex(out), "08000000070000000000803f000000bf");
  ASSERT_OK(CheckRow(*projected, out));
  // A nullable field keeps its null in the projection's own bitmap.
  const std::vector<std::string> with_null{"visits", "country", "ltv"};
  auto p2 = schema.Project(with_null, &indexes);
  ASSERT_OK(p2);
  RowProjection q(&schema, &*p2, indexes);
  out.assign(*q.Size(row), '\0');
  q.Write(row, out.data());
  ASSERT_OK(CheckRow(*p2, out));
  EXPECT_EQ(DumpJson(RowToJson(*p2, out), false),
            R"({"visits":7,"country":null,"ltv":12.5})");
}

TEST(RowCodecTest, AProjectionOfAnUnknownOrRepeatedFieldIsRefused) {
  const RowSchema schema = Schema(kExampleFields);
  std::vector<uint32_t> indexes;
  const std::vector<std::string> unknown{"visits", "lvt"};
  EXPECT_THAT(schema.Project(unknown, &indexes).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("no field \"lvt\" in the table's rows")));
  const std::vector<std::string> twice{"visits", "visits"};
  EXPECT_THAT(schema.Project(twice, &indexes).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("field \"visits\" is asked for twice")));
}

TEST(RowCodecTest, MalformedRowsAreRefusedNamingTheField) {
  const RowSchema schema = Schema(kExampleFields);
  const std::string row = ExampleRow(schema);
  ASSERT_OK(CheckRow(schema, row));
  auto check = [&](std::string bad) {
    const absl::Status s = CheckRow(schema, bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
    return std::string(s.message());
  };
  auto with = [&](size_t offset, std::string bytes) {
    std::string r = row;
    r.replace(offset, bytes.size(), bytes);
    return r;
  };
  EXPECT_THAT(check(row.substr(0, 20)), HasSubstr("shorter than its schema"));
  EXPECT_THAT(check(row + "x"), HasSubstr("its fields end at 49"));
  EXPECT_THAT(check(row.substr(0, 48)), HasSubstr("\"embedding\": its bytes "
                                                  "end at 23, outside"));
  // segments ending after embedding: embedding's end goes down.
  EXPECT_THAT(check(with(13, std::string("\x18\0\0\0", 4))),
              HasSubstr("\"segments\": its bytes end at 24"));
  EXPECT_THAT(check(with(0, "\x22")), HasSubstr("\"visits\": null but not "));
  EXPECT_THAT(check(with(0, "\x60")), HasSubstr("null bit 6 is set past"));
  EXPECT_THAT(check(with(21, "\x02")), HasSubstr("\"active\": a bool of 2"));
  EXPECT_THAT(check(with(0, "\x21")), HasSubstr("\"ltv\": null, but its slot"));
  EXPECT_THAT(check(with(26, std::string("\x05\0\0\0", 4))),
              HasSubstr("\"segments\": a malformed list"));
  EXPECT_THAT(check(with(38, "\xff")),
              HasSubstr("\"segments\": string 0 is not UTF-8"));
  // embedding of 7 bytes: move segments' end one byte on.
  std::string odd = with(13, std::string("\x10\0\0\0", 4));
  EXPECT_THAT(check(odd), HasSubstr("\"segments\": a malformed list"));
}

TEST(RowCodecTest, EveryByteFlippedIsCheckedAndProjectedWithinTheRow) {
  // Under --sanitize: no read outside the row, whatever its bytes.
  const RowSchema schema = Schema(kExampleFields);
  const std::string row = ExampleRow(schema);
  std::vector<uint32_t> indexes;
  const std::vector<std::string> names{"country", "segments", "embedding"};
  auto projected = schema.Project(names, &indexes);
  ASSERT_OK(projected);
  RowProjection p(&schema, &*projected, indexes);
  for (size_t i = 0; i < row.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = row;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      // A heap copy of exactly the row's size, so that ASan sees overruns.
      std::unique_ptr<char[]> exact(new char[bad.size()]);
      std::memcpy(exact.get(), bad.data(), bad.size());
      const std::string_view view(exact.get(), bad.size());
      if (CheckRow(schema, view).ok()) (void)RowToJson(schema, view);
      auto size = p.Size(view);
      if (!size.ok()) continue;
      std::unique_ptr<char[]> out(new char[*size + 1]);
      EXPECT_EQ(p.Write(view, out.get()), out.get() + *size);
    }
  }
}

}  // namespace
}  // namespace roost::testing
