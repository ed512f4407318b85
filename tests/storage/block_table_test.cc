// What is particular to the block-based table: ordering rules, separators,
// the hash index and its fallback, index search modes, compression, the
// block cache, and iterators.

#include "storage/block/block_table.h"

#include <gtest/gtest.h>
#include <snappy.h>
#include <zstd.h>

#include <algorithm>
#include <map>
#include <random>

#include "storage/block/block_table_builder.h"
#include "storage/block/data_block.h"
#include "storage/block/data_block_builder.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// Builds a table of `pairs`, which it sorts first.
absl::StatusOr<BlockBuildReport> Build(Pairs pairs, const std::string& path,
                                       BlockBuildOptions options = {}) {
  std::sort(pairs.begin(), pairs.end());
  auto builder = BlockTableBuilder::Create(path, options);
  if (!builder.ok()) return builder.status();
  for (const auto& [k, v] : pairs) {
    absl::Status s = (*builder)->Add(k, v);
    if (!s.ok()) return s;
  }
  return (*builder)->Finish();
}

std::unique_ptr<BlockTable> OpenOrDie(const std::string& path,
                                      TableReadOptions options = {}) {
  auto table = BlockTable::Open(path, options);
  EXPECT_OK(table) << table.status();
  return table.ok() ? std::move(*table) : nullptr;
}

std::optional<std::string> Lookup(const BlockTable& table,
                                  std::string_view key) {
  BlockTable::Value value;
  auto found = table.Get(key, &value);
  EXPECT_OK(found) << found.status();
  if (!found.ok() || !*found) return std::nullopt;
  return std::string(value.view());
}

// As the cuckoo table: advised MADV_RANDOM once open, unless asked not to.
TEST(BlockTableTest, AMappedTableIsAdvisedRandomAccess) {
  ScratchDir dir;
  const std::string path = dir.File("t.sst");
  ASSERT_OK(Build(RandomVariablePairs(9, 5000, 1, 30, 1, 30), path));
  auto advised = OpenOrDie(path);
  ASSERT_NE(advised, nullptr);
  EXPECT_THAT(MappingVmFlags(advised->file_data().data()), HasSubstr(" rr "));
  TableReadOptions options;
  options.advise_random = false;
  auto plain = OpenOrDie(path, options);
  ASSERT_NE(plain, nullptr);
  const std::string flags = MappingVmFlags(plain->file_data().data());
  EXPECT_THAT(flags, HasSubstr(" rd "));  // found the mapping
  EXPECT_THAT(flags, ::testing::Not(HasSubstr(" rr ")));
}

TEST(BlockTableTest, ShortestSeparator) {
  EXPECT_EQ(ShortestSeparator("abc", "abz"), "abd");
  EXPECT_EQ(ShortestSeparator("abc", "abd"), "abc");
  EXPECT_EQ(ShortestSeparator("ab", "abc"), "ab");
  EXPECT_EQ(ShortestSeparator("a\xff", "b"), "a\xff");
  EXPECT_EQ(ShortestSeparator("apple pie", "banana"), "apple pie");
  EXPECT_EQ(ShortestSeparator("apple pie", "cherry"), "b");
}

TEST(BlockTableTest, KeyToNumberKeepsBytewiseOrder) {
  EXPECT_LT(KeyToNumber("ab", 0), KeyToNumber(std::string("ab\x01", 3), 0));
  EXPECT_EQ(KeyToNumber("ab", 0), KeyToNumber(std::string("ab\0", 3), 0));
  EXPECT_EQ(KeyToNumber("prefix\x01", 6), uint64_t{1} << 56);
  EXPECT_LT(KeyToNumber("a\xff", 0), KeyToNumber("b", 0));
}

TEST(BlockTableTest, OutOfOrderAndDuplicateKeysAreNamed) {
  ScratchDir dir;
  const std::string path = dir.File("t.sst");
  {
    auto builder = BlockTableBuilder::Create(path, {});
    ASSERT_OK(builder);
    ASSERT_OK((*builder)->Add("b", "1"));
    absl::Status s = (*builder)->Add("a", "2");
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message(),
              "key \"a\" is out of order (after \"b\") at entry 1 (counting "
              "from 0)");
    EXPECT_FALSE((*builder)->Finish().ok());
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  auto builder = BlockTableBuilder::Create(path, {});
  ASSERT_OK((*builder)->Add("a", "1"));
  EXPECT_EQ((*builder)->Add("a", "2").message(),
            "duplicate key \"a\" at entry 1 (counting from 0)");
}

