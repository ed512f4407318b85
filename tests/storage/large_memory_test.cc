// AllocateLarge and ReallocateLarge (storage/file.h): bytes kept across
// growing and shrinking, whether the memory is a mapping or from new.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "storage/file.h"

namespace roost {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Byte i of a pattern that differs from one page to the next.
uint8_t PatternByte(size_t i) {
  return static_cast<uint8_t>(i * 131 + i / 4096);
}

void Fill(void* p, size_t size) {
  auto* bytes = static_cast<uint8_t*>(p);
  for (size_t i = 0; i < size; ++i) bytes[i] = PatternByte(i);
}

// The index of the first byte off the pattern, or `size` when none is.
size_t FirstWrongByte(const void* p, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(p);
  for (size_t i = 0; i < size; ++i) {
    if (bytes[i] != PatternByte(i)) return i;
  }
  return size;
}

TEST(LargeMemoryTest, AMappingGrowsWithItsBytesAndTheNewPartIsWritable) {
  void* p = AllocateLarge(2 * kMiB);
  ASSERT_NE(p, nullptr);
  Fill(p, 2 * kMiB);
  for (size_t size = 4 * kMiB; size <= 64 * kMiB; size *= 2) {
    void* q = ReallocateLarge(p, size / 2, size);
    ASSERT_NE(q, nullptr) << size;
    EXPECT_EQ(FirstWrongByte(q, 2 * kMiB), 2 * kMiB) << size;
    // The grown part is zeroed, and writable to its last byte.
    auto* bytes = static_cast<uint8_t*>(q);
    EXPECT_EQ(bytes[size / 2], 0) << size;
    EXPECT_EQ(bytes[size - 1], 0) << size;
    bytes[size - 1] = 7;
    p = q;
  }
  FreeLarge(p, 64 * kMiB);
}

TEST(LargeMemoryTest, SmallMemoryGrowsIntoAMappingAndShrinksBack) {
  const size_t small = 100 * 1024;
  void* p = AllocateLarge(small);
  ASSERT_NE(p, nullptr);
  Fill(p, small);
  void* q = ReallocateLarge(p, small, 8 * kMiB);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(FirstWrongByte(q, small), small);
  Fill(q, 8 * kMiB);
  void* r = ReallocateLarge(q, 8 * kMiB, small);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(FirstWrongByte(r, small), small);
  FreeLarge(r, small);
}

TEST(LargeMemoryTest, AMappingShrinksWithItsFirstBytes) {
  void* p = AllocateLarge(16 * kMiB);
  ASSERT_NE(p, nullptr);
  Fill(p, 16 * kMiB);
  void* q = ReallocateLarge(p, 16 * kMiB, 4 * kMiB);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(FirstWrongByte(q, 4 * kMiB), 4 * kMiB);
  FreeLarge(q, 4 * kMiB);
}

TEST(LargeMemoryTest, NothingGrowsIntoNewMemory) {
  void* p = ReallocateLarge(nullptr, 0, 4 * kMiB);
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, 4 * kMiB);
  FreeLarge(p, 4 * kMiB);
}

TEST(LargeMemoryTest, AFailedGrowthLeavesTheMemoryAsItWas) {
  void* p = AllocateLarge(2 * kMiB);
  ASSERT_NE(p, nullptr);
  Fill(p, 2 * kMiB);
  // More than any address space holds.
  EXPECT_EQ(ReallocateLarge(p, 2 * kMiB, size_t{1} << 62), nullptr);
  EXPECT_EQ(FirstWrongByte(p, 2 * kMiB), 2 * kMiB);
  FreeLarge(p, 2 * kMiB);
}

}  // namespace
}  // namespace roost
