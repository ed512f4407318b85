// Corrupt and truncated cuckoo tables: every damaged file is refused with a
// clear error, and with checksum verification off no lookup crashes or reads
// outside the file (AddressSanitizer builds check the latter).

#include <gtest/gtest.h>

#include <random>

#include "storage/coding.h"
#include "storage/cuckoo_table.h"
#include "storage/cuckoo_table_builder.h"
#include "storage/hash.h"
#include "tests/status_matchers.h"
#include "tests/test_util.h"

namespace roost::testing {
namespace {

struct Case {
  std::string name;
  Pairs pairs;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<Case> Cases() {
  return {{"Inline", RandomFixedPairs(1, 300, 8, 8)},
          {"Heap", RandomVariablePairs(2, 200, 0, 20, 0, 30)},
          {"Empty", {}}};
}

class CuckooCorruptionTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    path_ = dir_.File("t.sst");
    CuckooTableBuilder builder;
    for (const auto& [k, v] : GetParam().pairs) ASSERT_OK(builder.Add(k, v));
    ASSERT_OK(builder.Finish(path_));
    good_ = ReadFile(path_);
    ASSERT_OK(CuckooTable::Open(path_));
  }

  // Opens `bytes` as a table with verification on (must fail with a clear
  // error) and off (may open; then lookups must stay in bounds).
  void ExpectRefusedAndHarmless(const std::string& bytes,
                                const std::string& what) {
    WriteFile(path_, bytes);
    auto table = CuckooTable::Open(path_);
    ASSERT_FALSE(table.ok()) << what << " was not detected";
    const auto code = table.status().code();
    ASSERT_TRUE(code == absl::StatusCode::kDataLoss ||
                code == absl::StatusCode::kFailedPrecondition)
        << what << ": " << table.status();
    ASSERT_NE(table.status().message().find(path_), std::string::npos);

    CuckooReadOptions unverified;
    unverified.verify_checksums = false;
    auto loose = CuckooTable::Open(path_, unverified);
    if (!loose.ok()) return;
    std::vector<std::string_view> keys;
    for (const auto& [k, v] : GetParam().pairs) {
      std::string_view got;
      (*loose)->Get(k, &got);
      keys.push_back(k);
    }
    keys.push_back("definitely not a key");
    std::vector<LookupResult> results(keys.size());
    (*loose)->MultiGet(keys, results);
  }

  ScratchDir dir_;
  std::string path_;
  std::string good_;
};

TEST_P(CuckooCorruptionTest, EveryFlippedByteIsRefused) {
  std::mt19937_64 rng(99);
  // Every byte once, then random bytes with random bit patterns: thousands of
  // opens in all.
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

TEST_P(CuckooCorruptionTest, EveryTruncationIsRefused) {
  for (size_t len = 0; len < good_.size(); ++len) {
    ExpectRefusedAndHarmless(good_.substr(0, len),
                             "truncation to " + std::to_string(len));
    if (HasFatalFailure()) return;
  }
}

TEST_P(CuckooCorruptionTest, AppendedBytesAreRefused) {
  ExpectRefusedAndHarmless(good_ + std::string(64, '\0'), "appended zeros");
}

TEST_P(CuckooCorruptionTest, ErrorsSayWhatIsWrong) {
  std::string bad = good_;
  bad[0] = 'X';
  WriteFile(path_, bad);
  EXPECT_EQ(CuckooTable::Open(path_).status().message(),
            "corrupt table " + path_ +
                ": bad magic number (not a roost cuckoo table)");
  WriteFile(path_, good_.substr(0, 100));
  EXPECT_EQ(
      CuckooTable::Open(path_).status().message(),
      "corrupt table " + path_ + ": truncated header (100 bytes, need 320)");
  bad = good_;
  bad[8] = 2;  // major version
  WriteFile(path_, bad);
  EXPECT_EQ(CuckooTable::Open(path_).status().code(),
            absl::StatusCode::kFailedPrecondition);
  if (good_.size() > kCuckooHeaderSize) {
    bad = good_;
    bad[kCuckooHeaderSize] ^= 1;
    WriteFile(path_, bad);
    EXPECT_EQ(CuckooTable::Open(path_).status().message(),
              "corrupt table " + path_ + ": bucket checksum mismatch");
  }
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

TEST_P(CuckooCorruptionTest, WidthsInTheHeapLayoutAreRefused) {
  if (GetParam().name != "Heap") return;
  for (const size_t offset : {40, 44}) {  // key_width, value_width
    WriteFile(path_, Resealed(good_, offset, 8));
    EXPECT_EQ(CuckooTable::Open(path_).status().message(),
              "corrupt table " + path_ +
                  ": key or value width set in the heap layout")
        << "offset " << offset;
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, CuckooCorruptionTest,
                         ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace roost::testing
