// BlockCache: the cache of decompressed data blocks that every open block
// table of a process shares (LevelDB's Options::block_cache): bounded,
// sharded, least recently used out first.
//
// Example:
//   auto cache = std::make_shared<BlockCache>(256 << 20);  // once
//   const uint64_t table = cache->NewId();                 // per open table
//   std::shared_ptr<const std::string> block = cache->Lookup(table, 7);
//   if (block == nullptr) block = cache->Insert(table, 7, Decompress(...));
//
// A block is charged its decompressed size. The capacity is split evenly
// over the shards, each an LRU list and a hash map behind a mutex of its
// own, and a block's shard is chosen by the hash of (table, block), so that
// threads looking up different blocks, of one table or many, seldom wait
// for one another. A cache of under 16 MiB has fewer shards (one per whole
// MiB, rounded down to a power of two, at least one), so that a shard still
// holds blocks far larger than the usual 4 KiB.
//
// Entries are shared: a lookup holds (pins) the block it uses, which stays
// alive while anyone holds it, even once the cache has evicted it, so that
// a reader never sees a block freed under it. The capacity bounds what the
// cache keeps; blocks pinned by lookups in flight and evicted meanwhile
// come on top. The blocks of a table that is closed are not looked for
// again and leave as the least recently used.
//
// Thread-safety: every method may be called from any thread.
#ifndef ROOST_STORAGE_BLOCK_BLOCK_CACHE_H_
#define ROOST_STORAGE_BLOCK_BLOCK_CACHE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace roost {

class BlockCache {
 public:
  // Keeps at most `capacity_bytes` of block contents (0: keeps nothing).
  explicit BlockCache(size_t capacity_bytes);
  ~BlockCache();
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // A number no other table of this cache has had, for a table to key its
  // blocks by (as LevelDB's Cache::NewId).
  uint64_t NewId() { return next_id_.fetch_add(1, std::memory_order_relaxed); }

  // The block cached as `table`'s block `block`, or null. Counts a hit or a
  // miss.
  std::shared_ptr<const std::string> Lookup(uint64_t table, uint64_t block);
  // Caches `contents` as `table`'s block `block`, evicting the least
  // recently used blocks of its shard beyond the shard's capacity, and
  // returns the block cached: `contents`, or the block another thread
  // cached under the same key meanwhile. A block larger than its shard's
  // capacity is returned and not kept.
  std::shared_ptr<const std::string> Insert(uint64_t table, uint64_t block,
                                            std::string contents);

  size_t capacity_bytes() const { return capacity_; }
  // Bytes of block contents kept now.
  size_t usage_bytes() const;
  uint64_t hits() const;
  uint64_t misses() const;
  size_t num_shards() const { return num_shards_; }

 private:
  struct Shard;
  Shard& ShardOf(uint64_t table, uint64_t block) const;

  const size_t capacity_;
  const size_t num_shards_;  // a power of two
  std::unique_ptr<Shard[]> shards_;
  std::atomic<uint64_t> next_id_{1};
};

// The capacity of the cache a block table makes for itself when it is
// opened without one (TableReadOptions::block_cache): 8 MiB, as LevelDB's.
inline constexpr size_t kDefaultBlockCacheBytes = size_t{8} << 20;

}  // namespace roost

#endif  // ROOST_STORAGE_BLOCK_BLOCK_CACHE_H_
