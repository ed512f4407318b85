// DataBlockBuilder: builds one block of sorted key/value entries with prefix
// compression, a restart array, and optionally a hash index.
//
// DataBlock contents (before compression), all integers little-endian:
//
//   entry*         shared: varint32      bytes shared with the previous key
//                  unshared: varint32    bytes of the key after those
//                  value_length: varint32
//                  key_delta: char[unshared]
//                  value: char[value_length]
//   restarts       fixed32[num_restarts]: offsets of the entries with
//                  shared == 0, one every restart_interval entries
//   hash index     (when flagged) uint8[num_buckets]: for the bucket a key
//                  hashes to, the restart interval holding it, or
//                  kHashEmpty / kHashCollision; then fixed16 num_buckets
//   packed         fixed32: num_restarts | has_hash_index << 31
//
// Example:
//   DataBlockBuilder b(/*restart_interval=*/16, /*hash_index=*/true);
//   b.Add("apple", "1");
//   b.Add("banana", "2");
//   std::string_view contents = b.Finish();
#ifndef ROOST_STORAGE_BLOCK_DATA_BLOCK_BUILDER_H_
#define ROOST_STORAGE_BLOCK_DATA_BLOCK_BUILDER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace roost {

// Hash index bucket markers, and the most restart intervals a bucket can name
// (0 to 253). A block with more restart intervals gets no hash index; its
// lookups binary-search the restarts.
inline constexpr uint8_t kHashEmpty = 255;
inline constexpr uint8_t kHashCollision = 254;
inline constexpr uint32_t kMaxHashRestarts = 254;
inline constexpr uint32_t kHasHashIndexFlag = 1u << 31;
// The seed of the hash a data block's hash index uses (XXH3-64, low 32 bits).
inline constexpr uint64_t kBlockHashSeed = 0x626c6f636b2d6878ULL;

class DataBlockBuilder {
 public:
  // REQUIRES: restart_interval >= 1, 0 < hash_utilization <= 1.
  DataBlockBuilder(uint32_t restart_interval, bool hash_index,
                   double hash_utilization = 0.75);

  // REQUIRES: `key` is greater than every key added since the last Reset().
  void Add(std::string_view key, std::string_view value);
  // Appends the restart array (and hash index) and returns the contents,
  // valid until Reset().
  std::string_view Finish();
  void Reset();

  // The size Finish() would return, give or take the hash index.
  size_t SizeEstimate() const;
  bool empty() const { return num_entries_ == 0; }
  std::string_view last_key() const { return last_key_; }

 private:
  const uint32_t restart_interval_;
  const bool hash_index_;
  const double hash_utilization_;
  std::string buffer_;
  std::vector<uint32_t> restarts_;
  std::vector<std::pair<uint32_t, uint8_t>> hashes_;  // key hash, restart
  uint32_t num_entries_ = 0;
  uint32_t since_restart_ = 0;
  std::string last_key_;
  bool finished_ = false;
};

}  // namespace roost

#endif  // ROOST_STORAGE_BLOCK_DATA_BLOCK_BUILDER_H_
