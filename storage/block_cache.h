// BlockCache: a bounded, thread-safe LRU cache of decompressed blocks.
//
// Example:
//   BlockCache cache(64 << 20);
//   std::shared_ptr<const std::string> block = cache.Lookup(key);
//   if (block == nullptr) block = cache.Insert(key, Decompress(...));
//
// Entries are shared: a block stays alive while anyone holds it, even after
// the cache evicts it, so a reader never sees a block freed under it.
#ifndef ROOST_STORAGE_BLOCK_CACHE_H_
#define ROOST_STORAGE_BLOCK_CACHE_H_

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace roost {

class BlockCache {
 public:
  // Holds at most `capacity_bytes` of block contents (0: caches nothing).
  explicit BlockCache(size_t capacity_bytes) : capacity_(capacity_bytes) {}
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // The block cached under `key`, or null. Counts a hit or a miss.
  std::shared_ptr<const std::string> Lookup(uint64_t key);
  // Caches `block` under `key` (replacing any), evicting the least recently
  // used blocks beyond capacity, and returns it.
  std::shared_ptr<const std::string> Insert(uint64_t key, std::string block);

  uint64_t hits() const { return hits_.load(std::memory_order_relaxed); }
  uint64_t misses() const { return misses_.load(std::memory_order_relaxed); }
  size_t size_bytes() const;
  size_t capacity_bytes() const { return capacity_; }

 private:
  struct Entry {
    uint64_t key;
    std::shared_ptr<const std::string> block;
  };

  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<uint64_t, std::list<Entry>::iterator> map_;
  size_t size_ = 0;
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
};

}  // namespace roost

#endif  // ROOST_STORAGE_BLOCK_CACHE_H_
