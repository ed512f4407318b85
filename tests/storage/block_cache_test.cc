// BlockCache (storage/block/block_cache.h): the decompressed data blocks every
// open block table of a process shares. Keys of different tables never
// meet, a shard keeps its least recently used blocks out first and within
// its capacity, and a block a lookup holds outlives its eviction.

#include "storage/block/block_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "util/str_cat.h"

namespace roost::testing {
namespace {

TEST(BlockCacheTest, ShardsOnePerMebibyteUpToSixteen) {
  struct Case {
    size_t capacity;
    size_t shards;
  };
  const Case cases[] = {
      {0, 1},         {4096, 1},       {(1 << 20) - 1, 1},    {1 << 20, 1},
      {2 << 20, 2},   {3 << 20, 2},    {8 << 20, 8},          {15 << 20, 8},
      {16 << 20, 16}, {256 << 20, 16}, {size_t{1} << 40, 16},
  };
  for (const Case& c : cases) {
    BlockCache cache(c.capacity);
    EXPECT_EQ(cache.num_shards(), c.shards) << c.capacity;
    EXPECT_EQ(cache.capacity_bytes(), c.capacity);
    EXPECT_EQ(cache.usage_bytes(), 0u);
  }
}

TEST(BlockCacheTest, FindsWhatWasInsertedUnderItsTableAndBlock) {
  BlockCache cache(1 << 20);
  const uint64_t a = cache.NewId();
  const uint64_t b = cache.NewId();
  EXPECT_NE(a, b);
  EXPECT_EQ(cache.Lookup(a, 0), nullptr);
  EXPECT_EQ(*cache.Insert(a, 0, "a0"), "a0");
  EXPECT_EQ(*cache.Insert(b, 0, "b0"), "b0");
  EXPECT_EQ(*cache.Insert(a, 1, "a1"), "a1");
  ASSERT_NE(cache.Lookup(a, 0), nullptr);
  EXPECT_EQ(*cache.Lookup(a, 0), "a0");
  EXPECT_EQ(*cache.Lookup(b, 0), "b0");
  EXPECT_EQ(*cache.Lookup(a, 1), "a1");
  EXPECT_EQ(cache.Lookup(b, 1), nullptr);
  EXPECT_EQ(cache.hits(), 4u);
  EXPECT_EQ(cache.misses(), 2u);
  EXPECT_EQ(cache.usage_bytes(), 6u);
}

TEST(BlockCacheTest, ASecondInsertOfOneBlockReturnsTheFirst) {
  BlockCache cache(1 << 20);
  auto first = cache.Insert(1, 7, "first");
  auto second = cache.Insert(1, 7, "second");
  EXPECT_EQ(first, second);
  EXPECT_EQ(*cache.Lookup(1, 7), "first");
  EXPECT_EQ(cache.usage_bytes(), 5u);
}

// One shard (a cache under 2 MiB): the least recently used block goes
// first, and a lookup makes a block the most recently used.
TEST(BlockCacheTest, EvictsTheLeastRecentlyUsedFirst) {
  BlockCache cache(300);
  ASSERT_EQ(cache.num_shards(), 1u);
  const std::string block(100, 'x');
  cache.Insert(1, 0, block);
  cache.Insert(1, 1, block);
  cache.Insert(1, 2, block);
  EXPECT_EQ(cache.usage_bytes(), 300u);
  ASSERT_NE(cache.Lookup(1, 0), nullptr);  // 1 is now the oldest
  cache.Insert(1, 3, block);
  EXPECT_EQ(cache.usage_bytes(), 300u);
  EXPECT_NE(cache.Lookup(1, 0), nullptr);
  EXPECT_EQ(cache.Lookup(1, 1), nullptr);
  EXPECT_NE(cache.Lookup(1, 2), nullptr);
  EXPECT_NE(cache.Lookup(1, 3), nullptr);
}

TEST(BlockCacheTest, KeepsNothingLargerThanAShard) {
  struct Case {
    size_t capacity;
    size_t block;
    bool kept;
  };
  const Case cases[] = {
      {0, 1, false},
      {100, 100, true},
      {100, 101, false},
      // 16 shards of 1 MiB: a block of 1 MiB and a byte fits no shard.
      {16 << 20, 1 << 20, true},
      {16 << 20, (1 << 20) + 1, false},
  };
  for (const Case& c : cases) {
    BlockCache cache(c.capacity);
    auto block = cache.Insert(1, 0, std::string(c.block, 'x'));
    ASSERT_NE(block, nullptr);
    EXPECT_EQ(block->size(), c.block);
    EXPECT_EQ(cache.Lookup(1, 0) != nullptr, c.kept)
        << c.capacity << " " << c.block;
    EXPECT_EQ(cache.usage_bytes(), c.kept ? c.block : 0u);
  }
}

TEST(BlockCacheTest, AHeldBlockOutlivesItsEviction) {
  BlockCache cache(100);
  std::shared_ptr<const std::string> held = cache.Insert(1, 0, "held");
  for (uint64_t i = 1; i < 100; ++i) cache.Insert(1, i, std::string(10, 'y'));
  EXPECT_EQ(cache.Lookup(1, 0), nullptr);
  EXPECT_EQ(*held, "held");
  EXPECT_LE(cache.usage_bytes(), 100u);
}

// Many tables' blocks through every shard, from several threads: the
// usage never exceeds the capacity, and every block found is the one
// asked for.
TEST(BlockCacheTest, ThreadsSharingTheCacheFindOnlyTheirBlocks) {
  BlockCache cache(4 << 20);
  ASSERT_EQ(cache.num_shards(), 4u);
  std::atomic<bool> wrong{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      const uint64_t table = cache.NewId();
      for (uint64_t i = 0; i < 20000; ++i) {
        const uint64_t block = (i * 7919) % 3000;
        const std::string want = StrCat(table, "/", block, "/");
        auto found = cache.Lookup(table, block);
        if (found == nullptr) {
          found = cache.Insert(table, block, want + std::string(4000, 'z'));
        }
        if (found->compare(0, want.size(), want) != 0) wrong = true;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_FALSE(wrong.load());
  EXPECT_LE(cache.usage_bytes(), cache.capacity_bytes());
  EXPECT_GT(cache.usage_bytes(), cache.capacity_bytes() / 2);
  EXPECT_EQ(cache.hits() + cache.misses(), 4u * 20000);
}

}  // namespace
}  // namespace roost::testing