TEST(BlockTableTest, RejectsBadOptions) {
  ScratchDir dir;
  BlockBuildOptions o;
  o.restart_interval = 0;
  EXPECT_EQ(BlockTableBuilder::Create(dir.File("t"), o).status().code(),
            absl::StatusCode::kInvalidArgument);
  o = {};
  o.hash_index_utilization = 0;
  EXPECT_EQ(BlockTableBuilder::Create(dir.File("t"), o).status().code(),
            absl::StatusCode::kInvalidArgument);
  o = {};
  o.block_size = 0;
  EXPECT_EQ(BlockTableBuilder::Create(dir.File("t"), o).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// A block with more restart intervals than a bucket byte can name gets no
// hash index, and its lookups fall back to binary search.
TEST(BlockTableTest, HashIndexFallsBackPastItsRestartLimit) {
  for (const int n : {200, 254, 255, 1000}) {
    SCOPED_TRACE(n);
    DataBlockBuilder builder(/*restart_interval=*/1, /*hash_index=*/true);
    std::vector<std::string> keys;
    for (int i = 0; i < n; ++i)
      keys.push_back("key" + std::to_string(10000 + i));
    for (const auto& k : keys) builder.Add(k, "v" + k);
    auto block = DataBlock::Parse("test", builder.Finish());
    ASSERT_OK(block) << block.status();
    EXPECT_EQ(block->has_hash_index(), n <= 254);
    for (const auto& k : keys) {
      std::string_view value;
      ASSERT_EQ(block->Get(k, true, &value), DataBlock::kFound) << k;
      EXPECT_EQ(value, "v" + k);
    }
    std::string_view value;
    EXPECT_EQ(block->Get("key0", true, &value), DataBlock::kNotFound);
    EXPECT_EQ(block->Get("key99999", true, &value), DataBlock::kNotFound);
  }
}

TEST(BlockTableTest, UniformKeysAreFlaggedAndSkewedOnesAreNot) {
  ScratchDir dir;
  std::mt19937_64 rng(3);
  Pairs uniform, skewed;
  for (int i = 0; i < 50000; ++i) {
    const uint64_t u = rng();
    std::string k(8, '\0');
    for (int b = 0; b < 8; ++b) k[b] = static_cast<char>(u >> (56 - 8 * b));
    uniform.emplace_back(k, "v");
    // u^4 crowds the keys near zero.
    const double x = static_cast<double>(rng() >> 11) / (1ull << 53);
    const auto s = static_cast<uint64_t>(x * x * x * x * 1.8e19);
    for (int b = 0; b < 8; ++b) k[b] = static_cast<char>(s >> (56 - 8 * b));
    skewed.emplace_back(k + std::to_string(i), "v");
  }
  // With 4 KiB blocks each index gap spans a couple of hundred random key
  // gaps, so its spread is small (coefficient of variation about 0.07).
  BlockBuildOptions o;
  auto u = Build(uniform, dir.File("u.sst"), o);
  auto s = Build(skewed, dir.File("s.sst"), o);
  ASSERT_TRUE(u.ok() && s.ok());
  EXPECT_TRUE(u->is_uniform) << u->uniformity_cv;
  EXPECT_LT(u->uniformity_cv, 0.2);
  EXPECT_FALSE(s->is_uniform) << s->uniformity_cv;
  auto ut = OpenOrDie(dir.File("u.sst"));
  auto st = OpenOrDie(dir.File("s.sst"));
  EXPECT_TRUE(ut->footer().is_uniform);
  EXPECT_EQ(ut->index_search(), IndexSearch::kAuto);
  // Every search mode finds every key of both sets.
  for (IndexSearch mode : {IndexSearch::kBinary, IndexSearch::kInterpolation,
                           IndexSearch::kAuto}) {
    TableReadOptions ro;
    ro.index_search = mode;
    auto a = OpenOrDie(dir.File("u.sst"), ro);
    auto b = OpenOrDie(dir.File("s.sst"), ro);
    for (size_t i = 0; i < uniform.size(); i += 7) {
      ASSERT_EQ(Lookup(*a, uniform[i].first), "v");
      ASSERT_EQ(Lookup(*b, skewed[i].first), "v");
    }
    EXPECT_EQ(Lookup(*a, ""), std::nullopt);
    EXPECT_EQ(Lookup(*b, std::string(9, '\xff')), std::nullopt);
  }
}

// Index keys that agree on the 8 bytes the search turns into numbers: the
// search must settle the ties with whole keys, whatever the mode.
TEST(BlockTableTest, IndexKeysWithEqualNumbers) {
  ScratchDir dir;
  Pairs pairs = {{"a", "first"}, {"c", "last"}};
  for (int i = 0; i < 5000; ++i) {
    pairs.emplace_back(StrCat("bXXXXXXXXXX", 100000 + i), StrCat(i));
  }
  BlockBuildOptions o;
  o.block_size = 128;
  ASSERT_OK(Build(pairs, dir.File("t.sst"), o));
  for (IndexSearch mode : {IndexSearch::kBinary, IndexSearch::kInterpolation}) {
    TableReadOptions ro;
    ro.index_search = mode;
    auto t = OpenOrDie(dir.File("t.sst"), ro);
    for (const auto& [k, v] : pairs) ASSERT_EQ(Lookup(*t, k), v) << k;
    EXPECT_EQ(Lookup(*t, "bXXXXXXXXXX0"), std::nullopt);
    EXPECT_EQ(Lookup(*t, "bXXXXXXXXXX2"), std::nullopt);
    EXPECT_EQ(Lookup(*t, "bXXXXXXXXXX"), std::nullopt);
    EXPECT_EQ(Lookup(*t, "b"), std::nullopt);
    EXPECT_EQ(Lookup(*t, "d"), std::nullopt);
    auto it = t->NewIterator();
    it->Seek("bXXXXXXXXXX102");
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key(), "bXXXXXXXXXX102000");
  }
}

TEST(BlockTableTest, CompressesOnlyWhenItSavesAnEighth) {
  ScratchDir dir;
  Pairs compressible, random;
  std::mt19937_64 rng(4);
  for (int i = 0; i < 2000; ++i) {
    const std::string k = "key" + std::to_string(100000 + i);
    compressible.emplace_back(k, std::string(100, 'x'));
    random.emplace_back(k, RandomBytes(rng, 100));
  }
  for (Compression c : {Compression::kSnappy, Compression::kZstd}) {
    SCOPED_TRACE(CompressionName(c));
    BlockBuildOptions o;
    o.compression = c;
    auto a = Build(compressible, dir.File("a.sst"), o);
    auto b = Build(random, dir.File("b.sst"), o);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->compressed_blocks, a->num_data_blocks);
    EXPECT_LT(a->file_size, a->raw_bytes / 4);
    EXPECT_EQ(b->compressed_blocks, 0u);
    auto t = OpenOrDie(dir.File("a.sst"));
    for (const auto& [k, v] : compressible) ASSERT_EQ(Lookup(*t, k), v);
  }
}

