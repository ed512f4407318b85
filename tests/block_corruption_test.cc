// Corrupt and truncated block tables: every damaged file is refused at open
// with a clear error, and with checksum verification off no lookup or scan
// crashes or reads outside the file (AddressSanitizer builds check that),
// and damage in a compressed block is still caught when it is read.

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "storage/block_table.h"
#include "storage/block_table_builder.h"
#include "tests/status_matchers.h"
#include "tests/test_util.h"

namespace roost::testing {
namespace {

struct Case {
  std::string name;
  Pairs pairs;
  BlockBuildOptions options;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<Case> Cases() {
  Pairs text;
  for (int i = 0; i < 150; ++i) {
    text.emplace_back("key" + std::to_string(1000 + i),
                      std::string(20 + i % 7, 'a' + i % 3));
  }
  BlockBuildOptions small;
  small.block_size = 256;
  small.restart_interval = 4;
  BlockBuildOptions snappy = small;
  snappy.compression = Compression::kSnappy;
  BlockBuildOptions zstd = small;
  zstd.compression = Compression::kZstd;
  zstd.hash_index = false;
  return {{"Uncompressed", text, small},
          {"Snappy", text, snappy},
          {"Zstd", text, zstd},
          {"Empty", {}, small}};
}

class BlockCorruptionTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    path_ = dir_.File("t.sst");
    auto builder = BlockTableBuilder::Create(path_, GetParam().options);
    ASSERT_OK(builder);
    for (const auto& [k, v] : GetParam().pairs) {
      ASSERT_OK((*builder)->Add(k, v));
    }
    ASSERT_OK((*builder)->Finish());
    good_ = ReadFile(path_);
    ASSERT_OK(BlockTable::Open(path_));
  }

  void ExpectRefusedAndHarmless(const std::string& bytes,
                                const std::string& what) {
    WriteFile(path_, bytes);
    auto table = BlockTable::Open(path_);
    ASSERT_FALSE(table.ok()) << what << " was not detected";
    const auto code = table.status().code();
    ASSERT_TRUE(code == absl::StatusCode::kDataLoss ||
                code == absl::StatusCode::kFailedPrecondition)
        << what << ": " << table.status();
    ASSERT_NE(table.status().message().find(path_), std::string::npos);

    BlockReadOptions unverified;
    unverified.verify_checksums = false;
    auto loose = BlockTable::Open(path_, unverified);
    if (!loose.ok()) return;
    const bool compressed =
        GetParam().options.compression != Compression::kNone;
    for (const auto& [k, v] : GetParam().pairs) {
      BlockTable::Value value;
      auto found = (*loose)->Get(k, &value);
      // A compressed block is verified whenever it is decompressed, so it
      // never yields a wrong value even without verification at open.
      if (compressed && found.ok() && *found) {
        ASSERT_EQ(value.view(), v) << what;
      }
    }
    auto it = (*loose)->NewIterator();
    int steps = 0;
    for (it->SeekToFirst(); it->Valid() && steps < 10000; it->Next()) ++steps;
    it->Seek("key1050");
  }

  ScratchDir dir_;
  std::string path_;
  std::string good_;
};

TEST_P(BlockCorruptionTest, EveryFlippedByteIsRefused) {
  std::mt19937_64 rng(17);
  for (size_t i = 0; i < good_.size() + 2000; ++i) {
    const size_t at = i < good_.size() ? i : rng() % good_.size();
    uint8_t mask = static_cast<uint8_t>(rng());
    if (mask == 0) mask = 1;
    std::string bad = good_;
    bad[at] = static_cast<char>(bad[at] ^ mask);
    ExpectRefusedAndHarmless(bad, "flip at byte " + std::to_string(at));
    if (HasFatalFailure()) return;
  }
}

TEST_P(BlockCorruptionTest, EveryTruncationIsRefused) {
  for (size_t len = 0; len < good_.size(); ++len) {
    ExpectRefusedAndHarmless(good_.substr(0, len),
                             "truncation to " + std::to_string(len));
    if (HasFatalFailure()) return;
  }
  ExpectRefusedAndHarmless(good_ + "x", "an appended byte");
}

TEST_P(BlockCorruptionTest, ErrorsSayWhatIsWrong) {
  std::string bad = good_;
  bad[bad.size() - 128] = 'X';
  WriteFile(path_, bad);
  EXPECT_EQ(BlockTable::Open(path_).status().message(),
            "corrupt table " + path_ +
                ": bad magic number (not a roost block table)");
  if (GetParam().pairs.empty()) return;
  bad = good_;
  bad[3] ^= 1;  // inside the first data block
  WriteFile(path_, bad);
  EXPECT_EQ(BlockTable::Open(path_).status().message(),
            "corrupt table " + path_ + ": data block 0 checksum mismatch");
}

INSTANTIATE_TEST_SUITE_P(Kinds, BlockCorruptionTest,
                         ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace roost::testing
