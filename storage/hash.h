// Hashing for the table formats: XXH3 (inlined, so short keys hash in a few
// nanoseconds) and Lemire's multiply-shift range reduction.
#ifndef ROOST_STORAGE_HASH_H_
#define ROOST_STORAGE_HASH_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace roost {

// XXH3-64 of `data` with `seed`. Stable across versions of xxhash (the XXH3
// output is frozen since 0.8.0), so it may be stored in files.
inline uint64_t Hash64(std::string_view data, uint64_t seed) {
  return XXH3_64bits_withSeed(data.data(), data.size(), seed);
}

// The checksum of a region of a file: XXH3-64 with seed 0.
inline uint64_t Checksum64(const void* data, size_t size) {
  return XXH3_64bits(data, size);
}

// Maps a uniformly distributed 64-bit hash onto [0, n) without a division.
inline uint64_t FastRange64(uint64_t hash, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(hash) * n) >>
                               64);
}

// Incremental XXH3-64, for checksumming a region while it is written.
//
// Example:
//   StreamingChecksum sum;
//   sum.Update(a.data(), a.size());
//   sum.Update(b.data(), b.size());
//   uint64_t c = sum.Digest();  // == Checksum64 of a followed by b
class StreamingChecksum {
 public:
  StreamingChecksum() : state_(XXH3_createState()) {
    XXH3_64bits_reset(state_);
  }
  ~StreamingChecksum() { XXH3_freeState(state_); }
  StreamingChecksum(const StreamingChecksum&) = delete;
  StreamingChecksum& operator=(const StreamingChecksum&) = delete;

  void Update(const void* data, size_t size) {
    XXH3_64bits_update(state_, data, size);
  }
  uint64_t Digest() const { return XXH3_64bits_digest(state_); }

 private:
  XXH3_state_t* state_;
};

}  // namespace roost

#endif  // ROOST_STORAGE_HASH_H_