TEST(BlockTableTest, CacheCountsHitsAndMissesWithinCapacity) {
  ScratchDir dir;
  Pairs pairs;
  for (int i = 0; i < 5000; ++i) {
    pairs.emplace_back("key" + std::to_string(100000 + i),
                       std::string(50, 'y'));
  }
  BlockBuildOptions o;
  o.compression = Compression::kSnappy;
  ASSERT_OK(Build(pairs, dir.File("t.sst"), o));
  TableReadOptions ro;
  ro.block_cache = std::make_shared<BlockCache>(16 << 10);
  auto t = OpenOrDie(dir.File("t.sst"), ro);
  EXPECT_EQ(&t->cache(), ro.block_cache.get());
  EXPECT_EQ(Lookup(*t, pairs[0].first), pairs[0].second);
  EXPECT_EQ(t->cache().misses(), 1u);
  EXPECT_EQ(Lookup(*t, pairs[1].first), pairs[1].second);
  EXPECT_EQ(t->cache().hits(), 1u);
  for (const auto& [k, v] : pairs) ASSERT_EQ(Lookup(*t, k), v);
  EXPECT_LE(t->cache().usage_bytes(), ro.block_cache->capacity_bytes());
  EXPECT_GT(t->cache().misses(), 1u);

  // A value stays valid after its block leaves the cache.
  BlockTable::Value held;
  ASSERT_TRUE(*t->Get(pairs[0].first, &held));
  for (const auto& [k, v] : pairs) Lookup(*t, k);
  EXPECT_EQ(held.view(), pairs[0].second);
}

