// Corrupt and truncated tables of both formats, opened through Table: every
// damaged file is refused at open with a clear error naming it; with
// checksum verification off no lookup or scan crashes or reads outside the
// file (AddressSanitizer builds check that), and damage in a compressed
// block is still caught when the block is read, never a wrong value.

#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "storage/block/block_table.h"
#include "storage/block/block_table_builder.h"
#include "storage/block/filter_block.h"
#include "storage/coding.h"
#include "storage/cuckoo/cuckoo_table.h"
#include "storage/cuckoo/cuckoo_table_builder.h"
#include "storage/hash.h"
#include "storage/table.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"

namespace roost::testing {
namespace {

struct Case {
  std::string name;
  Pairs pairs;
  // Builds `pairs` at `path`.
  std::function<absl::Status(const Pairs&, const std::string&)> build;
  // Values read from damaged blocks are checked when found (compressed
  // blocks are verified whenever they are decompressed).
  bool values_verified_on_read = false;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

auto Cuckoo() {
  return [](const Pairs& pairs, const std::string& path) -> absl::Status {
    auto builder = CuckooTableBuilder::Create(path, {});
    if (!builder.ok()) return builder.status();
    for (const auto& [k, v] : pairs) {
      if (absl::Status s = (*builder)->Add(k, v); !s.ok()) return s;
    }
    return (*builder)->Finish().status();
  };
}

auto Block(BlockBuildOptions options) {
  return
      [options](const Pairs& pairs, const std::string& path) -> absl::Status {
        auto builder = BlockTableBuilder::Create(path, options);
        if (!builder.ok()) return builder.status();
        for (const auto& [k, v] : pairs) {
          if (absl::Status s = (*builder)->Add(k, v); !s.ok()) return s;
        }
        return (*builder)->Finish().status();
      };
}

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
  BlockBuildOptions filter = small;
  filter.filter_bits_per_key = 10;
  BlockBuildOptions filter_snappy = snappy;
  filter_snappy.filter_bits_per_key = 3;
  filter_snappy.expected_keys = 150;
  return {{"CuckooInline", RandomFixedPairs(1, 300, 8, 8), Cuckoo()},
          {"CuckooHeap", RandomVariablePairs(2, 200, 0, 20, 0, 30), Cuckoo()},
          {"CuckooEmpty", {}, Cuckoo()},
          {"BlockUncompressed", text, Block(small)},
          {"BlockSnappy", text, Block(snappy), true},
          {"BlockZstd", text, Block(zstd), true},
          {"BlockEmpty", {}, Block(small)},
          // Format 2.0: padding, a filter block and its trailer between the
          // data blocks and the index.
          {"BlockFilter", text, Block(filter)},
          {"BlockFilterSnappy", text, Block(filter_snappy), true},
          {"BlockFilterEmpty", {}, Block(filter)}};
}

class CorruptionTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    path_ = dir_.File("t.sst");
    ASSERT_OK(GetParam().build(GetParam().pairs, path_));
    good_ = ReadFile(path_);
    ASSERT_OK(Table::Open(path_));
  }

  // Opens `bytes` as a table with verification on (must fail with a clear
  // error) and off (may open; then lookups and scans must stay in bounds).
  void ExpectRefusedAndHarmless(const std::string& bytes,
                                const std::string& what) {
    WriteFile(path_, bytes);
    auto table = Table::Open(path_);
    ASSERT_FALSE(table.ok()) << what << " was not detected";
    const auto code = table.status().code();
    ASSERT_TRUE(code == absl::StatusCode::kDataLoss ||
                code == absl::StatusCode::kFailedPrecondition)
        << what << ": " << table.status();
    ASSERT_NE(table.status().message().find(path_), std::string::npos);

    auto loose = Table::Open(path_, {.verify_checksums = false});
    if (!loose.ok()) return;
    std::vector<std::string_view> keys;
    for (const auto& [k, v] : GetParam().pairs) keys.push_back(k);
    keys.push_back("definitely not a key");
    // One at a time (a cuckoo table's batch of one is its own path), then
    // all at once.
    for (size_t i = 0; i + 1 < keys.size(); ++i) {
      std::string value;
      auto found = (*loose)->Get(keys[i], &value);
      if (GetParam().values_verified_on_read && found.ok() && *found) {
        ASSERT_EQ(value, GetParam().pairs[i].second) << what;
      }
    }
    std::vector<LookupResult> results(keys.size());
    ValuePins pins;
    (*loose)->MultiGet(keys, results, &pins).IgnoreError();
    // A scan (Unimplemented at once for a cuckoo table) must not crash.
    auto it = (*loose)->NewIterator();
    int steps = 0;
    for (it->SeekToFirst(); it->Valid() && steps < 10000; it->Next()) {
      ++steps;
    }
    it->Seek("key1050");
  }

