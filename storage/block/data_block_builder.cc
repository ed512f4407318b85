#include "storage/block/data_block_builder.h"

#include <algorithm>
#include <cmath>

#include "storage/coding.h"
#include "storage/hash.h"

namespace roost {

DataBlockBuilder::DataBlockBuilder(uint32_t restart_interval, bool hash_index,
                                   double hash_utilization)
    : restart_interval_(restart_interval),
      hash_index_(hash_index),
      hash_utilization_(hash_utilization) {
  Reset();
}

void DataBlockBuilder::Reset() {
  buffer_.clear();
  restarts_.clear();
  hashes_.clear();
  num_entries_ = 0;
  since_restart_ = 0;
  last_key_.clear();
  finished_ = false;
}

size_t DataBlockBuilder::SizeEstimate() const {
  return buffer_.size() + 4 * (restarts_.size() + 1);
}

void DataBlockBuilder::Add(std::string_view key, std::string_view value) {
  size_t shared = 0;
  if (since_restart_ == restart_interval_ || num_entries_ == 0) {
    restarts_.push_back(static_cast<uint32_t>(buffer_.size()));
    since_restart_ = 0;
  } else {
    const size_t limit = std::min(last_key_.size(), key.size());
    while (shared < limit && last_key_[shared] == key[shared]) ++shared;
  }
  if (hash_index_ && restarts_.size() <= kMaxHashRestarts) {
    hashes_.emplace_back(static_cast<uint32_t>(Hash64(key, kBlockHashSeed)),
                         static_cast<uint8_t>(restarts_.size() - 1));
  }
  PutVarint64(&buffer_, shared);
  PutVarint64(&buffer_, key.size() - shared);
  PutVarint64(&buffer_, value.size());
  buffer_.append(key.substr(shared));
  buffer_.append(value);
  last_key_.assign(key);
  ++since_restart_;
  ++num_entries_;
}

std::string_view DataBlockBuilder::Finish() {
  for (const uint32_t r : restarts_) PutFixed32(&buffer_, r);
  uint32_t packed = static_cast<uint32_t>(restarts_.size());
  if (hash_index_ && !restarts_.empty() &&
      restarts_.size() <= kMaxHashRestarts) {
    // Buckets: one byte each, at hash_utilization entries per bucket, and
    // never more than a fixed16 can count.
    const auto num_buckets = static_cast<uint32_t>(std::clamp<double>(
        std::ceil(num_entries_ / hash_utilization_), 1, 65535));
    std::string buckets(num_buckets, static_cast<char>(kHashEmpty));
    for (const auto& [hash, restart] : hashes_) {
      char& b = buckets[hash % num_buckets];
      if (static_cast<uint8_t>(b) == kHashEmpty) {
        b = static_cast<char>(restart);
      } else if (static_cast<uint8_t>(b) != restart) {
        b = static_cast<char>(kHashCollision);
      }
    }
    buffer_.append(buckets);
    char n[2];
    EncodeFixed16(n, static_cast<uint16_t>(num_buckets));
    buffer_.append(n, 2);
    packed |= kHasHashIndexFlag;
  }
  PutFixed32(&buffer_, packed);
  finished_ = true;
  return buffer_;
}

}  // namespace roost
