// roost-load build --rows end to end, the real binary on arrow-columns
// streams made by hand (tests/loader/column_stream_fixture.h): the MANIFEST's
// schema, `get` printing rows as JSON, `inspect` showing the schema,
// `verify` checking every row; and the schema's evolution checked when a
// version is published over one before it, into a data directory, a
// repository and by `roost-load publish` of shards built apart, each
// refusal leaving nothing published and --allow-schema-change recording
// what it let through.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "storage/version/manifest.h"
#include "tests/loader/column_stream_fixture.h"
#include "tests/loader/roost_load_fixture.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A value column of three rows: key "0" has a value, "1" is null, "2" has
// another value.
struct ValueColumn {
  std::string name;
  std::string type;
  std::string array;
};

ValueColumn Int64s(const std::string& name) {
  return {name, kInt64, Array(3, 0, 1, {"\x05", Values<int64_t>({5, 0, -7})})};
}
ValueColumn Texts(const std::string& name) {
  return {name, kString,
          Array(3, 0, 1, {"\x05", Values<int32_t>({0, 2, 2, 5}), "hiabc"})};
}
ValueColumn Embeddings(const std::string& name) {
  return {name, "\x18\x0a",
          Array(3, 0, 1, {"\x05", Values<int32_t>({0, 2, 2, 3})},
                {Array(3, 0, 0, {"", Values<float>({1.5f, -2, 0.25f})})})};
}
ValueColumn Int32s(const std::string& name) {  // of uint16: int32 fields
  return {name, "\x07", Array(3, 0, 0, {"", Values<uint16_t>({1, 2, 3})})};
}

std::string RowStream(const std::vector<ValueColumn>& values) {
  std::vector<Column> columns = {{"k", kString}};
  std::vector<std::string> arrays = {Keys(3)};
  for (const ValueColumn& v : values) {
    columns.push_back({v.name, v.type});
    arrays.push_back(v.array);
  }
  return Stream(1, columns, {Batch(3, arrays)});
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class RoostLoadRowsTest : public RoostLoadTest {
 protected:
  // Builds `values` as rows into `where` ("--data-dir D" or "--repository
  // R") table t.
  Result BuildRows(const std::vector<ValueColumn>& values,
                   const std::string& where, const std::string& extra = "") {
    const std::string in =
        Write(StrCat("in", ++inputs_, ".cols"), RowStream(values));
    return RoostLoad(StrCat("build -q --input-format arrow-columns --rows -i ",
                            in, " ", where, " --table t ", extra));
  }
  Result BuildOpaque(const std::string& where, const std::string& extra = "") {
    const std::string in = Write(StrCat("in", ++inputs_, ".tsv"), "0\tx\n");
    return RoostLoad(
        StrCat("build -q -i ", in, " ", where, " --table t ", extra));
  }
  Json Manifest(const std::string& version_dir) {
    return ParseOrFail(ReadText(version_dir + "/MANIFEST"));
  }
  std::string DataDir() { return dir_.File("data"); }
  int inputs_ = 0;
};

TEST_F(RoostLoadRowsTest, RowsAreReadBackAsJsonAndTheSchemaIsRecorded) {
  for (const char* format : {"cuckoo", "block"}) {
    SCOPED_TRACE(format);
    const std::string data = dir_.File(StrCat("data-", format));
    Result r =
        BuildRows({Int64s("n"), Texts("s"), Embeddings("e")},
                  StrCat("--data-dir ", data), StrCat("--format ", format));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const Json m = Manifest(data + "/t/v000001");
    EXPECT_EQ(m["schema"].dump(),
              "{\"encoding\":\"roost-row-1\",\"fields\":["
              "{\"name\":\"n\",\"nullable\":true,\"type\":\"int64\"},"
              "{\"name\":\"s\",\"nullable\":true,\"type\":\"string\"},"
              "{\"name\":\"e\",\"nullable\":true,\"type\":\"float32_list\"}]}");
    EXPECT_EQ(m["build_options"]["rows"], true);

    r = RoostLoadStdout(StrCat("get ", data, "/t 0 1 2"));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(
        r.out,
        "{\"key\":\"0\",\"row\":{\"n\":5,\"s\":\"hi\",\"e\":[1.5,-2.0]}}\n"
        "{\"key\":\"1\",\"row\":{\"n\":null,\"s\":null,\"e\":null}}\n"
        "{\"key\":\"2\",\"row\":{\"n\":-7,\"s\":\"abc\",\"e\":[0.25]}}\n");
    // Its bytes, as before, with --value-encoding.
    r = RoostLoadStdout(StrCat("get --value-encoding hex ", data, "/t 1"));
    EXPECT_EQ(r.out, "1\t07" + std::string(32, '0') + "\n");

    r = RoostLoad(StrCat("inspect ", data, "/t"));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_THAT(r.out, HasSubstr("schema            roost-row-1, 3 fields "
                                 "(docs/format/rows.md)\n"
                                 "  n               int64, nullable\n"
                                 "  s               string, nullable\n"
                                 "  e               float32_list, nullable\n"));

    r = RoostLoad(StrCat("verify ", data, "/t/v000001"));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_THAT(r.out, HasSubstr(", every value a row of its schema)"));
  }
}

TEST_F(RoostLoadRowsTest, RowsGoWithAVersionAndTypedInput) {
  const std::string in = Write("in.cols", RowStream({Int64s("n")}));
  Result r = RoostLoad(
      StrCat("build --input-format arrow-columns --rows -i ", in, " -o t.sst"));
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.out, HasSubstr("--rows goes with --data-dir or --repository"));
  const std::string tsv = Write("in.tsv", "a\tb\n");
  r = RoostLoad(
      StrCat("build --rows -i ", tsv, " --data-dir ", DataDir(), " --table t"));
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(
      r.out, HasSubstr("--rows reads --input-format csv, jsonl (with --schema) "
                       "or arrow-columns (roost-build --rows), not tsv"));
  EXPECT_TRUE(Versions(DataDir() + "/t").empty());
}

