// The block table's filter (format 2.0): it never hides a stored key, in
// any combination of options; its false positive rate is what the theory
// says; a file with it opens and reads like one without, and one without
// it is still written byte for byte as format 1.0; and the search tree the
// reader builds over the index finds what std::lower_bound finds.

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "storage/block/block_table.h"
#include "storage/block/block_table_builder.h"
#include "storage/block/filter_block.h"
#include "storage/block/filter_block_builder.h"
#include "storage/block/search_tree.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"
#include "util/escape.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

absl::StatusOr<BlockBuildReport> Build(const Pairs& sorted,
                                       const std::string& path,
                                       const BlockBuildOptions& options) {
  auto builder = BlockTableBuilder::Create(path, options);
  if (!builder.ok()) return builder.status();
  for (const auto& [k, v] : sorted) {
    if (absl::Status s = (*builder)->Add(k, v); !s.ok()) return s;
  }
  return (*builder)->Finish();
}

Pairs SortedPairs(uint64_t seed, size_t n) {
  Pairs pairs = RandomVariablePairs(seed, n, 4, 24, 0, 12);
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end(),
                          [](const auto& a, const auto& b) {
                            return a.first == b.first;
                          }),
              pairs.end());
  return pairs;
}

// Every key is found, by Get and by MultiGet, with the filter on, for every
// combination of the options that shape the file (filter bits, how many keys
// the builder was told to expect, hash index, compression, block size) and
// of the index searches.
TEST(BlockFilterTest, NoStoredKeyIsEverFilteredOut) {
  ScratchDir dir;
  const Pairs pairs = SortedPairs(7, 60000);
  const std::string path = dir.File("t.sst");
  int built = 0;
  for (uint32_t bits : {1u, 7u, 10u, 32u}) {
    for (double expected : {0.0, 1.0, 0.05, 4.0}) {
      for (bool hash_index : {true, false}) {
        for (Compression c : {Compression::kNone, Compression::kSnappy}) {
          for (uint32_t block_size : {64u, 4096u}) {
            if (block_size == 64 && (c != Compression::kNone || !hash_index)) {
              continue;  // tiny blocks once per filter setting is enough
            }
            SCOPED_TRACE(StrCat("bits ", bits, " expected ", expected,
                                " hash_index ", hash_index, " compression ",
                                CompressionName(c), " block ", block_size));
            BlockBuildOptions o;
            o.filter_bits_per_key = bits;
            o.expected_keys = static_cast<uint64_t>(
                expected * static_cast<double>(pairs.size()));
            o.hash_index = hash_index;
            o.compression = c;
            o.block_size = block_size;
            auto report = Build(pairs, path, o);
            ASSERT_OK(report) << report.status();
            ++built;
            EXPECT_GT(report->filter_bytes, 0u);
            for (IndexSearch search :
                 {IndexSearch::kBinary, IndexSearch::kInterpolation}) {
              TableReadOptions ro;
              ro.index_search = search;
              auto table = BlockTable::Open(path, ro);
              ASSERT_OK(table) << table.status();
              ASSERT_NE((*table)->filter(), nullptr);
              EXPECT_EQ((*table)->properties().format_version, "2.0");
              BlockTable::Value value;
              for (const auto& [k, v] : pairs) {
                auto found = (*table)->Get(k, &value);
                ASSERT_OK(found) << found.status();
                ASSERT_TRUE(*found) << PrintableKey(k);
                ASSERT_EQ(value.view(), v);
              }
              std::vector<std::string_view> keys;
              for (const auto& [k, v] : pairs) keys.push_back(k);
              std::vector<LookupResult> results(keys.size());
              ValuePins pins;
              ASSERT_OK((*table)->MultiGet(keys, results, &pins));
              for (size_t i = 0; i < keys.size(); ++i) {
                ASSERT_TRUE(results[i].found) << i;
                ASSERT_EQ(results[i].value, pairs[i].second) << i;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(built, 4 * 4 * 5);
}

// The share of absent keys the filter lets through is the theory's
// (FilterFalsePositiveRate), within generous statistical bounds: a million
// probes give a standard deviation near 1% of the rate at 10 bits a key.
TEST(BlockFilterTest, FalsePositiveRateIsTheTheorysRate) {
  ScratchDir dir;
  const std::string path = dir.File("t.sst");
  Pairs pairs = RandomFixedPairs(11, 200000, 8, 1);
  std::sort(pairs.begin(), pairs.end());
  for (uint32_t bits : {4u, 10u, 16u}) {
    SCOPED_TRACE(StrCat("bits ", bits));
    BlockBuildOptions o;
    o.filter_bits_per_key = bits;
    o.expected_keys = pairs.size();
    ASSERT_OK(Build(pairs, path, o));
    auto table = BlockTable::Open(path);
    ASSERT_OK(table) << table.status();
    const FilterBlock* filter = (*table)->filter();
    ASSERT_NE(filter, nullptr);
    EXPECT_EQ(filter->num_lines(), FilterLines(pairs.size(), bits));
    EXPECT_EQ(filter->num_probes(), FilterProbes(bits));
    EXPECT_EQ(filter->bits_per_key(), bits);
    const double theory = FilterFalsePositiveRate(
        pairs.size(), filter->num_lines(), filter->num_probes());
    std::mt19937_64 rng(12345);
    constexpr int kProbes = 1000000;
    int positives = 0;
    for (int i = 0; i < kProbes; ++i) {
      // 9-byte keys: never one of the table's 8-byte keys.
      positives += filter->MayContain(FilterHash(RandomBytes(rng, 9)));
    }
    const double measured = static_cast<double>(positives) / kProbes;
    EXPECT_GT(measured, theory * 0.8) << "theory " << theory;
    EXPECT_LT(measured, theory * 1.25) << "theory " << theory;
  }
  // The figures the format doc quotes.
  EXPECT_EQ(FilterProbes(10), 6);
  EXPECT_NEAR(FilterFalsePositiveRate(1000000, FilterLines(1000000, 10), 6),
              0.0096, 0.0002);
}

// What the options say about the version, and the memory the builder keeps:
// told the key count, it fills the filter as keys come and keeps no hash.
TEST(BlockFilterTest, VersionsAndOptions) {
  ScratchDir dir;
  const Pairs pairs = SortedPairs(3, 1000);
  BlockBuildOptions none;
  EXPECT_EQ(BlockFormatVersion(none), "1.0");
  BlockBuildOptions with = none;
  with.filter_bits_per_key = 10;
  EXPECT_EQ(BlockFormatVersion(with), "2.0");
  with.filter_bits_per_key = 33;
  EXPECT_THAT(ValidateBlockBuildOptions(with),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::HasSubstr("filter bits per key")));

  // Without a filter: format 1.0, no filter; with one the same pairs read
  // the same and misses stay misses.
  auto report = Build(pairs, dir.File("a.sst"), none);
  ASSERT_OK(report);
  EXPECT_EQ(report->filter_bytes, 0u);
  with.filter_bits_per_key = 10;
  auto report2 = Build(pairs, dir.File("b.sst"), with);
  ASSERT_OK(report2);
  EXPECT_EQ(report2->filter_bytes, FilterLines(pairs.size(), 10) * 64);
  auto a = BlockTable::Open(dir.File("a.sst"));
  auto b = BlockTable::Open(dir.File("b.sst"));
  ASSERT_OK(a);
  ASSERT_OK(b);
  EXPECT_EQ((*a)->filter(), nullptr);
  EXPECT_EQ((*a)->properties().format_version, "1.0");
  EXPECT_EQ((*b)->properties().format_version, "2.0");
  EXPECT_THAT((*b)->Describe(), ::testing::HasSubstr("6 probes"));
  EXPECT_THAT((*a)->Describe(), ::testing::HasSubstr("none"));
  // The file grows by the padding, the filter, its params and trailer.
  EXPECT_EQ(
      report2->file_size,
      FilterOffset(report->file_size - 128 - 9 - (*a)->footer().index.size) +
          report2->filter_bytes + 8 + 9 + (*a)->footer().index.size + 9 + 128);
  EXPECT_EQ((*b)->footer().filter.offset % 64, 0u);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 2000; ++i) {
    const std::string k = RandomBytes(rng, 1 + i % 30);
    const bool stored = std::binary_search(
        pairs.begin(), pairs.end(), std::make_pair(k, std::string()),
        [](const auto& x, const auto& y) { return x.first < y.first; });
    std::string va, vb;
    auto fa = (*a)->Get(k, &va);
    auto fb = (*b)->Get(k, &vb);
    ASSERT_OK(fa);
    ASSERT_OK(fb);
    EXPECT_EQ(*fa, stored);
    EXPECT_EQ(*fb, stored);
  }
  // use_filter = false reads the same.
  TableReadOptions off;
  off.use_filter = false;
  auto c = BlockTable::Open(dir.File("b.sst"), off);
  ASSERT_OK(c);
  for (const auto& [k, v] : pairs) {
    std::string value;
    auto found = (*c)->Get(k, &value);
    ASSERT_TRUE(found.ok() && *found);
  }
}

TEST(BlockFilterTest, EmptyTableWithAFilter) {
  ScratchDir dir;
  BlockBuildOptions o;
  o.filter_bits_per_key = 10;
  auto report = Build({}, dir.File("t.sst"), o);
  ASSERT_OK(report);
  EXPECT_EQ(report->filter_bytes, 64u);
  auto t = BlockTable::Open(dir.File("t.sst"));
  ASSERT_OK(t) << t.status();
  std::string value;
  auto found = (*t)->Get("", &value);
  ASSERT_OK(found);
  EXPECT_FALSE(*found);
}

TEST(SearchTreeTest, LowerBoundAgreesWithTheStandardOne) {
  std::mt19937_64 rng(9);
  for (size_t n : {0, 1, 2, 7, 8, 9, 63, 64, 65, 511, 512, 513, 4097, 70000}) {
    std::vector<uint64_t> v(n);
    // Small values, so that runs of equal numbers come up.
    for (auto& x : v)
      x = rng() % (n / 2 + 3) + (rng() % 2 ? 0 : UINT64_MAX - 50);
    std::sort(v.begin(), v.end());
    const SearchTree tree(v);
    ASSERT_EQ(tree.size(), n);
    for (int i = 0; i < 3000; ++i) {
      uint64_t target = i < 2 ? (i ? UINT64_MAX : 0)
                              : (n ? v[rng() % n] + (rng() % 3) - 1 : rng());
      if (i % 5 == 0) target = rng();
      const size_t want =
          std::lower_bound(v.begin(), v.end(), target) - v.begin();
      ASSERT_EQ(tree.LowerBound(target), want)
          << "n " << n << " target " << target;
    }
  }
}

}  // namespace
}  // namespace roost::testing
