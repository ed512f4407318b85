#include "storage/block/block_cache.h"

#include <algorithm>
#include <bit>
#include <list>
#include <mutex>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace roost {
namespace {

constexpr size_t kMaxShards = 16;
// A cache gets one shard per this many bytes of capacity, up to kMaxShards.
constexpr size_t kMinShardBytes = size_t{1} << 20;

size_t ShardsFor(size_t capacity) {
  return std::bit_floor(
      std::clamp<size_t>(capacity / kMinShardBytes, 1, kMaxShards));
}

}  // namespace

// One shard: its blocks in an LRU list, found through a hash map. Aligned
// so that two shards' locks and counters never share a cache line.
struct alignas(64) BlockCache::Shard {
  using Key = std::pair<uint64_t, uint64_t>;  // table, block
  struct Entry {
    Key key;
    std::shared_ptr<const std::string> block;
  };

  std::mutex mu;
  size_t capacity = 0;
  std::list<Entry> lru;  // most recently used first; guarded by mu
  absl::flat_hash_map<Key, std::list<Entry>::iterator> map;  // guarded by mu
  // Written under mu, read by the getters without it.
  std::atomic<size_t> usage{0};
  std::atomic<uint64_t> hits{0};
  std::atomic<uint64_t> misses{0};
};

BlockCache::BlockCache(size_t capacity_bytes)
    : capacity_(capacity_bytes),
      num_shards_(ShardsFor(capacity_bytes)),
      shards_(new Shard[num_shards_]) {
  for (size_t i = 0; i < num_shards_; ++i) {
    shards_[i].capacity =
        capacity_ / num_shards_ + (i < capacity_ % num_shards_ ? 1 : 0);
  }
}

BlockCache::~BlockCache() = default;

BlockCache::Shard& BlockCache::ShardOf(uint64_t table, uint64_t block) const {
  // A multiply-xorshift of both numbers; the top bits pick the shard, so
  // that consecutive blocks of one table spread over all of them.
  uint64_t h = (table * 0x9e3779b97f4a7c15ull) ^ block;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 31;
  return shards_[num_shards_ == 1 ? 0
                                  : h >> (64 - std::countr_zero(num_shards_))];
}

std::shared_ptr<const std::string> BlockCache::Lookup(uint64_t table,
                                                      uint64_t block) {
  Shard& s = ShardOf(table, block);
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.map.find(Shard::Key(table, block));
  if (it == s.map.end()) {
    s.misses.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  s.hits.fetch_add(1, std::memory_order_relaxed);
  s.lru.splice(s.lru.begin(), s.lru, it->second);
  return it->second->block;
}

std::shared_ptr<const std::string> BlockCache::Insert(uint64_t table,
                                                      uint64_t block,
                                                      std::string contents) {
  auto shared = std::make_shared<const std::string>(std::move(contents));
  const Shard::Key key(table, block);
  Shard& s = ShardOf(table, block);
  std::lock_guard<std::mutex> lock(s.mu);
  if (auto it = s.map.find(key); it != s.map.end()) {
    s.lru.splice(s.lru.begin(), s.lru, it->second);
    return it->second->block;
  }
  if (shared->size() > s.capacity) return shared;  // too big to keep
  s.lru.push_front(Shard::Entry{key, shared});
  s.map.emplace(key, s.lru.begin());
  size_t usage = s.usage.load(std::memory_order_relaxed) + shared->size();
  while (usage > s.capacity) {
    usage -= s.lru.back().block->size();
    s.map.erase(s.lru.back().key);
    s.lru.pop_back();
  }
  s.usage.store(usage, std::memory_order_relaxed);
  return shared;
}

size_t BlockCache::usage_bytes() const {
  size_t sum = 0;
  for (size_t i = 0; i < num_shards_; ++i) {
    sum += shards_[i].usage.load(std::memory_order_relaxed);
  }
  return sum;
}

uint64_t BlockCache::hits() const {
  uint64_t sum = 0;
  for (size_t i = 0; i < num_shards_; ++i) {
    sum += shards_[i].hits.load(std::memory_order_relaxed);
  }
  return sum;
}

uint64_t BlockCache::misses() const {
  uint64_t sum = 0;
  for (size_t i = 0; i < num_shards_; ++i) {
    sum += shards_[i].misses.load(std::memory_order_relaxed);
  }
  return sum;
}

}  // namespace roost