TEST_F(RoostLoadRowsTest, InputsOfOtherColumnsAreRefused) {
  const std::string a = Write("a.cols", RowStream({Int64s("n")}));
  const std::string b = Write("b.cols", RowStream({Texts("n")}));
  Result r = RoostLoad(StrCat("build --input-format arrow-columns --rows -i ",
                              a, " -i ", b, " --data-dir ", DataDir(),
                              " --table t --on-duplicate last"));
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr(StrCat(b, ": its rows' schema ")));
  EXPECT_THAT(r.out, HasSubstr("is not the one of the inputs before it"));
  EXPECT_TRUE(Versions(DataDir() + "/t").empty());
}

TEST_F(RoostLoadRowsTest, EvolutionIntoADataDirectory) {
  const std::string where = StrCat("--data-dir ", DataDir());
  ASSERT_EQ(BuildRows({Int64s("n"), Texts("s")}, where).exit_code, 0);
  // A nullable field added: fine, nothing recorded.
  Result r = BuildRows({Texts("s"), Int64s("n"), Embeddings("e")}, where);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_FALSE(Manifest(DataDir() + "/t/v000002").contains("schema_change"));

  struct Case {
    std::vector<ValueColumn> values;  // empty: opaque values
    std::vector<std::string> refused;
  };
  const std::vector<Case> cases = {
      {{Int64s("n"), Embeddings("e")},
       {"field \"s\" is gone (dropped or renamed)"}},
      {{Int64s("n"), Texts("text"), Embeddings("e")},
       {"field \"s\" is gone (dropped or renamed)"}},
      {{Texts("n"), Texts("s"), Int32s("e")},
       {"field \"n\" changes type from int64 to string",
        "field \"e\" changes type from float32_list to int32"}},
      {{}, {"values become opaque, where they were rows"}},
  };
  for (const Case& c : cases) {
    r = c.values.empty() ? BuildOpaque(where) : BuildRows(c.values, where);
    EXPECT_EQ(r.exit_code, 65) << r.out;
    EXPECT_THAT(r.out, HasSubstr("the new version of t cannot follow t "
                                 "v000002"));
    for (const std::string& why : c.refused) {
      EXPECT_THAT(r.out, HasSubstr(why));
    }
    EXPECT_THAT(r.out, HasSubstr("nothing was published; "
                                 "--allow-schema-change publishes it anyway"));
    EXPECT_EQ(Versions(DataDir() + "/t").size(), 2u);
  }
  // Forced: published, and what was refused recorded and shown.
  r = BuildRows({Int64s("n"), Embeddings("e")}, where, "--allow-schema-change");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(Manifest(DataDir() + "/t/v000003")["schema_change"],
            "field \"s\" is gone (dropped or renamed): readers of it would "
            "break");
  r = RoostLoad(StrCat("inspect ", DataDir(), "/t"));
  EXPECT_THAT(r.out, HasSubstr("schema_change     field \"s\" is gone"));
  // Opaque values over rows, forced; then rows over opaque, refused.
  r = BuildOpaque(where, "--allow-schema-change");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(Manifest(DataDir() + "/t/v000004")["schema_change"].dump(),
              HasSubstr("values become opaque"));
  r = BuildRows({Int64s("n")}, where);
  EXPECT_EQ(r.exit_code, 65);
  EXPECT_THAT(r.out, HasSubstr("values become rows of a schema (--rows), "
                               "where they were opaque"));
  EXPECT_EQ(Versions(DataDir() + "/t").size(), 4u);
}