// Two tables of the same shape, one cache: block i of one is never taken
// for block i of the other, and both count in the one cache.
TEST(BlockTableTest, TablesSharingACacheKeepTheirBlocksApart) {
  ScratchDir dir;
  Pairs a, b;
  for (int i = 0; i < 2000; ++i) {
    a.emplace_back(StrCat("key", 100000 + i), StrCat("a", i));
    b.emplace_back(StrCat("key", 100000 + i), StrCat("b", i));
  }
  BlockBuildOptions o;
  o.compression = Compression::kSnappy;
  ASSERT_OK(Build(a, dir.File("a.sst"), o));
  ASSERT_OK(Build(b, dir.File("b.sst"), o));
  TableReadOptions ro;
  ro.block_cache = std::make_shared<BlockCache>(1 << 20);
  auto ta = OpenOrDie(dir.File("a.sst"), ro);
  auto tb = OpenOrDie(dir.File("b.sst"), ro);
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(Lookup(*ta, a[i].first), a[i].second);
      ASSERT_EQ(Lookup(*tb, b[i].first), b[i].second);
    }
  }
  const uint64_t blocks =
      ta->footer().num_data_blocks + tb->footer().num_data_blocks;
  EXPECT_EQ(ro.block_cache->misses(), blocks);
  EXPECT_EQ(ro.block_cache->hits(), 4 * a.size() - blocks);
  EXPECT_GT(ro.block_cache->usage_bytes(), 0u);
}

class BlockIteratorTest : public ::testing::TestWithParam<BlockBuildOptions> {};

TEST_P(BlockIteratorTest, ScansAndSeeks) {
  ScratchDir dir;
  std::map<std::string, std::string> expected;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 3000; ++i) {
    expected[StrCat("k", rng() % 100000)] = std::to_string(i);
  }
  Pairs pairs(expected.begin(), expected.end());
  ASSERT_OK(Build(pairs, dir.File("t.sst"), GetParam()));
  auto t = OpenOrDie(dir.File("t.sst"));
  auto it = t->NewIterator();
  it->SeekToFirst();
  for (const auto& [k, v] : expected) {
    ASSERT_TRUE(it->Valid()) << k;
    ASSERT_EQ(it->key(), k);
    ASSERT_EQ(it->value(), v);
    it->Next();
  }
  EXPECT_FALSE(it->Valid());
  EXPECT_OK(it->status());
  for (int i = 0; i < 2000; ++i) {
    const std::string target = StrCat("k", rng() % 110000);
    it->Seek(target);
    auto want = expected.lower_bound(target);
    if (want == expected.end()) {
      ASSERT_FALSE(it->Valid()) << target;
      continue;
    }
    ASSERT_TRUE(it->Valid()) << target;
    ASSERT_EQ(it->key(), want->first);
    ASSERT_EQ(it->value(), want->second);
    // A few steps on from there.
    for (int step = 0; step < 3 && ++want != expected.end(); ++step) {
      it->Next();
      ASSERT_TRUE(it->Valid());
      ASSERT_EQ(it->key(), want->first);
    }
  }
  it->Seek("");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), expected.begin()->first);
  it->Seek("l");
  EXPECT_FALSE(it->Valid());
}

TEST(BlockIteratorTest, EmptyTable) {
  ScratchDir dir;
  ASSERT_OK(Build({}, dir.File("t.sst")));
  auto t = OpenOrDie(dir.File("t.sst"));
  auto it = t->NewIterator();
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  it->Seek("a");
  EXPECT_FALSE(it->Valid());
  EXPECT_OK(it->status());
}

BlockBuildOptions Options(uint32_t block_size, uint32_t restart_interval,
                          Compression compression) {
  BlockBuildOptions o;
  o.block_size = block_size;
  o.restart_interval = restart_interval;
  o.compression = compression;
  return o;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, BlockIteratorTest,
    ::testing::Values(Options(4096, 16, Compression::kNone),
                      Options(64, 1, Compression::kNone),
                      Options(128, 3, Compression::kSnappy),
                      Options(1 << 20, 1024, Compression::kZstd)));

