// The partition function against its committed test vectors
// (docs/format/partition_vectors.tsv), the file every client checks too.
#include "storage/partition.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "storage/hash.h"
#include "util/encoding.h"

namespace roost {
namespace {

std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, '\t')) out.push_back(field);
  if (!line.empty() && line.back() == '\t') out.push_back("");
  return out;
}

TEST(PartitionTest, MatchesTheCommittedVectors) {
  const std::string path =
      std::string(ROOST_SOURCE_DIR) + "/docs/format/partition_vectors.tsv";
  std::ifstream file(path);
  ASSERT_TRUE(file) << "cannot open " << path;
  std::string line;
  std::vector<uint32_t> counts;
  int rows = 0;
  bool empty_key_seen = false;
  for (int line_no = 1; std::getline(file, line); ++line_no) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> f = SplitTabs(line);
    if (counts.empty()) {  // the header
      ASSERT_GE(f.size(), 3u) << path << ":" << line_no;
      ASSERT_EQ(f[0], "key_hex");
      ASSERT_EQ(f[1], "xxh3_64");
      for (size_t i = 2; i < f.size(); ++i) {
        counts.push_back(static_cast<uint32_t>(std::stoul(f[i])));
      }
      continue;
    }
    ASSERT_EQ(f.size(), counts.size() + 2) << path << ":" << line_no;
    auto decoded = DecodeHex(f[0], "key_hex");
    ASSERT_TRUE(decoded.ok())
        << path << ":" << line_no << ": " << decoded.status();
    const std::string key = *decoded;
    empty_key_seen |= key.empty();
    EXPECT_EQ(f[1], absl::StrFormat("%016x", Hash64(key, kPartitionSeed)))
        << path << ":" << line_no;
    for (size_t i = 0; i < counts.size(); ++i) {
      EXPECT_EQ(std::to_string(PartitionOf(key, counts[i])), f[i + 2])
          << path << ":" << line_no << ": N=" << counts[i];
    }
    ++rows;
  }
  EXPECT_GE(rows, 100);
  EXPECT_TRUE(empty_key_seen);
  EXPECT_EQ(counts, (std::vector<uint32_t>{1, 2, 3, 4, 7, 16, 64, 1000}));
}

TEST(PartitionTest, OneShardIsShardZero) {
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(PartitionOf(std::to_string(i), 1), 0u);
  }
}

TEST(PartitionTest, SpreadsKeysEvenly) {
  constexpr uint32_t kShards = 7;
  constexpr int kKeys = 70000;
  std::vector<int> per_shard(kShards);
  for (int i = 0; i < kKeys; ++i) {
    const uint32_t s = PartitionOf("key" + std::to_string(i), kShards);
    ASSERT_LT(s, kShards);
    per_shard[s]++;
  }
  for (uint32_t s = 0; s < kShards; ++s) {
    EXPECT_NEAR(per_shard[s], kKeys / kShards, kKeys / kShards / 20)
        << "shard " << s;
  }
}

TEST(PartitionTest, ShardFileNames) {
  EXPECT_EQ(ShardFileName(0, 4), "shard-0000-of-0004.sst");
  EXPECT_EQ(ShardFileName(999, 1000), "shard-0999-of-1000.sst");
  EXPECT_EQ(ShardFileName(1023, kMaxShards), "shard-1023-of-1024.sst");
}

}  // namespace
}  // namespace roost
