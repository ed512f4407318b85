// The behaviour suite every table format runs (see table_harness.h).

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <thread>
#include <unordered_map>

#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"
#include "tests/storage/table_harness.h"
#include "util/escape.h"

namespace roost::testing {
namespace {

std::vector<std::string_view> Views(const std::vector<std::string>& keys) {
  return {keys.begin(), keys.end()};
}

uint64_t MajorFaults() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_majflt);
}

// Drops a mapped table's pages from this process and from the page cache,
// so that the next read of each is a major fault.
void DropPages(const std::string& path, std::string_view data) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(data.data()) & ~(page - 1);
  madvise(reinterpret_cast<void*>(begin),
          reinterpret_cast<uintptr_t>(data.data()) + data.size() - begin,
          MADV_DONTNEED);
  const int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  fdatasync(fd);
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
}

class TableBehaviourTest : public ::testing::TestWithParam<HarnessFactory> {
 protected:
  void SetUp() override { harness_ = GetParam().make(); }

  // Builds and opens a table of `pairs`, then checks that every key reads
  // back its value (by Get and by MultiGet) and that `misses` are absent.
  void BuildAndCheck(const Pairs& pairs,
                     const std::vector<std::string>& misses = {}) {
    const std::string path = dir_.File("t.sst");
    ASSERT_OK(harness_->Build(pairs, DuplicatePolicy::kError, path));
    ASSERT_OK(harness_->Open(path));
    std::vector<std::string> keys;
    for (const auto& [k, v] : pairs) {
      ASSERT_EQ(harness_->Get(k), v) << PrintableKey(k);
      keys.push_back(k);
    }
    for (const auto& k : misses) {
      ASSERT_EQ(harness_->Get(k), std::nullopt) << PrintableKey(k);
      keys.push_back(k);
    }
    // Asking for the keys' pages first changes no answer (a mapped table's
    // RequestPages reads its blocks and buckets; other tables do nothing).
    harness_->table().RequestPages(Views(keys));
    const auto results = harness_->MultiGet(keys);
    ASSERT_EQ(results.size(), keys.size());
    for (size_t i = 0; i < pairs.size(); ++i) {
      ASSERT_EQ(results[i], pairs[i].second) << i;
    }
    for (size_t i = pairs.size(); i < keys.size(); ++i) {
      ASSERT_EQ(results[i], std::nullopt) << i;
    }
  }

  ScratchDir dir_;
  std::unique_ptr<TableHarness> harness_;
};

TEST_P(TableBehaviourTest, EmptyTable) {
  BuildAndCheck({}, {"", "a", std::string(8, '\0')});
}

TEST_P(TableBehaviourTest, OneKey) {
  BuildAndCheck({{"key", "value"}}, {"", "ke", "key2", "kez"});
}

TEST_P(TableBehaviourTest, EmptyKeyAndEmptyValue) {
  BuildAndCheck({{"", "the empty key"}}, {"a", std::string(1, '\0')});
  BuildAndCheck({{"", ""}, {"a", "b"}, {"ab", ""}}, {"b", "abc"});
  BuildAndCheck({{"only", ""}}, {""});
}

TEST_P(TableBehaviourTest, AllZeroKeys) {
  // Zero bytes are keys like any other: no sentinel may swallow them.
  Pairs fixed;
  for (int i = 0; i < 100; ++i) {
    std::string key(8, '\0');
    key[7] = static_cast<char>(i);  // the first is all zeros
    fixed.emplace_back(key, std::string(8, static_cast<char>(i)));
  }
  BuildAndCheck(fixed, {std::string(8, '\xff'), std::string(7, '\0')});
  Pairs variable;
  for (size_t n = 0; n < 20; ++n) {
    variable.emplace_back(std::string(n, '\0'), std::to_string(n));
  }
  BuildAndCheck(variable, {std::string(20, '\0'), std::string(1, '\x01')});
}

TEST_P(TableBehaviourTest, LongSharedPrefixes) {
  Pairs pairs;
  const std::string prefix(300, 'p');
  for (int i = 0; i < 2000; ++i) {
    pairs.emplace_back(prefix + std::to_string(i), std::to_string(i) + "v");
  }
  BuildAndCheck(pairs, {prefix, prefix + "x", prefix + "2000"});
}

