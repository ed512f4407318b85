#include "storage/block_cache.h"

namespace roost {

std::shared_ptr<const std::string> BlockCache::Lookup(uint64_t key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = map_.find(key);
  if (it == map_.end()) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  hits_.fetch_add(1, std::memory_order_relaxed);
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->block;
}

std::shared_ptr<const std::string> BlockCache::Insert(uint64_t key,
                                                      std::string block) {
  auto shared = std::make_shared<const std::string>(std::move(block));
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = map_.find(key); it != map_.end()) {
    size_ -= it->second->block->size();
    lru_.erase(it->second);
    map_.erase(it);
  }
  if (shared->size() > capacity_) return shared;  // too big to keep
  lru_.push_front(Entry{key, shared});
  map_[key] = lru_.begin();
  size_ += shared->size();
  while (size_ > capacity_) {
    size_ -= lru_.back().block->size();
    map_.erase(lru_.back().key);
    lru_.pop_back();
  }
  return shared;
}

size_t BlockCache::size_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return size_;
}

}  // namespace roost