  ScratchDir dir_;
  std::string path_;
  std::string good_;
};

TEST_P(CorruptionTest, EveryFlippedByteIsRefused) {
  std::mt19937_64 rng(99);
  // Every byte once, then random bytes with random bit patterns: thousands
  // of opens in all.
  const size_t random_flips = 3000;
  for (size_t i = 0; i < good_.size() + random_flips; ++i) {
    const size_t at = i < good_.size() ? i : rng() % good_.size();
    uint8_t mask = static_cast<uint8_t>(rng());
    if (mask == 0) mask = 1;
    std::string bad = good_;
    bad[at] = static_cast<char>(bad[at] ^ mask);
    ExpectRefusedAndHarmless(bad, "flip at byte " + std::to_string(at));
    if (HasFatalFailure()) return;
  }
}

TEST_P(CorruptionTest, EveryTruncationIsRefused) {
  for (size_t len = 0; len < good_.size(); ++len) {
    ExpectRefusedAndHarmless(good_.substr(0, len),
                             "truncation to " + std::to_string(len));
    if (HasFatalFailure()) return;
  }
}

TEST_P(CorruptionTest, AppendedBytesAreRefused) {
  ExpectRefusedAndHarmless(good_ + "x", "an appended byte");
  ExpectRefusedAndHarmless(good_ + std::string(64, '\0'), "appended zeros");
}

