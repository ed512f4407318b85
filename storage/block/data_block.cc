#include "storage/block/data_block.h"

#include <algorithm>
#include <cstdint>

#include "storage/block/data_block_builder.h"
#include "storage/coding.h"
#include "storage/format.h"
#include "storage/hash.h"

namespace roost {
namespace {

// Get's prefetches (see ScanInterval and the binary search): at most
// this many bytes of a restart interval, and the restart keys of blocks with
// at most this many restarts (a 4 KiB block of 16-byte pairs has 14).
constexpr uint32_t kPrefetchEntryBytes = 512;
constexpr uint32_t kPrefetchRestartsMax = 32;

// Decodes one entry header at p: shared, unshared and value lengths. Returns
// the start of the key delta, or nullptr if it does not fit before `limit`.
inline const char* DecodeEntry(const char* p, const char* limit,
                               uint32_t* shared, uint32_t* unshared,
                               uint32_t* value_length) {
  if (limit - p < 3) return nullptr;
  *shared = static_cast<uint8_t>(p[0]);
  *unshared = static_cast<uint8_t>(p[1]);
  *value_length = static_cast<uint8_t>(p[2]);
  if ((*shared | *unshared | *value_length) < 128) {
    p += 3;  // the common case: three one-byte varints
  } else {
    uint64_t s, u, v;
    if ((p = DecodeVarint64(p, limit, &s)) == nullptr) return nullptr;
    if ((p = DecodeVarint64(p, limit, &u)) == nullptr) return nullptr;
    if ((p = DecodeVarint64(p, limit, &v)) == nullptr) return nullptr;
    if (s > UINT32_MAX || u > UINT32_MAX || v > UINT32_MAX) return nullptr;
    *shared = static_cast<uint32_t>(s);
    *unshared = static_cast<uint32_t>(u);
    *value_length = static_cast<uint32_t>(v);
  }
  if (static_cast<uint64_t>(*unshared) + *value_length >
      static_cast<uint64_t>(limit - p)) {
    return nullptr;
  }
  return p;
}

}  // namespace

absl::StatusOr<DataBlock> DataBlock::Parse(std::string_view path,
                                           std::string_view contents) {
  if (contents.size() < 4) return CorruptionError(path, "block too short");
  DataBlock b;
  b.data_ = contents.data();
  const uint32_t packed = DecodeFixed32(contents.data() + contents.size() - 4);
  uint64_t end = contents.size() - 4;
  if (packed & kHasHashIndexFlag) {
    if (end < 2) return CorruptionError(path, "bad block hash index");
    b.num_buckets_ = DecodeFixed16(contents.data() + end - 2);
    end -= 2;
    if (b.num_buckets_ == 0 || b.num_buckets_ > end) {
      return CorruptionError(path, "bad block hash index");
    }
    end -= b.num_buckets_;
    b.buckets_ = reinterpret_cast<const uint8_t*>(contents.data() + end);
  }
  b.num_restarts_ = packed & ~kHasHashIndexFlag;
  if (b.num_restarts_ > end / 4) {
    return CorruptionError(path, "bad block restart array");
  }
  end -= 4 * static_cast<uint64_t>(b.num_restarts_);
  b.restarts_ = contents.data() + end;
  b.entries_size_ = static_cast<uint32_t>(end);
  // Only an empty block (an empty table's index) has no restart.
  if (b.num_restarts_ == 0 ? end != 0 || b.buckets_ != nullptr
                           : b.RestartOffset(0) != 0) {
    return CorruptionError(path, "bad block restart array");
  }
  return b;
}

uint32_t DataBlock::RestartOffset(uint32_t i) const {
  return DecodeFixed32(restarts_ + 4 * i);
}

DataBlock::Result DataBlock::RestartEntry(uint32_t i, std::string_view* key,
                                          std::string_view* value) const {
  const uint32_t offset = RestartOffset(i);
  if (offset >= entries_size_) return kCorrupt;
  uint32_t shared, unshared, value_length;
  const char* p = DecodeEntry(data_ + offset, data_ + entries_size_, &shared,
                              &unshared, &value_length);
  if (p == nullptr || shared != 0) return kCorrupt;
  *key = std::string_view(p, unshared);
  *value = std::string_view(p + unshared, value_length);
  return kFound;
}

DataBlock::Result DataBlock::FindRestart(std::string_view key,
                                         uint32_t* index) const {
  // The last restart whose key is <= key.
  uint32_t lo = 0, hi = num_restarts_;  // answer in [lo, hi)
  while (hi - lo > 1) {
    const uint32_t mid = lo + (hi - lo) / 2;
    std::string_view k, v;
    if (RestartEntry(mid, &k, &v) != kFound) return kCorrupt;
    if (k <= key) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  *index = lo;
  return kFound;
}

DataBlock::Result DataBlock::ScanFor(std::string_view key, uint32_t offset,
                                     uint32_t limit,
                                     std::string_view* value) const {
  if (offset >= limit || limit > entries_size_) return kCorrupt;
  // Keys are compared without being rebuilt (no copy, no allocation): the
  // scan keeps the length of the current key and `match`, the length of its
  // common prefix with `key`, which it is below. An entry sharing more than
  // `match` bytes with the current key is below `key` too, at the same
  // byte; one sharing at most `match` bytes starts with `key`'s first
  // `shared` bytes, and its delta is compared with the rest of `key`.
  size_t current_length = 0;
  size_t match = 0;
  const char* p = data_ + offset;
  const char* end = data_ + limit;
  while (p < end) {
    uint32_t shared, unshared, value_length;
    p = DecodeEntry(p, end, &shared, &unshared, &value_length);
    if (p == nullptr || shared > current_length) return kCorrupt;
    if (shared <= match) {
      const std::string_view delta(p, unshared);
      const std::string_view rest = key.substr(shared);
      size_t same = 0;
      const size_t most = std::min(delta.size(), rest.size());
      while (same < most && delta[same] == rest[same]) ++same;
      if (same == delta.size() && same == rest.size()) {
        *value = std::string_view(p + unshared, value_length);
        return kFound;
      }
      if (same < delta.size() &&
          (same == rest.size() || static_cast<uint8_t>(delta[same]) >
                                      static_cast<uint8_t>(rest[same]))) {
        return kNotFound;  // past `key`
      }
      match = shared + same;
    }
    current_length = shared + static_cast<size_t>(unshared);
    p += unshared + value_length;
  }
  return kNotFound;
}

DataBlock::Result DataBlock::ScanInterval(std::string_view key, uint32_t i,
                                          std::string_view* value) const {
  const uint32_t offset = RestartOffset(i);
  const uint32_t limit =
      i + 1 < num_restarts_ ? RestartOffset(i + 1) : entries_size_;
  // The scan reads the interval's lines in turn, each one otherwise waiting
  // for the one before it: ask for them (up to kPrefetchEntryBytes) at once.
  // Bad bounds are left to ScanFor, which reports them.
  if (offset < limit && limit <= entries_size_) {
    const uintptr_t first = reinterpret_cast<uintptr_t>(data_ + offset) &
                            ~uintptr_t{kCacheLineSize - 1};
    const uintptr_t last = reinterpret_cast<uintptr_t>(
        data_ + std::min(limit, offset + kPrefetchEntryBytes) - 1);
    for (uintptr_t line = first; line <= last; line += kCacheLineSize) {
      __builtin_prefetch(reinterpret_cast<const void*>(line));
    }
  }
  return ScanFor(key, offset, limit, value);
}

DataBlock::Result DataBlock::Get(std::string_view key, bool use_hash,
                                 std::string_view* value) const {
  if (num_restarts_ == 0) return kNotFound;
  uint32_t restart;
  if (use_hash && buckets_ != nullptr) {
    const uint8_t b =
        buckets_[static_cast<uint32_t>(Hash64(key, kBlockHashSeed)) %
                 num_buckets_];
    if (b == kHashEmpty) return kNotFound;
    if (b != kHashCollision) {
      if (b >= num_restarts_) return kCorrupt;
      return ScanInterval(key, b, value);
    }
  }
  // A binary search of the restart keys (no hash index, or a collision in
  // it). Each probe reads a line of its own, which would wait for the one
  // before it: ask for all the restart keys' lines at once instead, in a
  // block of a few dozen restarts at most (the restart array is in cache).
  if (num_restarts_ <= kPrefetchRestartsMax) {
    for (uint32_t i = 0; i < num_restarts_; ++i) {
      const uint32_t offset = RestartOffset(i);
      if (offset < entries_size_) __builtin_prefetch(data_ + offset);
    }
  }
  const Result r = FindRestart(key, &restart);
  if (r != kFound) return r;
  return ScanInterval(key, restart, value);
}

void DataBlock::Iterator::SeekToRestart(uint32_t i) {
  key_.clear();
  if (block_->num_restarts_ == 0) {
    next_ = 0;  // entries_size_ is 0 too: nothing to parse
    valid_ = false;
    return;
  }
  next_ = block_->RestartOffset(i);
  valid_ = false;
  if (next_ >= block_->entries_size_) corrupt_ = true;
}

bool DataBlock::Iterator::ParseNext(bool check_order) {
  valid_ = false;
  if (corrupt_ || next_ >= block_->entries_size_) return false;
  uint32_t shared, unshared, value_length;
  const char* p =
      DecodeEntry(block_->data_ + next_, block_->data_ + block_->entries_size_,
                  &shared, &unshared, &value_length);
  // Keys must strictly increase: the new key shares `shared` bytes with the
  // current one, so its delta must sort after the current key's rest.
  if (p == nullptr || shared > key_.size() ||
      (check_order && std::string_view(p, unshared) <=
                          std::string_view(key_).substr(shared))) {
    corrupt_ = true;
    return false;
  }
  key_.resize(shared);
  key_.append(p, unshared);
  value_ = std::string_view(p + unshared, value_length);
  next_ = static_cast<uint32_t>(p + unshared + value_length - block_->data_);
  valid_ = true;
  return true;
}

void DataBlock::Iterator::SeekToFirst() {
  corrupt_ = false;
  SeekToRestart(0);
  ParseNext();
}

void DataBlock::Iterator::Seek(std::string_view target) {
  corrupt_ = false;
  valid_ = false;
  if (block_->num_restarts_ == 0) return;
  uint32_t restart;
  if (block_->FindRestart(target, &restart) != kFound) {
    corrupt_ = true;
    valid_ = false;
    return;
  }
  SeekToRestart(restart);
  while (ParseNext() && std::string_view(key_) < target) {
  }
}

void DataBlock::Iterator::Next() { ParseNext(/*check_order=*/true); }

}  // namespace roost
