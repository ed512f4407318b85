// TableIndex (server/table_index.h): lookups by name that take no lock while
// one writer adds and removes tables. Under AddressSanitizer a reader that
// could touch a freed entry or map fails the run.

#include "server/table_index.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace roost::testing {
namespace {

struct Entry {
  explicit Entry(std::string n, std::atomic<int>* freed = nullptr)
      : name(std::move(n)), freed(freed) {}
  ~Entry() {
    if (freed != nullptr) ++*freed;
  }
  const std::string name;
  std::atomic<int> touched{0};
  std::atomic<int>* const freed;
};
using Index = TableIndex<Entry>;

std::string Name(int i) { return std::string("t").append(std::to_string(i)); }

bool Add(Index& index, const std::string& name) {
  auto entry = std::make_unique<Entry>(name);
  return index.Add(entry);
}

TEST(TableIndexTest, FindsWhatWasAddedAndNotWhatWasRemoved) {
  Index index(8);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(Add(index, Name(i)));
  EXPECT_FALSE(Add(index, "one too many"));
  EXPECT_EQ(index.size(), 8u);
  {
    auto reader = index.Read();
    for (int i = 0; i < 8; ++i) {
      Entry* e = reader.Find(Name(i));
      ASSERT_NE(e, nullptr);
      EXPECT_EQ(e->name, Name(i));
    }
    EXPECT_EQ(reader.Find("t8"), nullptr);
    EXPECT_EQ(reader.Find(""), nullptr);
  }
  index.Remove("t3");
  EXPECT_EQ(index.Read().Find("t3"), nullptr);
  EXPECT_NE(index.Read().Find("t4"), nullptr);
  ASSERT_TRUE(Add(index, "t3"));  // the room is free again
  EXPECT_NE(index.Read().Find("t3"), nullptr);
  EXPECT_EQ(index.Reclaim(), 0);
}

TEST(TableIndexTest, ARemovedEntryLivesWhileAReaderHoldsIt) {
  Index index(4);
  ASSERT_TRUE(Add(index, "t"));
  auto reader = index.Read();
  Entry* e = reader.Find("t");
  ASSERT_NE(e, nullptr);
  index.Remove("t");
  EXPECT_GT(index.Reclaim(), 0);  // the reader's generation waits
  e->touched++;                   // still valid (ASan would say otherwise)
  EXPECT_EQ(index.Read().Find("t"), nullptr);
}

// The registry takes a table out of reach before it winds its entry down,
// so that no request finds a table without versions: the entry must outlive
// Remove() until the next Reclaim(), even with no reader.
TEST(TableIndexTest, ARemovedEntryIsFreedByReclaimNotByRemove) {
  Index index(4);
  std::atomic<int> freed{0};
  auto entry = std::make_unique<Entry>("t", &freed);
  Entry* e = entry.get();
  ASSERT_TRUE(index.Add(entry));
  index.Remove("t");
  EXPECT_EQ(index.Read().Find("t"), nullptr);
  EXPECT_EQ(freed.load(), 0);
  e->touched++;  // still valid (ASan would say otherwise)
  EXPECT_EQ(index.Reclaim(), 0);
  EXPECT_EQ(freed.load(), 1);
}

// The same after later changes: each publishes a generation, and may
// reuse the slot of the one the entry was retired into.
TEST(TableIndexTest, ARemovedEntryOutlivesLaterChangesUntilReclaim) {
  Index index(8);
  std::atomic<int> freed{0};
  auto entry = std::make_unique<Entry>("t", &freed);
  Entry* e = entry.get();
  ASSERT_TRUE(index.Add(entry));
  index.Remove("t");
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(Add(index, Name(i)));
  index.Remove(Name(0));
  EXPECT_EQ(freed.load(), 0);
  e->touched++;  // still valid (ASan would say otherwise)
  EXPECT_EQ(index.Reclaim(), 0);
  EXPECT_EQ(freed.load(), 1);
}

// Tables coming and going far more often than capacity, a generation
// published for each change, while readers look names up without pause: every
// entry found is the one named, and alive.
TEST(TableIndexTest, ReadersNeverSeeAFreedEntryWhileTablesComeAndGo) {
  Index index(64);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> found{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&, r] {
      for (int i = 0; !stop.load(); ++i) {
        const std::string name = Name((i * 7 + r) % 200);
        auto reader = index.Read();
        if (Entry* e = reader.Find(name)) {
          if (e->name != name) std::abort();
          e->touched.fetch_add(1, std::memory_order_relaxed);
          found.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  }
  // Until the readers have found plenty, so that the writer does not finish
  // before they start.
  for (int round = 0;
       round < 20000 || (found.load() < 100000 && round < 50000000); ++round) {
    const std::string name = Name(round % 200);
    if (index.Find(name) != nullptr) {
      index.Remove(name);
    } else if (index.size() < 64) {
      ASSERT_TRUE(Add(index, name));
    }
    if (round % 16 == 0) index.Reclaim();
  }
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_GT(found.load(), 0u);
  while (index.Reclaim() > 0) {
  }
}

}  // namespace
}  // namespace roost::testing
