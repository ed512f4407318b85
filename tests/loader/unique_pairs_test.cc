// UniquePairReader: the sorter's pairs with equal keys resolved by each
// policy, the same read ahead on a thread or not, across batch boundaries
// and for pairs larger than a batch; a duplicate under kError comes after
// every pair before it.

#include "loader/unique_pairs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// The pairs a policy keeps, in key order, and how many it drops.
KeyValues Expected(const Pairs& pairs, DuplicatePolicy policy,
                   uint64_t* dropped) {
  std::map<std::string, std::string> kept;
  *dropped = 0;
  for (const auto& [k, v] : pairs) {
    auto [it, inserted] = kept.emplace(k, v);
    if (inserted) continue;
    ++*dropped;
    if (policy == DuplicatePolicy::kKeepLast) it->second = v;
  }
  return KeyValues(kept.begin(), kept.end());
}

struct Read {
  KeyValues pairs;
  absl::Status status;
  uint64_t duplicates = 0;
};

// Sorts `pairs` and reads them all through a UniquePairReader.
Read ReadAll(const Pairs& pairs, DuplicatePolicy policy, bool read_ahead) {
  ExternalSorter sorter({});
  for (const auto& [k, v] : pairs) EXPECT_OK(sorter.Add(k, v));
  EXPECT_OK(sorter.Finish());
  UniquePairReader reader(
      &sorter, policy,
      [](std::string_view key, uint64_t first, uint64_t second) {
        return absl::InvalidArgumentError(
            StrCat("duplicate ", key, " at ", first, " and ", second));
      },
      read_ahead);
  Read read;
  while (true) {
    absl::StatusOr<const PairBatch*> batch = reader.Next();
    if (!batch.ok()) {
      read.status = batch.status();
      // Again on the next call.
      EXPECT_EQ(reader.Next().status(), read.status);
      return read;
    }
    if ((*batch)->empty()) break;
    for (size_t i = 0; i < (*batch)->size(); ++i) {
      read.pairs.emplace_back((*batch)->key(i), (*batch)->value(i));
    }
  }
  read.duplicates = reader.duplicates();
  return read;
}

// 100,000 pairs (several batches of 16,384), a third of the keys repeated
// up to 4 times, repeats falling on batch boundaries among them.
Pairs WithDuplicates() {
  std::mt19937_64 rng(7);
  Pairs pairs = RandomFixedPairs(8, 100000, 6, 5);
  const size_t n = pairs.size();
  for (size_t i = 0; i < n; i += 3) {
    const int copies = 1 + static_cast<int>(rng() % 4);
    for (int c = 0; c < copies; ++c) {
      pairs.emplace_back(pairs[i].first, StrCat("copy", c, "-", i));
    }
  }
  std::shuffle(pairs.begin(), pairs.end(), rng);
  return pairs;
}

TEST(UniquePairReaderTest, EachPolicyKeepsItsPairAheadOrNot) {
  const Pairs pairs = WithDuplicates();
  for (DuplicatePolicy policy :
       {DuplicatePolicy::kKeepFirst, DuplicatePolicy::kKeepLast}) {
    uint64_t dropped;
    const KeyValues expected = Expected(pairs, policy, &dropped);
    ASSERT_GT(dropped, 30000u);
    for (bool ahead : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "policy " << static_cast<int>(policy)
                                        << ", ahead " << ahead);
      const Read read = ReadAll(pairs, policy, ahead);
      ASSERT_OK(read.status);
      EXPECT_EQ(read.pairs.size(), expected.size());
      EXPECT_TRUE(read.pairs == expected);
      EXPECT_EQ(read.duplicates, dropped);
    }
  }
}

// Pairs of 3 MiB (more than a batch's bytes) between small ones, and none.
TEST(UniquePairReaderTest, LargePairsAndNoPairs) {
  Pairs pairs;
  for (int i = 0; i < 20; ++i) {
    pairs.emplace_back(
        StrCat("key", i),
        std::string(i % 3 == 0 ? 3 << 20 : 7, static_cast<char>('a' + i)));
  }
  pairs.emplace_back("key5", "again");
  for (bool ahead : {false, true}) {
    uint64_t dropped;
    const Read read = ReadAll(pairs, DuplicatePolicy::kKeepLast, ahead);
    ASSERT_OK(read.status);
    EXPECT_TRUE(read.pairs ==
                Expected(pairs, DuplicatePolicy::kKeepLast, &dropped));
    EXPECT_EQ(read.duplicates, 1u);

    const Read none = ReadAll({}, DuplicatePolicy::kError, ahead);
    ASSERT_OK(none.status);
    EXPECT_TRUE(none.pairs.empty());
  }
}

// Under kError the first duplicate in key order stops the stream after
// every pair before it, named with the sequence numbers of both.
TEST(UniquePairReaderTest, ADuplicateUnderErrorComesAfterThePairsBeforeIt) {
  Pairs pairs = RandomFixedPairs(9, 60000, 8, 4);
  std::vector<std::string> keys;
  for (const auto& [k, v] : pairs) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  // Duplicate the 40,000th key in order (in the third batch), then a later
  // one.
  const std::string& first = keys[40000];
  size_t first_at = 0;
  while (pairs[first_at].first != first) ++first_at;
  pairs.emplace_back(first, "dup");
  pairs.emplace_back(keys[50000], "dup");
  for (bool ahead : {false, true}) {
    SCOPED_TRACE(ahead);
    const Read read = ReadAll(pairs, DuplicatePolicy::kError, ahead);
    EXPECT_EQ(read.status,
              absl::InvalidArgumentError(StrCat("duplicate ", first, " at ",
                                                first_at, " and ", 60000)));
    ASSERT_EQ(read.pairs.size(), 40000u);
    for (size_t i = 0; i < read.pairs.size(); ++i) {
      ASSERT_EQ(read.pairs[i].first, keys[i]);
    }
  }
}

}  // namespace
}  // namespace roost::testing
