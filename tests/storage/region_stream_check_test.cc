// RegionStreamCheck (storage/cuckoo/region_stream_check.h): a cuckoo table's
// region checksums checked as its bytes go by, in pieces of any size; anything
// else (a damaged byte, a block table, a file cut short or appended to) does
// not pass, so that its open checks it in full.

#include "storage/cuckoo/region_stream_check.h"

#include <gtest/gtest.h>

#include <string>

#include "storage/block/block_table_builder.h"
#include "storage/cuckoo/cuckoo_table.h"
#include "storage/cuckoo/cuckoo_table_builder.h"
#include "tests/harness/test_util.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

bool PassesInPieces(const std::string& file, size_t piece) {
  RegionStreamCheck check;
  for (size_t at = 0; at < file.size(); at += piece) {
    check.Update(std::string_view(file).substr(at, piece));
  }
  return check.Passed();
}

class RegionStreamCheckTest : public ::testing::Test {
 protected:
  // A cuckoo table of `n` keys with values of `value_size` bytes (0: of
  // every length, which makes a heap).
  std::string Cuckoo(int n, size_t value_size) {
    const std::string path = dir_.File(StrCat("c", n, "-", value_size));
    auto builder = CuckooTableBuilder::Create(path, {});
    EXPECT_TRUE(builder.ok());
    for (int i = 0; i < n; ++i) {
      const std::string key = StrCat("key", 100000 + i);
      const std::string value = value_size
                                    ? std::string(value_size, 'a' + i % 26)
                                    : std::string(i % 40, 'v');
      EXPECT_TRUE((*builder)->Add(key, value).ok());
    }
    EXPECT_TRUE((*builder)->Finish().ok());
    return ReadFile(path);
  }

  ScratchDir dir_;
};

TEST_F(RegionStreamCheckTest, AWholeCuckooTablePassesInPiecesOfAnySize) {
  for (const size_t value_size : {size_t{8}, size_t{0}}) {
    const std::string file = Cuckoo(3000, value_size);
    ASSERT_TRUE(
        CuckooTable::Open(dir_.File(StrCat("c3000-", value_size)), {}).ok());
    for (const size_t piece :
         {size_t{1}, size_t{7}, size_t{320}, size_t{4096}, file.size()}) {
      EXPECT_TRUE(PassesInPieces(file, piece))
          << "value size " << value_size << ", pieces of " << piece;
    }
  }
  // An empty table: empty regions, checked as they are reached.
  EXPECT_TRUE(PassesInPieces(Cuckoo(0, 8), 5));
}

TEST_F(RegionStreamCheckTest, ADamagedByteAnywhereFails) {
  for (const size_t value_size : {size_t{8}, size_t{0}}) {
    const std::string file = Cuckoo(2000, value_size);
    // The header, the start, middle and end of the file (the last region).
    for (const size_t at :
         {size_t{10}, size_t{320}, file.size() / 2, file.size() - 1}) {
      std::string damaged = file;
      damaged[at] ^= 0x01;
      EXPECT_FALSE(PassesInPieces(damaged, 4096))
          << "value size " << value_size << ", byte " << at;
    }
  }
}

TEST_F(RegionStreamCheckTest, AFileCutShortOrAppendedToFails) {
  const std::string file = Cuckoo(2000, 8);
  EXPECT_FALSE(PassesInPieces(file.substr(0, file.size() - 1), 4096));
  EXPECT_FALSE(PassesInPieces(file.substr(0, 100), 7));
  EXPECT_FALSE(PassesInPieces(file + "x", 4096));
  EXPECT_FALSE(PassesInPieces("", 1));
}

TEST_F(RegionStreamCheckTest, ABlockTableIsLeftToItsOpen) {
  const std::string path = dir_.File("b.sst");
  auto builder = BlockTableBuilder::Create(path, {});
  ASSERT_TRUE(builder.ok());
  for (int i = 0; i < 2000; ++i) {
    ASSERT_TRUE((*builder)->Add(StrCat("key", 100000 + i), "value").ok());
  }
  ASSERT_TRUE((*builder)->Finish().ok());
  EXPECT_FALSE(PassesInPieces(ReadFile(path), 4096));
}

}  // namespace
}  // namespace roost::testing