TEST_F(RoostLoadRowsTest, EvolutionIntoARepository) {
  const std::string repo = dir_.File("repo");
  const std::string where = StrCat("--repository ", repo);
  ASSERT_EQ(BuildRows({Int64s("n"), Texts("s")}, where).exit_code, 0);
  Result r = BuildRows({Int64s("n")}, where);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr(StrCat("cannot follow file://", repo,
                                      "/t/v000001 (docs/format/rows.md")));
  EXPECT_THAT(r.out, HasSubstr("field \"s\" is gone"));
  EXPECT_EQ(Versions(repo + "/t"), std::vector<std::string>{"v000001"});
  r = BuildOpaque(where);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr("values become opaque"));
  EXPECT_EQ(Versions(repo + "/t"), std::vector<std::string>{"v000001"});
  r = BuildRows({Int64s("n")}, where, "--allow-schema-change");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(Manifest(repo + "/t/v000002")["schema_change"].dump(),
              HasSubstr("field \\\"s\\\" is gone"));
}

TEST_F(RoostLoadRowsTest, EvolutionAtPublishOfShardsBuiltApart) {
  const std::string repo = dir_.File("repo");
  ASSERT_EQ(BuildRows({Int64s("n"), Texts("s")}, StrCat("--repository ", repo))
                .exit_code,
            0);
  // Version 2, its two shards built apart without "s": each input holds
  // both shards' keys, the other shard's skipped as bad records.
  Result r = RoostLoadStdout(StrCat("claim --repository ", repo, " --table t"));
  ASSERT_EQ(r.out, "v000002\n");
  const std::string in = Write("shards.cols", RowStream({Int64s("n")}));
  for (int s = 0; s < 2; ++s) {
    r = RoostLoad(StrCat("build -q --input-format arrow-columns --rows -i ", in,
                         " --repository ", repo,
                         " --table t --shards 2 --max-bad-records 3 --shard ",
                         s, " --version 2"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  // The parts carry the schema; publish refuses it, nothing published.
  EXPECT_THAT(ReadText(repo + "/t/v000002/shard-0001-of-0002.json"),
              HasSubstr("\"schema\""));
  const std::string publish =
      StrCat("publish --repository ", repo, " --table t --version 2");
  r = RoostLoad(publish);
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out,
              HasSubstr(StrCat("cannot follow file://", repo, "/t/v000001")));
  EXPECT_THAT(r.out, HasSubstr("field \"s\" is gone"));
  EXPECT_FALSE(std::filesystem::exists(repo + "/t/v000002/MANIFEST"));
  r = RoostLoad(publish + " --allow-schema-change");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Json m = Manifest(repo + "/t/v000002");
  EXPECT_THAT(m["schema_change"].dump(), HasSubstr("is gone"));
  EXPECT_EQ(m["schema"]["fields"].size(), 1u);
  r = RoostLoadStdout(StrCat("get ", repo, "/t/v000002 0 2"));
  EXPECT_EQ(r.out,
            "{\"key\":\"0\",\"row\":{\"n\":5}}\n"
            "{\"key\":\"2\",\"row\":{\"n\":-7}}\n")
      << r.out;
  // --allow-schema-change is publish's, not a shard build's.
  r = RoostLoad(StrCat("build --input-format arrow-columns --rows -i ", in,
                       " --repository ", repo,
                       " --table t --shards 2 --shard 0 --version 3 "
                       "--allow-schema-change"));
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.out, HasSubstr("--allow-schema-change goes not with --shard"));
}

TEST_F(RoostLoadRowsTest, VerifyNamesTheKeyOfARowThatIsNotOfTheSchema) {
  ASSERT_EQ(
      BuildRows({Int64s("n")}, StrCat("--data-dir ", DataDir())).exit_code, 0);
  // The schema made to say string where the rows hold int64s: a row's
  // size no longer agrees with its slots.
  const std::string path = DataDir() + "/t/v000001/MANIFEST";
  std::string text = ReadText(path);
  const size_t at = text.find("\"int64\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 7, "\"bytes\"");
  std::filesystem::permissions(path, std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::add);
  std::ofstream(path, std::ios::trunc) << text;
  Result r = RoostLoad(StrCat("verify ", DataDir(), "/t/v000001"));
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr("its value is not a row of the version's "
                               "schema: "));
  EXPECT_THAT(r.out, HasSubstr(": key \""));
  r = RoostLoad(StrCat("get ", DataDir(), "/t 0"));
  EXPECT_EQ(r.exit_code, 65) << r.out;
  EXPECT_THAT(r.out, HasSubstr(": key \"0\": its value is not a row"));
}

