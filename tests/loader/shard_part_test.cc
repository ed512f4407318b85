// A shard's part (loader/shard_part.h): its name, its JSON, and publish's
// merge of the parts of a version, in process. The merged MANIFEST is
// MakeManifest's for the same shards built on one host (but for inputs and
// build_time), whatever the shards' key and value lengths, empty shards
// included.

#include "loader/shard_part.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "loader/build_manifest.h"
#include "storage/partition.h"
#include "storage/row/row_schema.h"
#include "tests/harness/status_matchers.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ShardPartTest, NamesParseBackAndNothingElseDoes) {
  EXPECT_EQ(ShardPartName(2, 4), "shard-0002-of-0004.json");
  auto n = ParseShardName("shard-0002-of-0004.json", ".json");
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->shard, 2u);
  EXPECT_EQ(n->shards, 4u);
  n = ParseShardName("shard-1023-of-1024.sst", ".sst");
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->shard, 1023u);
  for (const char* bad :
       {"shard-0002-of-0004.sst", "shard-2-of-4.json",
        "shard-00002-of-0004.json", "shard-0002-of-00004.json",
        "shard-0002-0004.json", "MANIFEST", "shard--of-0004.json",
        "shard-0x02-of-0004.json", "xshard-0002-of-0004.json"}) {
    EXPECT_FALSE(ParseShardName(bad, ".json").has_value()) << bad;
  }
}

// Shard `s` of `shards` as a shard build describes it: `figures` of its one
// file, the job's options.
Manifest PartOf(const BuildJob& job, uint32_t s, const FileFigures& figures) {
  ManifestFile file;
  file.name = ShardFileName(s, job.shards);
  file.size = 4096 + s;
  file.xxh3 = 0x1234 + s;
  file.shard = s;
  file.keys = figures.keys;
  file.key_bytes = figures.key_bytes;
  file.value_bytes = figures.value_bytes;
  Manifest m = MakeManifest(job, {file}, figures,
                            {{StrCat("part-", s, ".tsv"), 10 + s}});
  m.version = 7;
  return m;
}

FileFigures Figures(std::vector<std::pair<int, int>> lengths) {
  FileFigures f;
  for (auto [k, v] : lengths) f.Add(std::string(k, 'k'), std::string(v, 'v'));
  return f;
}

TEST(ShardPartTest, TheMergeIsTheOneHostManifest) {
  BuildJob job;
  job.table = "users";
  job.shards = 3;
  // Fixed widths with an empty shard; then one shard of other widths.
  for (const auto& shards :
       {std::vector<FileFigures>{Figures({{5, 3}, {5, 3}}), Figures({}),
                                 Figures({{5, 3}})},
        std::vector<FileFigures>{Figures({{5, 3}}), Figures({{6, 3}}),
                                 Figures({{5, 9}, {5, 1}})}}) {
    std::vector<Manifest> parts;
    FileFigures all;
    std::vector<ManifestFile> files;
    for (uint32_t s = 0; s < 3; ++s) {
      Manifest part = PartOf(job, s, shards[s]);
      // Written and read back as publish reads it.
      const std::string json = MakeShardPart(part);
      EXPECT_THAT(json, Not(HasSubstr("build_time")));
      auto parsed = ParseShardPart(json, ShardPartName(s, 3), "users", 7);
      ASSERT_OK(parsed);
      parts.push_back(*parsed);
      all.Merge(shards[s]);
      files.push_back(part.files[0]);
    }
    auto merged = MergeShardParts(parts);
    ASSERT_OK(merged);
    Manifest one_host = MakeManifest(job, files, all, {});
    one_host.version = 7;
    merged->inputs.clear();
    one_host.build_time.reset();
    EXPECT_EQ(merged->ToJson(), one_host.ToJson());
  }
}

TEST(ShardPartTest, PartsThatDisagreeOrLieAreRefused) {
  BuildJob job;
  job.table = "users";
  job.shards = 2;
  const Manifest zero = PartOf(job, 0, Figures({{5, 3}}));
  BuildJob block = job;
  block.format = TableFormat::kBlock;
  auto merged = MergeShardParts({zero, PartOf(block, 1, Figures({{5, 3}}))});
  EXPECT_THAT(merged.status().message(),
              HasSubstr("shard 1 of users v000007 was built with another "
                        "table format than shard 0 (block against cuckoo)"));
  BuildJob other = job;
  other.cuckoo.utilization = 0.5;
  merged = MergeShardParts({zero, PartOf(other, 1, Figures({{5, 3}}))});
  EXPECT_THAT(merged.status().message(),
              HasSubstr("another set of build options"));

  // Parts of rows: the schema goes into the merge, and must agree.
  BuildJob rows = job;
  rows.reader.rows = true;
  auto schema = [](FieldType type) {
    auto s = RowSchema::Make({{"n", type, true}});
    EXPECT_OK(s);
    return *s;
  };
  Manifest rows0 = PartOf(rows, 0, Figures({{5, 3}}));
  Manifest rows1 = PartOf(rows, 1, Figures({{5, 3}}));
  rows0.schema = rows1.schema = schema(FieldType::kInt64);
  merged = MergeShardParts({rows0, rows1});
  ASSERT_OK(merged);
  EXPECT_TRUE(merged->schema == schema(FieldType::kInt64));
  rows1.schema = schema(FieldType::kString);
  merged = MergeShardParts({rows0, rows1});
  EXPECT_THAT(merged.status().message(),
              HasSubstr("shard 1 of users v000007 was built with another "
                        "schema of rows than shard 0 ("));
  EXPECT_THAT(merged.status().message(), HasSubstr("\"type\":\"string\""));

  const std::string json = MakeShardPart(zero);
  EXPECT_THAT(ParseShardPart(json, "shard-0001-of-0002.json", "users", 7)
                  .status()
                  .message(),
              HasSubstr("it does not describe shard-0001-of-0002.sst alone"));
  EXPECT_THAT(ParseShardPart(json, "shard-0000-of-0002.json", "users", 8)
                  .status()
                  .message(),
              HasSubstr("it is of users version 7, not of users version 8"));
  EXPECT_THAT(ParseShardPart("{", "shard-0000-of-0002.json", "users", 7)
                  .status()
                  .message(),
              HasSubstr("shard part shard-0000-of-0002.json: "));
  EXPECT_OK(ParseShardPart(json, "shard-0000-of-0002.json", "users", 7));
}

}  // namespace
}  // namespace roost::testing