INSTANTIATE_TEST_SUITE_P(Formats, CorruptionTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

// Each format's own words for what is wrong.

class CorruptionMessageTest : public ::testing::Test {
 protected:
  ScratchDir dir_;
  const std::string path_ = dir_.File("t.sst");
};

TEST_F(CorruptionMessageTest, CuckooErrorsSayWhatIsWrong) {
  ASSERT_OK(Cuckoo()(RandomFixedPairs(1, 300, 8, 8), path_));
  const std::string good = ReadFile(path_);
  std::string bad = good;
  bad[0] = 'X';
  WriteFile(path_, bad);
  EXPECT_EQ(CuckooTable::Open(path_).status().message(),
            "corrupt table " + path_ +
                ": bad magic number (not a roost cuckoo table)");
  EXPECT_EQ(Table::Open(path_).status().message(),
            "corrupt table " + path_ + ": not a roost table (no magic number)");
  WriteFile(path_, good.substr(0, 100));
  EXPECT_EQ(
      CuckooTable::Open(path_).status().message(),
      "corrupt table " + path_ + ": truncated header (100 bytes, need 320)");
  bad = good;
  bad[8] = 2;  // major version
  WriteFile(path_, bad);
  EXPECT_THAT(Table::Open(path_),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  bad = good;
  bad[kCuckooHeaderSize] ^= 1;
  WriteFile(path_, bad);
  EXPECT_EQ(CuckooTable::Open(path_).status().message(),
            "corrupt table " + path_ + ": bucket checksum mismatch");
}

// A header whose checksum was recomputed after the edit (as a careless tool
// or an attacker would), so that only the field checks can catch it.
std::string Resealed(std::string header_and_rest, size_t offset,
                     uint32_t value) {
  EncodeFixed32(header_and_rest.data() + offset, value);
  EncodeFixed64(header_and_rest.data() + 312,
                Checksum64(header_and_rest.data(), 312));
  return header_and_rest;
}

TEST_F(CorruptionMessageTest, WidthsInTheCuckooHeapLayoutAreRefused) {
  ASSERT_OK(Cuckoo()(RandomVariablePairs(2, 200, 0, 20, 0, 30), path_));
  const std::string good = ReadFile(path_);
  for (const size_t offset : {40, 44}) {  // key_width, value_width
    WriteFile(path_, Resealed(good, offset, 8));
    EXPECT_EQ(CuckooTable::Open(path_).status().message(),
              "corrupt table " + path_ +
                  ": key or value width set in the heap layout")
        << "offset " << offset;
  }
}

TEST_F(CorruptionMessageTest, BlockErrorsSayWhatIsWrong) {
  BlockBuildOptions small;
  small.block_size = 256;
  small.restart_interval = 4;
  Pairs text;
  for (int i = 0; i < 150; ++i) {
    text.emplace_back("key" + std::to_string(1000 + i), std::string(20, 'a'));
  }
  ASSERT_OK(Block(small)(text, path_));
  const std::string good = ReadFile(path_);
  std::string bad = good;
  bad[bad.size() - 128] = 'X';
  WriteFile(path_, bad);
  EXPECT_EQ(BlockTable::Open(path_).status().message(),
            "corrupt table " + path_ +
                ": bad magic number (not a roost block table)");
  bad = good;
  bad[3] ^= 1;  // inside the first data block
  WriteFile(path_, bad);
  EXPECT_EQ(Table::Open(path_).status().message(),
            "corrupt table " + path_ + ": data block 0 checksum mismatch");
}

// Format 2.0's own bytes: the padding, the filter block, its trailer, and
// the filter handle in the footer, each named when it is wrong.
TEST_F(CorruptionMessageTest, FilterErrorsSayWhatIsWrong) {
  BlockBuildOptions o;
  o.block_size = 256;
  o.filter_bits_per_key = 10;
  Pairs text;
  for (int i = 0; i < 150; ++i) {
    text.emplace_back("key" + std::to_string(1000 + i), std::string(20, 'a'));
  }
  ASSERT_OK(Block(o)(text, path_));
  const std::string good = ReadFile(path_);
  auto footer = BlockTableFooter::Decode(path_, good);
  ASSERT_OK(footer);
  ASSERT_EQ(footer->major_version, 2);
  const BlockHandle filter = footer->filter;
  ASSERT_LT(footer->data_end, filter.offset) << "no padding to test";
  auto message = [&](const std::string& bytes, TableReadOptions ro = {}) {
    WriteFile(path_, bytes);
    return std::string(Table::Open(path_, ro).status().message());
  };
  const std::string prefix = "corrupt table " + path_ + ": ";

  std::string bad = good;
  bad[footer->data_end] = 1;
  EXPECT_EQ(message(bad), prefix + "bad padding before the filter block");
  bad = good;
  bad[filter.offset + 5] ^= 0x10;
  EXPECT_EQ(message(bad), prefix + "filter block checksum mismatch");
  bad = good;
  bad[filter.offset + filter.size] = 1;  // the trailer's type
  EXPECT_EQ(message(bad), prefix + "compressed filter block");

  // Fields whose checksums were made right again, as a careless tool would.
  auto reseal_footer = [&](BlockTableFooter f) {
    std::string b = good;
    b.replace(b.size() - kBlockTableFooterSize, kBlockTableFooterSize,
              f.Encode());
    return b;
  };
  BlockTableFooter f = *footer;
  f.filter.size += 64;  // ends past where the index starts
  EXPECT_EQ(message(reseal_footer(f)), prefix + "bad index handle");
  f = *footer;
  f.filter.size = good.size();
  EXPECT_EQ(message(reseal_footer(f)), prefix + "bad filter handle");
  f = *footer;
  f.filter.offset += 64;
  EXPECT_EQ(message(reseal_footer(f)), prefix + "bad filter handle");
  f = *footer;
  f.major_version = 1;  // a 1.0 footer over a 2.0 file
  EXPECT_EQ(message(reseal_footer(f)), prefix + "bad index handle");
  f = *footer;
  f.major_version = 3;
  EXPECT_THAT(Table::Open(path_), StatusIs(absl::StatusCode::kDataLoss));
  WriteFile(path_, reseal_footer(f));
  EXPECT_THAT(BlockTable::Open(path_),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       ::testing::HasSubstr("understands 1 and 2")));

  auto reseal_params = [&](size_t at, char byte) {
    std::string b = good;
    b[filter.offset + filter.size - kFilterParamsSize + at] = byte;
    std::string trailer;
    AppendBlockTrailer(std::string_view(b).substr(filter.offset, filter.size),
                       Compression::kNone, &trailer);
    b.replace(filter.offset + filter.size, trailer.size(), trailer);
    return b;
  };
  EXPECT_EQ(message(reseal_params(0, 7)), prefix + "unknown filter kind 7");
  EXPECT_EQ(message(reseal_params(1, 0)),
            prefix + "bad filter probe count 0 (expected 1 to 30)");
  EXPECT_EQ(message(reseal_params(1, 31)),
            prefix + "bad filter probe count 31 (expected 1 to 30)");
}

}  // namespace
}  // namespace roost::testing