// CSV and JSON Lines with --schema FILE: each field the column or member
// of its name, converted to its type.
const char kSchema[] = R"({"encoding": "roost-row-1", "fields": [
    {"name": "ok", "type": "bool", "nullable": false},
    {"name": "n", "type": "int32", "nullable": true},
    {"name": "big", "type": "int64", "nullable": false, "default": 9},
    {"name": "f", "type": "float32", "nullable": true},
    {"name": "d", "type": "float64", "nullable": true},
    {"name": "s", "type": "string", "nullable": false},
    {"name": "b", "type": "bytes", "nullable": true},
    {"name": "e", "type": "float32_list", "nullable": true},
    {"name": "ids", "type": "int64_list", "nullable": true},
    {"name": "tags", "type": "string_list", "nullable": true}]})";

TEST_F(RoostLoadRowsTest, CsvCellsBecomeTypedFields) {
  const std::string schema = Write("schema.json", kSchema);
  const std::string csv = Write(
      "in.csv",
      "id,ok,n,big,f,d,s,b,e,ids,tags,extra\n"
      "a,true,-5,9000000000,0.5,1e300,\"x, y\",AAH/,\"[1.5,-2]\",\"[1,2]\","
      "\"[\"\"p\"\",\"\"q\"\"]\",ignored\n"
      "b,False,,,,nan,,,,[],[],\n");
  Result r = RoostLoad(
      StrCat("build -q --input-format csv --key-column id "
             "--rows --schema ",
             schema, " -i ", csv, " --data-dir ", DataDir(), " --table t"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(Manifest(DataDir() + "/t/v000001")["schema"]["fields"].size(), 10u);
  r = RoostLoadStdout(StrCat("get ", DataDir(), "/t a b"));
  EXPECT_EQ(r.out,
            "{\"key\":\"a\",\"row\":{\"ok\":true,\"n\":-5,\"big\":9000000000,"
            "\"f\":0.5,"
            "\"d\":1e+300,\"s\":\"x, y\",\"b\":\"AAH/\",\"e\":[1.5,-2.0],"
            "\"ids\":[1,2],\"tags\":[\"p\",\"q\"]}}\n"
            "{\"key\":\"b\",\"row\":{\"ok\":false,\"n\":null,\"big\":9,\"f\":"
            "null,\"d\":null,"
            "\"s\":\"\",\"b\":null,\"e\":null,\"ids\":[],\"tags\":[]}}\n")
      << r.out;
}

TEST_F(RoostLoadRowsTest, JsonLinesMembersBecomeTypedFields) {
  const std::string schema = Write("schema.json", kSchema);
  const std::string jsonl = Write(
      "in.jsonl",
      "{\"id\": \"a\", \"ok\": true, \"n\": 7, \"f\": 2, \"s\": \"\\u00e9\", "
      "\"b\": null, \"e\": [0.25], \"ids\": [-1], \"tags\": [\"t\"], "
      "\"other\": {}}\n"
      "{\"id\": \"b\", \"ok\": false, \"s\": \"\", \"big\": -3}\n");
  Result r = RoostLoad(
      StrCat("build -q --input-format jsonl --key-field id "
             "--rows --schema ",
             schema, " -i ", jsonl, " --data-dir ", DataDir(), " --table t"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = RoostLoadStdout(StrCat("get ", DataDir(), "/t a b"));
  EXPECT_EQ(r.out,
            "{\"key\":\"a\",\"row\":{\"ok\":true,\"n\":7,\"big\":9,\"f\":2.0,"
            "\"d\":null,"
            "\"s\":\"\xc3\xa9\",\"b\":null,\"e\":[0.25],\"ids\":[-1],"
            "\"tags\":[\"t\"]}}\n"
            "{\"key\":\"b\",\"row\":{\"ok\":false,\"n\":null,\"big\":-3,\"f\":"
            "null,\"d\":null,"
            "\"s\":\"\",\"b\":null,\"e\":null,\"ids\":null,\"tags\":null}}\n")
      << r.out;
}

TEST_F(RoostLoadRowsTest, AValueOfTheWrongTypeIsRefusedNamingWhereAndTheType) {
  const std::string schema = Write("schema.json", kSchema);
  struct Case {
    std::string format, line, message;
  };
  const std::string head = "id,ok,n,big,f,d,s,b,e,ids,tags\n";
  const std::vector<Case> cases = {
      {"csv", head + "a,yes,1,1,1,1,s,,,,\n",
       ":2: column \"ok\": \"yes\" is not a bool"},
      {"csv", head + "a,true,x1,1,1,1,s,,,,\n",
       ":2: column \"n\": \"x1\" is not an int32"},
      {"csv", head + "a,true,3000000000,1,1,1,s,,,,\n",
       ":2: column \"n\": \"3000000000\" is out of int32's range"},
      {"csv", head + "a,true,1,1.5,1,1,s,,,,\n",
       ":2: column \"big\": \"1.5\" is not an int64"},
      {"csv", head + "a,true,1,1,1e39,1,s,,,,\n",
       ":2: column \"f\": \"1e39\" is out of float32's range"},
      {"csv", head + "a,true,1,1,1,1,s,%%%,,,\n",
       ":2: column \"b\": \"%%%\" (bytes are base64) is not a bytes"},
      {"csv", head + "a,true,1,1,1,1,s,,1;2,,\n",
       ":2: column \"e\": \"1;2\" (a list is a JSON array) is not a "
       "float32_list"},
      {"csv", head + "a,true,1,1,1,1,s,,,\"[1,\"\"x\"\"]\",\n",
       ":2: column \"ids\": element 1: a string is not an int64"},
      {"csv", head + "a,,1,1,1,1,s,,,,\n",
       ":2: column \"ok\": empty, but field \"ok\" is bool, not nullable"},
      {"jsonl", "{\"id\": \"a\", \"ok\": true, \"s\": 5}\n",
       ":1: field \"s\": an integer is not a string"},
      {"jsonl", "{\"id\": \"a\", \"ok\": 1, \"s\": \"\"}\n",
       ":1: field \"ok\": an integer is not a bool"},
      {"jsonl",
       "{\"id\": \"a\", \"ok\": true, \"s\": \"\", \"tags\": [null]}\n",
       ":1: field \"tags\": element 0: null is not a string"},
      {"jsonl", "{\"id\": \"a\", \"ok\": true}\n",
       ":1: field \"s\" has no value, no default and is not nullable"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.line);
    const std::string in = Write("bad." + c.format, c.line);
    Result r = RoostLoad(
        StrCat("build -q --input-format ", c.format,
               c.format == "csv" ? " --key-column id" : " --key-field id",
               " --rows --schema ", schema, " -i ", in, " --data-dir ",
               DataDir(), " --table t"));
    EXPECT_EQ(r.exit_code, 65) << r.out;
    EXPECT_THAT(r.out, HasSubstr(in + c.message));
    EXPECT_TRUE(Versions(DataDir() + "/t").empty());
  }
}

TEST_F(RoostLoadRowsTest, TheSchemaFlagIsCheckedBeforeAnyInput) {
  const std::string csv = Write("in.csv", "id,n\na,1\n");
  const std::string base = StrCat("build --input-format csv -i ", csv,
                                  " --data-dir ", DataDir(), " --table t ");
  Result r = RoostLoad(base + "--rows");
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.out, HasSubstr("--rows with --input-format csv needs "
                               "--schema FILE"));
  const std::string bad = Write("bad.json", R"({"encoding": "roost-row-1",
      "fields": [{"name": "n", "type": "int8", "nullable": true}]})");
  r = RoostLoad(base + "--rows --schema " + bad);
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.out, HasSubstr(StrCat("--schema ", bad, ": ")));
  EXPECT_THAT(r.out, HasSubstr("int8"));
  const std::string good = Write("good.json", kSchema);
  r = RoostLoad(base + "--schema " + good);
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.out, HasSubstr("--schema goes with --rows"));
  r = RoostLoad(base + "--rows --value-column n --schema " + good);
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_THAT(r.out, HasSubstr("--value-column goes not with --rows"));
  // A field with no column, not nullable and with no default.
  r = RoostLoad(base + "--rows --schema " + good);
  EXPECT_EQ(r.exit_code, 65);
  EXPECT_THAT(r.out, HasSubstr("--schema field \"ok\" (not nullable, no "
                               "default) has no column; the header has "
                               "\"id\", \"n\""));
  EXPECT_TRUE(Versions(DataDir() + "/t").empty());
}

}  // namespace
}  // namespace roost::testing