TEST_P(TableBehaviourTest, FixedWidthKeysAndValues) {
  for (auto [kw, vw] : {std::pair{8, 8}, {8, 4}, {16, 8}, {4, 0}, {8, 100}}) {
    SCOPED_TRACE(::testing::Message() << kw << "/" << vw);
    const Pairs pairs = RandomFixedPairs(kw * 1000 + vw, 5000, kw, vw);
    std::vector<std::string> misses;
    std::mt19937_64 rng(7);
    for (int i = 0; i < 1000; ++i) misses.push_back(RandomBytes(rng, kw));
    misses.push_back(std::string(kw + 1, 'x'));  // wrong width
    std::erase_if(misses, [&](const std::string& m) {
      return std::any_of(pairs.begin(), pairs.end(),
                         [&](const auto& p) { return p.first == m; });
    });
    BuildAndCheck(pairs, misses);
  }
}

TEST_P(TableBehaviourTest, VariableWidthKeysAndValues) {
  const Pairs pairs = RandomVariablePairs(11, 20000, 1, 60, 0, 300);
  BuildAndCheck(pairs, {"", "no such key", std::string(61, 'z')});
}

TEST_P(TableBehaviourTest, MillionRandomKeysAgainstUnorderedMap) {
  const Pairs pairs = RandomFixedPairs(42, 1000000, 8, 8);
  std::unordered_map<std::string, std::string> expected(pairs.begin(),
                                                        pairs.end());
  const std::string path = dir_.File("big.sst");
  ASSERT_OK(harness_->Build(pairs, DuplicatePolicy::kError, path));
  ASSERT_OK(harness_->Open(path));
  std::mt19937_64 rng(43);
  std::vector<std::string> probe;
  for (int i = 0; i < 200000; ++i) {
    probe.push_back(rng() % 2 ? pairs[rng() % pairs.size()].first
                              : RandomBytes(rng, 8));
  }
  harness_->table().RequestPages(Views(probe));
  const auto results = harness_->MultiGet(probe);
  for (size_t i = 0; i < probe.size(); ++i) {
    auto it = expected.find(probe[i]);
    const std::optional<std::string> want =
        it == expected.end() ? std::nullopt
                             : std::optional<std::string>(it->second);
    ASSERT_EQ(results[i], want) << i;
    ASSERT_EQ(harness_->Get(probe[i]), want) << i;
  }
  for (const auto& [k, v] : pairs) ASSERT_EQ(harness_->Get(k), v);
}

// On a mapped table whose pages were dropped from memory, a MultiGet whose
// keys' pages were asked for (RequestPages) takes no major fault: every page
// it reads was asked for, a block table's index and filter included (they
// are copied into memory of the table's own). A MultiGet of other keys
// without the request, first, shows that the pages were dropped (hundreds
// of faults); where they could not be (a file system that keeps them), the
// test is skipped, as it is for tables not mapped (copied or locked).
TEST_P(TableBehaviourTest, AMultiGetAfterItsPageRequestsTakesNoMajorFault) {
  // Variable pairs (a cuckoo table's heap layout) and 8-byte ones (inline).
  for (const bool fixed : {false, true}) {
    SCOPED_TRACE(fixed ? "8-byte keys and values" : "variable pairs");
    const Pairs pairs = fixed ? RandomFixedPairs(12, 100000, 8, 8)
                              : RandomVariablePairs(13, 40000, 4, 40, 20, 200);
    const std::string path = dir_.File(fixed ? "fixed.sst" : "variable.sst");
    ASSERT_OK(harness_->Build(pairs, DuplicatePolicy::kError, path));
    ASSERT_OK(harness_->Open(path));
    const Table& table = harness_->table();
    std::vector<std::string> asked, control;
    std::mt19937_64 rng(14);
    for (int i = 0; i < 300; ++i) {
      control.push_back(pairs[rng() % pairs.size()].first);
      asked.push_back(pairs[rng() % pairs.size()].first);
      asked.push_back(RandomBytes(rng, fixed ? 8 : 12));  // mostly a miss
    }
    if (table.RequestPages(Views(control)) == 0) {
      GTEST_SKIP() << "the table is not mapped";
    }
    DropPages(path, table.file_data());
    uint64_t before = MajorFaults();
    harness_->MultiGet(control);
    const uint64_t control_faults = MajorFaults() - before;
    if (control_faults < 100) {
      GTEST_SKIP() << "only " << control_faults << " major faults after "
                   << "dropping the pages: they could not be dropped here";
    }
    DropPages(path, table.file_data());
    EXPECT_GT(table.RequestPages(Views(asked)), 0u);
    // The reads asked for run on without us: wait until they are in (a
    // fault on a page still being read would count as major).
    uint64_t resident = ResidentBytes(table.file_data());
    for (int i = 0; i < 250; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const uint64_t now = ResidentBytes(table.file_data());
      if (now == resident && now > 0) break;
      resident = now;
    }
    before = MajorFaults();
    const auto results = harness_->MultiGet(asked);
    // None from the table (a stray one from elsewhere in the process, as
    // under the sanitizers, is allowed for).
    EXPECT_LE(MajorFaults() - before, 3u)
        << "the MultiGet without requests took " << control_faults;
    std::unordered_map<std::string, std::string> expected(pairs.begin(),
                                                          pairs.end());
    for (size_t i = 0; i < asked.size(); ++i) {
      auto it = expected.find(asked[i]);
      ASSERT_EQ(results[i], it == expected.end()
                                ? std::nullopt
                                : std::optional<std::string>(it->second))
          << i;
    }
  }
}