// Found by block_table_fuzz (fuzz/regressions/block_table_fuzz/
// zstd-block-states-1.2-gb): a compressed data block states its own size
// before compression, and the reader allocated whatever it stated, up to
// 2 GiB, on every read of the block. A block holds no more than the table's
// keys and values and their framing, which the footer counts.
TEST(BlockTableTest, ABlockLargerThanTheFooterAllowsIsRefusedBeforeItIsRead) {
  ScratchDir dir;
  const std::string path = dir.File("t.sst");
  BlockBuildOptions options;
  options.block_size = 1 << 20;
  options.compression = Compression::kZstd;
  options.hash_index = false;
  auto builder = BlockTableBuilder::Create(path, options);
  ASSERT_OK(builder) << builder.status();
  for (int i = 0; i < 100; ++i) {
    ASSERT_OK((*builder)->Add(StrCat("key", 100 + i), std::string(1000, 'v')));
  }
  ASSERT_OK((*builder)->Finish());
  {
    auto table = BlockTable::Open(path);
    ASSERT_OK(table) << table.status();
    BlockTable::Value value;
    auto found = (*table)->Get("key150", &value);
    ASSERT_TRUE(found.ok() && *found) << found.status();
  }

  // The footer now says the values take no bytes (its checksum made
  // right): the one data block, about 100 KB, cannot be this table's.
  std::string bytes = ReadFile(path);
  auto footer = BlockTableFooter::Decode(path, bytes);
  ASSERT_OK(footer) << footer.status();
  footer->raw_value_bytes = 0;
  bytes.replace(bytes.size() - kBlockTableFooterSize, kBlockTableFooterSize,
                footer->Encode());
  WriteFile(path, bytes);
  auto table = BlockTable::Open(path);
  ASSERT_OK(table) << table.status();
  BlockTable::Value value;
  auto found = (*table)->Get("key150", &value);
  EXPECT_THAT(found, StatusIs(absl::StatusCode::kDataLoss,
                              AllOf(HasSubstr("data block 0: its zstd frame "
                                              "states 10"),
                                    HasSubstr("bytes uncompressed, more than "
                                              "this table's keys and values "
                                              "can fill ("))));
}

// Found by block_table_fuzz (fuzz/open/block_table_fuzz/
// snappy-length-256-mib-footer-agrees): under a footer whose figures allow
// it, a block stating 256 MiB that holds a few bytes was given 256 MiB,
// zeroed, on every read. What a block is given follows what it really
// decompresses to; `out`'s capacity shows what was allocated.
TEST(DecompressBlockTest, AStatedSizeWithoutTheDataBehindItIsNotAllocated) {
  constexpr uint64_t kStated = 256 << 20;
  constexpr uint64_t kBound = uint64_t{1} << 30;
  // snappy: the length prefix, then one literal of 4 bytes.
  std::string snappy;
  uint64_t v = kStated;
  for (; v >= 0x80; v >>= 7) snappy.push_back(static_cast<char>(v | 0x80));
  snappy.push_back(static_cast<char>(v));
  snappy += std::string(
      "\x0c"
      "abcd",
      5);
  std::string out;
  absl::Status s = DecompressBlock("t", BlockName::Data(1),
                                   Compression::kSnappy, snappy, kBound, &out);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kDataLoss,
                          HasSubstr("data block 1: bad snappy data")));
  EXPECT_LT(out.capacity(), 1u << 20);

  // zstd: a real frame of 1 MiB whose content size is made to say 256 MiB.
  const std::string raw(1 << 20, 'z');
  std::string zstd(ZSTD_compressBound(raw.size()), '\0');
  zstd.resize(
      ZSTD_compress(zstd.data(), zstd.size(), raw.data(), raw.size(), 3));
  const uint8_t fhd = static_cast<uint8_t>(zstd[4]);
  ASSERT_EQ(fhd >> 6, 2) << "a 4-byte content size";
  ASSERT_NE(fhd & 0x20, 0) << "single segment: the size follows the header";
  for (int i = 0; i < 4; ++i) {
    zstd[5 + i] = static_cast<char>(kStated >> (8 * i));
  }
  ASSERT_EQ(ZSTD_getFrameContentSize(zstd.data(), zstd.size()), kStated);
  out.clear();
  out.shrink_to_fit();
  s = DecompressBlock("t", BlockName::Data(1), Compression::kZstd, zstd, kBound,
                      &out);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kDataLoss,
                          HasSubstr("data block 1: bad zstd frame")));
  EXPECT_LT(out.capacity(), 16u << 20);

  // Blocks that are what they state still decompress.
  std::string good;
  snappy::Compress(raw.data(), raw.size(), &good);
  ASSERT_OK(DecompressBlock("t", BlockName::Data(1), Compression::kSnappy, good,
                            kBound, &out));
  EXPECT_EQ(out, raw);
  good.assign(ZSTD_compressBound(raw.size()), '\0');
  good.resize(
      ZSTD_compress(good.data(), good.size(), raw.data(), raw.size(), 3));
  out.clear();
  ASSERT_OK(DecompressBlock("t", BlockName::Data(1), Compression::kZstd, good,
                            kBound, &out));
  EXPECT_EQ(out, raw);
}

}  // namespace
}  // namespace roost::testing
