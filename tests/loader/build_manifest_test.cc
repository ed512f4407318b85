// MakeManifest (loader/build_manifest.h): what a build's MANIFEST says of
// its files, keys and options, for a table of builds: each format,
// unsharded and sharded, fixed and varying lengths, no keys at all.

#include "loader/build_manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "storage/block/block_table_builder.h"
#include "storage/partition.h"
#include "storage/version/data_dir.h"
#include "tests/harness/status_matchers.h"

namespace roost::testing {
namespace {

using ::testing::Eq;
using ::testing::Optional;

// `keys` keys of `key` bytes and values of `value` bytes, or of lengths
// from 1 to `key` and 1 to `value` when not `fixed`.
FileFigures Figures(uint64_t keys, uint64_t key, uint64_t value, bool fixed) {
  FileFigures f;
  for (uint64_t i = 0; i < keys; ++i) {
    const uint64_t k = fixed ? key : 1 + i % key;
    const uint64_t v = fixed ? value : 1 + i % value;
    f.Add(std::string(k, 'k'), std::string(v, 'v'));
  }
  return f;
}

struct Case {
  std::string name;
  BuildJob job;
  FileFigures figures;
  // What the MANIFEST says.
  std::string format_version;
  std::optional<uint32_t> key_width, value_width;
  uint32_t shards;
  // Members of build_options: one only the format has, and "shards".
  std::string format_option;
  bool shards_option;
};

// Names the case in gtest's messages.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

BuildJob Job(TableFormat format, uint32_t shards) {
  BuildJob job;
  job.table = "users";
  job.format = format;
  job.shards = shards;
  job.block.compression = Compression::kSnappy;
  return job;
}

std::vector<Case> Cases() {
  const std::string block_version =
      BlockFormatVersion(Job(TableFormat::kBlock, 1).block);
  return {
      {"CuckooFixed", Job(TableFormat::kCuckoo, 1), Figures(5, 8, 4, true),
       "1.0", 8, 4, 0, "utilization", false},
      {"CuckooVarying", Job(TableFormat::kCuckoo, 1), Figures(5, 8, 4, false),
       "1.0", std::nullopt, std::nullopt, 0, "hash_functions", false},
      {"BlockSharded", Job(TableFormat::kBlock, 3), Figures(9, 8, 4, false),
       block_version, std::nullopt, std::nullopt, 3, "compression", true},
      {"BlockShardedFixed", Job(TableFormat::kBlock, 3), Figures(9, 2, 2, true),
       block_version, 2, 2, 3, "restart_interval", true},
      {"NoKeys", Job(TableFormat::kCuckoo, 1), FileFigures(), "1.0",
       std::nullopt, std::nullopt, 0, "seed", false},
  };
}

class MakeManifestTest : public ::testing::TestWithParam<Case> {};

TEST_P(MakeManifestTest, DescribesTheBuild) {
  const Case& c = GetParam();
  // What the build names its files (table_files.h).
  std::vector<ManifestFile> files(c.shards == 0 ? 1 : c.shards);
  for (uint32_t i = 0; i < files.size(); ++i) {
    files[i].size = 100 + i;
    files[i].xxh3 = 0x0123456789abcdef + i;
    if (c.shards == 0) {
      files[i].name = std::string(kTableFileName);
    } else {
      files[i].name = ShardFileName(i, c.shards);
      files[i].shard = i;
      files[i].keys = i;
      files[i].key_bytes = 2 * i;
      files[i].value_bytes = 3 * i;
    }
  }
  const int64_t before =
      std::chrono::duration_cast<std::chrono::seconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count();
  const Manifest m = MakeManifest(c.job, files, c.figures, {{"in.tsv", 1234}});
  EXPECT_EQ(m.table, "users");
  EXPECT_EQ(m.version, 0u);  // the destination's to set
  EXPECT_EQ(m.format, TableFormatName(c.job.format));
  EXPECT_EQ(m.format_version, c.format_version);
  EXPECT_EQ(m.keys, c.figures.keys);
  EXPECT_EQ(m.key_bytes, c.figures.key_bytes);
  EXPECT_EQ(m.value_bytes, c.figures.value_bytes);
  EXPECT_EQ(m.key_width, c.key_width);
  EXPECT_EQ(m.value_width, c.value_width);
  EXPECT_THAT(m.max_key_length, Optional(Eq(c.figures.max_key)));
  EXPECT_THAT(m.max_value_length, Optional(Eq(c.figures.max_value)));
  EXPECT_EQ(m.shards, c.shards);
  if (c.shards > 1) {
    ASSERT_TRUE(m.partition);
    EXPECT_EQ(m.partition->function, kPartitionFunction);
    EXPECT_EQ(m.partition->seed, kPartitionSeed);
  } else {
    EXPECT_FALSE(m.partition);
  }
  // The files as the build gave them, in shard order.
  ASSERT_EQ(m.files.size(), files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ(m.files[i].name, files[i].name);
    EXPECT_EQ(m.files[i].size, files[i].size);
    EXPECT_EQ(m.files[i].xxh3, files[i].xxh3);
    EXPECT_EQ(m.files[i].shard, files[i].shard);
    EXPECT_EQ(m.files[i].value_bytes, files[i].value_bytes);
  }
  ASSERT_EQ(m.inputs.size(), 1u);
  EXPECT_EQ(m.inputs[0].path, "in.tsv");
  EXPECT_EQ(m.inputs[0].size, 1234u);
  EXPECT_EQ(m.build_options.value("format", ""), m.format);
  EXPECT_TRUE(m.build_options.contains(c.format_option))
      << m.build_options.dump();
  EXPECT_EQ(m.build_options.contains("shards"), c.shards_option);
  EXPECT_EQ(m.loader, "roost-load " ROOST_VERSION);
  ASSERT_TRUE(m.build_time);
  EXPECT_GE(*m.build_time, before);
  EXPECT_FALSE(m.data_time);
  // And it is a MANIFEST a reader takes.
  EXPECT_OK(Manifest::Parse(m.ToJson()));
}

INSTANTIATE_TEST_SUITE_P(Builds, MakeManifestTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

TEST(MakeManifestDataTimeTest, ComesFromTheJob) {
  BuildJob job = Job(TableFormat::kCuckoo, 1);
  job.data_timestamp = 1714564800;
  const Manifest m = MakeManifest(job, {}, Figures(1, 1, 1, true), {});
  EXPECT_THAT(m.data_time, Optional(Eq(1714564800)));
}

}  // namespace
}  // namespace roost::testing
