// ExternalSorter: every input comes out in (key, sequence) order, the same
// whatever the memory limit, in memory or through run files and
// intermediate merges; run files are cleaned up; damaged run files give
// DataLoss naming the file.

#include "loader/sorter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"

namespace roost::testing {
namespace {

constexpr uint64_t kUnlimited = ~uint64_t{0};

struct Item {
  std::string key;
  std::string value;
  uint64_t sequence;
  bool operator==(const Item&) const = default;
};

void PrintTo(const Item& item, std::ostream* os) {
  *os << ::testing::PrintToString(item.key) << " => "
      << ::testing::PrintToString(item.value) << " #" << item.sequence;
}

// What the sorter must produce: the input with its indices, stable-sorted
// by key (std::string compares bytes as unsigned char, like memcmp).
std::vector<Item> Expected(const Pairs& pairs) {
  std::vector<Item> items;
  for (size_t i = 0; i < pairs.size(); ++i) {
    items.push_back({pairs[i].first, pairs[i].second, i});
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const Item& a, const Item& b) { return a.key < b.key; });
  return items;
}

// Reads everything after Finish().
absl::StatusOr<std::vector<Item>> Drain(ExternalSorter& sorter) {
  std::vector<Item> items;
  std::string_view key, value;
  uint64_t sequence;
  while (true) {
    absl::StatusOr<bool> more = sorter.Next(&key, &value, &sequence);
    if (!more.ok()) return more.status();
    if (!*more) return items;
    items.push_back({std::string(key), std::string(value), sequence});
  }
}

struct Sorted {
  std::vector<Item> items;
  uint64_t runs_spilled = 0;
};

absl::StatusOr<Sorted> Sort(const Pairs& pairs, uint64_t memory_limit,
                            const std::string& temp_dir, int threads = 1) {
  ExternalSorter sorter(
      {.memory_limit = memory_limit, .temp_dir = temp_dir, .threads = threads});
  for (const auto& [k, v] : pairs) {
    absl::Status s = sorter.Add(k, v);
    if (!s.ok()) return s;
  }
  if (sorter.num_added() != pairs.size()) {
    return absl::InternalError("num_added() is wrong");
  }
  absl::Status s = sorter.Finish();
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<Item>> items = Drain(sorter);
  if (!items.ok()) return items.status();
  return Sorted{std::move(*items), sorter.runs_spilled()};
}

// Keys with many duplicates, shared prefixes longer than 8 bytes, zero and
// 0xff bytes, and empty keys and values.
Pairs MixedPairs(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  const char alphabet[] = {'\0', 'a', 'b', '\xff'};
  Pairs pairs;
  pairs.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::string key;
    if (rng() % 2 == 0) {
      key.resize(rng() % 13);
      for (auto& c : key) c = alphabet[rng() % 4];
    } else {
      key = "shared/prefix/" + RandomBytes(rng, rng() % 11);
    }
    pairs.emplace_back(std::move(key), RandomBytes(rng, rng() % 17));
  }
  return pairs;
}

std::vector<std::filesystem::path> Entries(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> entries;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    entries.push_back(e.path());
  }
  return entries;
}

