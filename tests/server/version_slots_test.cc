// VersionSlots under contention: readers pin versions while one writer
// publishes new ones and reclaims old ones as fast as it can. A version must
// never be freed while a reader holds it (ASan would report the read), a
// reader must always see a whole version, and every version must be freed
// once its readers are gone.
#include "server/version_slots.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace roost {
namespace {

// A version that knows whether it is alive and counts its destruction.
struct Version {
  explicit Version(uint64_t n, std::atomic<int>* freed)
      : number(n), check(~n), freed(freed) {}
  ~Version() {
    check = 0;  // a reader of a freed version would see this (or ASan would)
    freed->fetch_add(1);
  }
  uint64_t number;
  uint64_t check;
  std::atomic<int>* freed;
};

TEST(VersionSlotsTest, EmptyUntilPublished) {
  VersionSlots<Version> slots;
  EXPECT_FALSE(slots.Acquire());
  EXPECT_EQ(slots.current(), nullptr);
  std::atomic<int> freed{0};
  ASSERT_TRUE(slots.Publish(std::make_shared<const Version>(1, &freed)));
  auto pin = slots.Acquire();
  ASSERT_TRUE(pin);
  EXPECT_EQ(pin->number, 1u);
  slots.Clear();
  EXPECT_FALSE(slots.Acquire());
  EXPECT_TRUE(pin);  // a pin taken before Clear() still holds its version
  EXPECT_EQ(pin->number, 1u);
}

TEST(VersionSlotsTest, OldVersionLivesUntilItsLastPinGoes) {
  VersionSlots<Version> slots;
  std::atomic<int> freed{0};
  ASSERT_TRUE(slots.Publish(std::make_shared<const Version>(1, &freed)));
  auto pin = slots.Acquire();
  ASSERT_TRUE(slots.Publish(std::make_shared<const Version>(2, &freed)));
  EXPECT_EQ(slots.Acquire()->number, 2u);
  EXPECT_EQ(slots.Reclaim(), 1);  // v1 is still pinned
  EXPECT_EQ(freed.load(), 0);
  EXPECT_EQ(pin->number, 1u);
  pin = {};
  EXPECT_EQ(slots.Reclaim(), 0);
  EXPECT_EQ(freed.load(), 1);
}

TEST(VersionSlotsTest, PublishFailsWhileEveryOtherSlotIsPinned) {
  VersionSlots<Version> slots;
  std::atomic<int> freed{0};
  std::vector<VersionSlots<Version>::Pin> pins;
  // Four slots: three old versions pinned plus the current one fill them.
  for (uint64_t v = 1; v <= 4; ++v) {
    ASSERT_TRUE(slots.Publish(std::make_shared<const Version>(v, &freed)));
    if (v < 4) pins.push_back(slots.Acquire());
  }
  EXPECT_FALSE(slots.Publish(std::make_shared<const Version>(5, &freed)));
  EXPECT_EQ(slots.Acquire()->number, 4u);  // the current one still serves
  pins.pop_back();
  EXPECT_TRUE(slots.Publish(std::make_shared<const Version>(5, &freed)));
  EXPECT_EQ(slots.Acquire()->number, 5u);
}

TEST(VersionSlotsTest, ReadersNeverSeeAFreedOrTornVersion) {
  VersionSlots<Version> slots;
  std::atomic<int> freed{0};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> bad{0};
  std::atomic<uint64_t> reads{0};
  ASSERT_TRUE(slots.Publish(std::make_shared<const Version>(1, &freed)));

  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      uint64_t last = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        auto pin = slots.Acquire();
        if (!pin) {
          bad.fetch_add(1);
          continue;
        }
        const uint64_t n = pin->number;
        // Hold it a little, as a request does, then look again.
        for (int spin = 0; spin < 50; ++spin) {
          if (pin->check != ~n) bad.fetch_add(1);
        }
        if (n < last) bad.fetch_add(1);  // versions only move forward here
        last = n;
        reads.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  uint64_t published = 1;
  int created = 1;  // a version whose Publish fails is freed at once
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  while (std::chrono::steady_clock::now() < deadline || published < 1000) {
    ++created;
    if (slots.Publish(std::make_shared<const Version>(published + 1, &freed))) {
      ++published;
    }
    slots.Reclaim();
  }
  stop.store(true);
  for (auto& t : readers) t.join();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_GT(reads.load(), 0u);
  // Every version but the current one is freed once nobody reads it.
  EXPECT_EQ(slots.Reclaim(), 0);
  EXPECT_EQ(freed.load(), created - 1);
}

}  // namespace
}  // namespace roost