TEST_P(TableBehaviourTest, DuplicateKeys) {
  const Pairs pairs = {
      {"a", "1"}, {"b", "2"}, {"a", "3"}, {"c", "4"}, {"a", "5"}};
  const std::string path = dir_.File("dup.sst");
  absl::Status s = harness_->Build(pairs, DuplicatePolicy::kError, path);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("duplicate key \"a\""), std::string::npos)
      << s.message();
  EXPECT_FALSE(std::filesystem::exists(path));

  ASSERT_OK(harness_->Build(pairs, DuplicatePolicy::kKeepFirst, path));
  ASSERT_OK(harness_->Open(path));
  EXPECT_EQ(harness_->Get("a"), "1");
  EXPECT_EQ(harness_->Get("b"), "2");
  EXPECT_EQ(harness_->Get("c"), "4");

  const std::string last = dir_.File("last.sst");
  ASSERT_OK(harness_->Build(pairs, DuplicatePolicy::kKeepLast, last));
  ASSERT_OK(harness_->Open(last));
  EXPECT_EQ(harness_->Get("a"), "5");
  EXPECT_EQ(harness_->Get("c"), "4");
}

// Through the Table interface: a sorted format scans every pair in key
// order and seeks to the first key at or after a target; a cuckoo table says
// it keeps no order instead of giving pairs in some order.
TEST_P(TableBehaviourTest, ScanInKeyOrderWhereTheFormatIsSorted) {
  const Pairs pairs = RandomVariablePairs(12, 5000, 0, 24, 0, 40);
  const std::map<std::string, std::string> expected(pairs.begin(), pairs.end());
  const std::string path = dir_.File("scan.sst");
  ASSERT_OK(harness_->Build(pairs, DuplicatePolicy::kError, path));
  ASSERT_OK(harness_->Open(path));
  std::unique_ptr<TableIterator> it = harness_->table().NewIterator();
  if (harness_->table().format() == TableFormat::kCuckoo) {
    it->SeekToFirst();
    EXPECT_FALSE(it->Valid());
    EXPECT_THAT(it->status(), StatusIs(absl::StatusCode::kUnimplemented,
                                       "cuckoo tables keep no key order: "
                                       "there is nothing to scan"));
    return;
  }
  auto want = expected.begin();
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++want) {
    ASSERT_NE(want, expected.end()) << PrintableKey(it->key());
    ASSERT_EQ(it->key(), want->first);
    ASSERT_EQ(it->value(), want->second) << PrintableKey(want->first);
  }
  ASSERT_OK(it->status());
  EXPECT_EQ(want, expected.end());

  std::mt19937_64 rng(13);
  for (int i = 0; i < 2000; ++i) {
    const std::string target = RandomBytes(rng, rng() % 25);
    it->Seek(target);
    ASSERT_OK(it->status());
    const auto at = expected.lower_bound(target);
    ASSERT_EQ(it->Valid(), at != expected.end()) << PrintableKey(target);
    if (it->Valid()) {
      ASSERT_EQ(it->key(), at->first) << PrintableKey(target);
    }
  }
}

TEST_P(TableBehaviourTest, SameInputGivesIdenticalBytes) {
  for (const Pairs& pairs : {RandomFixedPairs(5, 30000, 8, 8),
                             RandomVariablePairs(6, 30000, 0, 40, 0, 50)}) {
    const std::string a = dir_.File("a.sst"), b = dir_.File("b.sst");
    ASSERT_OK(harness_->Build(pairs, DuplicatePolicy::kError, a));
    ASSERT_OK(harness_->Build(pairs, DuplicatePolicy::kError, b));
    const std::string bytes = ReadFile(a);
    EXPECT_FALSE(bytes.empty());
    EXPECT_TRUE(bytes == ReadFile(b));
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllFormats, TableBehaviourTest, ::testing::ValuesIn(AllHarnesses()),
    [](const ::testing::TestParamInfo<HarnessFactory>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace roost::testing