TEST(SorterTest, Empty) {
  ScratchDir dir;
  for (uint64_t limit : {uint64_t{1}, kUnlimited}) {
    auto sorted = Sort({}, limit, dir.path().string());
    ASSERT_OK(sorted) << sorted.status();
    EXPECT_TRUE(sorted->items.empty());
    EXPECT_EQ(sorted->runs_spilled, 0);
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(SorterTest, OnePair) {
  ScratchDir dir;
  for (uint64_t limit : {uint64_t{1}, kUnlimited}) {
    auto sorted = Sort({{"key", "value"}}, limit, dir.path().string());
    ASSERT_OK(sorted) << sorted.status();
    EXPECT_EQ(sorted->items, (std::vector<Item>{{"key", "value", 0}}));
  }
}

TEST(SorterTest, RandomPairsMatchStableSortAtEveryLimit) {
  ScratchDir dir;
  const Pairs pairs = MixedPairs(7, 100000);
  const std::vector<Item> expected = Expected(pairs);
  for (uint64_t limit : {uint64_t{64} << 10, uint64_t{1} << 20, kUnlimited}) {
    SCOPED_TRACE(limit);
    auto sorted = Sort(pairs, limit, dir.path().string());
    ASSERT_OK(sorted) << sorted.status();
    ASSERT_EQ(sorted->items.size(), expected.size());
    EXPECT_TRUE(sorted->items == expected);
    if (limit == kUnlimited) {
      EXPECT_EQ(sorted->runs_spilled, 0);
    } else {
      EXPECT_GT(sorted->runs_spilled, 1);
    }
    EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  }
}

TEST(SorterTest, FixedSizeRandomKeys) {
  ScratchDir dir;
  const Pairs pairs = RandomFixedPairs(3, 50000, 8, 8);
  const std::vector<Item> expected = Expected(pairs);
  for (uint64_t limit : {uint64_t{64} << 10, kUnlimited}) {
    auto sorted = Sort(pairs, limit, dir.path().string());
    ASSERT_OK(sorted) << sorted.status();
    EXPECT_TRUE(sorted->items == expected);
  }
}

// A batch sorted on several threads is cut into ranges of key prefixes,
// each sorted by one: the order is the one stable sort gives, in memory
// and in spilled runs, whether the prefixes are spread, crowded on one
// (keys that differ past their 8th byte, and duplicates) or all the same.
TEST(SorterTest, ThreadsSortAlike) {
  ScratchDir dir;
  std::mt19937_64 rng(11);
  Pairs spread = RandomFixedPairs(12, 250000, 8, 4);
  for (size_t i = 0; i < spread.size(); i += 7) {
    spread.push_back({spread[i].first, "again"});
  }
  Pairs crowded = MixedPairs(13, 300000);  // half share "shared/"
  Pairs same;
  for (int i = 0; i < 250000; ++i) {
    same.emplace_back("samepfx/" + RandomBytes(rng, 3), std::to_string(i));
  }
  for (const Pairs* pairs : {&spread, &crowded, &same}) {
    const std::vector<Item> expected = Expected(*pairs);
    // A limit that holds about 70% of the pairs (each takes a 16-byte
    // record and an entry header of about 6 bytes beside its bytes): the
    // sort spills, in batches large enough to be cut between threads.
    uint64_t bytes = 0;
    for (const auto& [k, v] : *pairs) bytes += 22 + k.size() + v.size();
    for (uint64_t limit : {bytes * 7 / 10, kUnlimited}) {
      for (int threads : {2, 3, 8}) {
        SCOPED_TRACE(::testing::Message()
                     << pairs->size() << " pairs, limit " << limit << ", "
                     << threads << " threads");
        auto sorted = Sort(*pairs, limit, dir.path().string(), threads);
        ASSERT_OK(sorted) << sorted.status();
        ASSERT_EQ(sorted->items.size(), expected.size());
        EXPECT_TRUE(sorted->items == expected);
        if (limit != kUnlimited) {
          EXPECT_GT(sorted->runs_spilled, 0);
        }
      }
    }
  }
}

TEST(SorterTest, DuplicateKeysKeepArrivalOrder) {
  ScratchDir dir;
  Pairs pairs;
  for (int i = 0; i < 30000; ++i) {
    pairs.emplace_back(std::string(1, "cab"[i % 3]), std::to_string(i));
  }
  for (uint64_t limit : {uint64_t{16} << 10, kUnlimited}) {
    auto sorted = Sort(pairs, limit, dir.path().string());
    ASSERT_OK(sorted) << sorted.status();
    ASSERT_EQ(sorted->items.size(), pairs.size());
    for (size_t i = 1; i < sorted->items.size(); ++i) {
      const Item& a = sorted->items[i - 1];
      const Item& b = sorted->items[i];
      ASSERT_LE(a.key, b.key);
      if (a.key == b.key) {
        ASSERT_LT(a.sequence, b.sequence);
        ASSERT_LT(std::stoi(a.value), std::stoi(b.value));
      }
    }
  }
}

TEST(SorterTest, EmptyKeysAndValues) {
  ScratchDir dir;
  const Pairs pairs = {{"b", ""}, {"", "x"},  {"", ""}, {"a", ""},
                       {"", "y"}, {"b", "z"}, {"", ""}};
  for (uint64_t limit : {uint64_t{1}, kUnlimited}) {
    auto sorted = Sort(pairs, limit, dir.path().string());
    ASSERT_OK(sorted) << sorted.status();
    EXPECT_EQ(sorted->items, Expected(pairs));
    EXPECT_EQ(sorted->items.front(), (Item{"", "x", 1}));
  }
}

TEST(SorterTest, BinaryKeysSortAsUnsignedBytes) {
  ScratchDir dir;
  using namespace std::string_literals;
  const std::vector<std::string> ordered = {
      ""s,           "\0"s,        "\0\0"s,
      "\0\xff"s,     "\x01"s,      "a"s,
      "a\0"s,        "a\0b"s,      "abcdefgh"s,
      "abcdefgh\0"s, "abcdefghi"s, "abcdefgh\xff"s,
      "a\x7f"s,      "a\x80"s,     "a\xff"s,
      "\x7f"s,       "\x80"s,      "\xff"s,
      "\xff\0"s,     "\xff\xff"s,  "\xff\xff\xff\xff\xff\xff\xff\xff\xff"s,
  };
  ASSERT_TRUE(std::is_sorted(ordered.begin(), ordered.end()));
  Pairs pairs;
  for (size_t i = ordered.size(); i-- > 0;) {
    pairs.emplace_back(ordered[i], std::to_string(i));
  }
  for (uint64_t limit : {uint64_t{1}, uint64_t{200}, kUnlimited}) {
    auto sorted = Sort(pairs, limit, dir.path().string());
    ASSERT_OK(sorted) << sorted.status();
    ASSERT_EQ(sorted->items.size(), ordered.size());
    for (size_t i = 0; i < ordered.size(); ++i) {
      EXPECT_EQ(sorted->items[i].key, ordered[i]) << i;
    }
  }
}

TEST(SorterTest, PairLargerThanLimit) {
  ScratchDir dir;
  std::mt19937_64 rng(5);
  Pairs pairs = MixedPairs(9, 2000);
  // Larger than the limit and than the largest read buffer (1 MiB).
  pairs.insert(pairs.begin() + 1000,
               {"big", RandomBytes(rng, size_t{3} << 20)});
  pairs.emplace_back(RandomBytes(rng, 100 << 10), "big key");
  auto sorted = Sort(pairs, 64 << 10, dir.path().string());
  ASSERT_OK(sorted) << sorted.status();
  EXPECT_GT(sorted->runs_spilled, 2);
  EXPECT_TRUE(sorted->items == Expected(pairs));
}

TEST(SorterTest, ManyRunsTakeIntermediateMerges) {
  ScratchDir dir;
  const Pairs pairs = MixedPairs(11, 20000);
  auto sorted = Sort(pairs, 8 << 10, dir.path().string());
  ASSERT_OK(sorted) << sorted.status();
  EXPECT_GT(sorted->runs_spilled, 64);
  EXPECT_TRUE(sorted->items == Expected(pairs));

  // One pair per run: 300 runs, of which at most 64 are left (and open)
  // for the final merge.
  const Pairs few = MixedPairs(12, 300);
  ExternalSorter sorter({.memory_limit = 1, .temp_dir = dir.path().string()});
  for (const auto& [k, v] : few) ASSERT_OK(sorter.Add(k, v));
  ASSERT_OK(sorter.Finish());
  EXPECT_EQ(sorter.runs_spilled(), 300);
  const auto runs = Entries(Entries(dir.path()).at(0));
  EXPECT_LE(runs.size(), 64);
  size_t open_runs = 0;
  for (const auto& fd : Entries("/proc/self/fd")) {
    std::error_code ec;
    const auto target = std::filesystem::read_symlink(fd, ec);
    if (!ec && target.parent_path() == runs.at(0).parent_path()) ++open_runs;
  }
  EXPECT_EQ(open_runs, runs.size());
  auto items = Drain(sorter);
  ASSERT_OK(items) << items.status();
  EXPECT_TRUE(*items == Expected(few));
}

TEST(SorterTest, InMemoryTouchesNoDisk) {
  ScratchDir dir;
  ExternalSorter sorter(
      {.memory_limit = kUnlimited, .temp_dir = dir.path().string()});
  for (const auto& [k, v] : MixedPairs(1, 1000)) ASSERT_OK(sorter.Add(k, v));
  ASSERT_OK(sorter.Finish());
  ASSERT_OK(Drain(sorter));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(SorterTest, RunFilesAreRemoved) {
  ScratchDir dir;
  const Pairs pairs = MixedPairs(2, 5000);
  // Never finished.
  {
    ExternalSorter sorter(
        {.memory_limit = 4096, .temp_dir = dir.path().string()});
    for (const auto& [k, v] : pairs) ASSERT_OK(sorter.Add(k, v));
    ASSERT_GT(sorter.runs_spilled(), 1);
    const auto entries = Entries(dir.path());
    ASSERT_EQ(entries.size(), 1);
    EXPECT_EQ(entries[0].filename().string().rfind("roost-sort-", 0), 0);
    EXPECT_EQ(Entries(entries[0]).size(), sorter.runs_spilled());
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  // Finished and read halfway.
  {
    ExternalSorter sorter(
        {.memory_limit = 4096, .temp_dir = dir.path().string()});
    for (const auto& [k, v] : pairs) ASSERT_OK(sorter.Add(k, v));
    ASSERT_OK(sorter.Finish());
    std::string_view key, value;
    uint64_t sequence;
    for (int i = 0; i < 100; ++i) {
      ASSERT_TRUE(*sorter.Next(&key, &value, &sequence));
    }
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(SorterTest, CallsOutOfOrder) {
  ExternalSorter sorter({});
  std::string_view key, value;
  uint64_t sequence;
  EXPECT_EQ(sorter.Next(&key, &value, &sequence).status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_OK(sorter.Finish());
  EXPECT_EQ(sorter.Add("k", "v").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(sorter.Finish().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(*sorter.Next(&key, &value, &sequence));
  EXPECT_FALSE(*sorter.Next(&key, &value, &sequence));
}

TEST(SorterTest, MissingTempDirIsAnError) {
  ScratchDir dir;
  const std::string missing = dir.File("missing");
  ExternalSorter sorter({.memory_limit = 1, .temp_dir = missing});
  ASSERT_OK(sorter.Add("a", "1"));
  const absl::Status s = sorter.Add("b", "2");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(missing), absl::string_view::npos) << s;
  EXPECT_EQ(sorter.Finish(), s);  // the error sticks
}

// Spills `pairs`, damages the first run file with `damage`, and returns
// the first error of Finish() or Next().
absl::Status SortDamaged(const ScratchDir& dir,
                         void (*damage)(const std::filesystem::path&),
                         std::string* damaged) {
  ExternalSorter sorter(
      {.memory_limit = 4096, .temp_dir = dir.path().string()});
  for (const auto& [k, v] : MixedPairs(4, 3000)) {
    absl::Status s = sorter.Add(k, v);
    if (!s.ok()) return s;
  }
  const auto runs = Entries(Entries(dir.path()).at(0));
  const auto run = *std::min_element(runs.begin(), runs.end());
  damage(run);
  *damaged = run.string();
  absl::Status s = sorter.Finish();
  if (!s.ok()) return s;
  return Drain(sorter).status();
}

TEST(SorterTest, TruncatedRunIsDataLoss) {
  ScratchDir dir;
  std::string run;
  absl::Status s = SortDamaged(
      dir,
      [](const std::filesystem::path& p) {
        std::filesystem::resize_file(p, std::filesystem::file_size(p) - 3);
      },
      &run);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find(run), absl::string_view::npos) << s;
}

TEST(SorterTest, RunCutInHeaderIsDataLoss) {
  ScratchDir dir;
  std::string run;
  absl::Status s = SortDamaged(
      dir,
      [](const std::filesystem::path& p) {
        WriteFile(p.string(), ReadFile(p.string()).substr(0, 1) + "\x80");
      },
      &run);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find(run), absl::string_view::npos) << s;
}

TEST(SorterTest, BadVarintInRunIsDataLoss) {
  ScratchDir dir;
  std::string run;
  absl::Status s = SortDamaged(
      dir,
      [](const std::filesystem::path& p) {
        std::string data = ReadFile(p.string());
        data.replace(0, 11, std::string(11, '\xff'));
        WriteFile(p.string(), data);
      },
      &run);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find(run), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("bad varint"), absl::string_view::npos) << s;
}

// Not a test: prints how long 2,000,000 pairs of 8-byte keys and values take
// in memory and with a 16 MiB limit. Run with
// --gtest_also_run_disabled_tests --gtest_filter='*Timing*'.
TEST(SorterTest, DISABLED_Timing) {
  ScratchDir dir;
  const Pairs pairs = RandomFixedPairs(42, 2000000, 8, 8);
  for (uint64_t limit : {kUnlimited, uint64_t{16} << 20}) {
    const auto start = std::chrono::steady_clock::now();
    ExternalSorter sorter(
        {.memory_limit = limit, .temp_dir = dir.path().string()});
    for (const auto& [k, v] : pairs) ASSERT_OK(sorter.Add(k, v));
    ASSERT_OK(sorter.Finish());
    std::string_view key, value;
    std::string last;  // a copy: views die at the next call
    uint64_t sequence, n = 0;
    while (*sorter.Next(&key, &value, &sequence)) {
      ASSERT_LE(last, key);
      last.assign(key);
      ++n;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    ASSERT_EQ(n, pairs.size());
    std::printf("sorted %zu pairs, limit %s: %.3f s, %llu runs\n", pairs.size(),
                limit == kUnlimited ? "none" : "16 MiB", seconds,
                static_cast<unsigned long long>(sorter.runs_spilled()));
  }
}

}  // namespace
}  // namespace roost::testing
