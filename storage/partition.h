// The partition function of sharded tables: which of N shards a key belongs
// to. A public contract, documented byte for byte in
// docs/format/partitioning.md and pinned by the test vectors in
// docs/format/partition_vectors.tsv, which every client checks:
//
//   h     = XXH3-64 of the key's bytes, seeded with kPartitionSeed
//           (XXH3_64bits_withSeed; Python: xxhash.xxh3_64_intdigest)
//   shard = (h * N) >> 64, the high 64 bits of the 128-bit product
//
// Thread-safe (pure functions).
//
// Example:
//   const uint32_t shard = PartitionOf(key, manifest.shards);
//   if (shard != my_shard) return FailedPrecondition(...);
#ifndef ROOST_STORAGE_PARTITION_H_
#define ROOST_STORAGE_PARTITION_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace roost {

// The function's name as the MANIFEST records it ("partition.function").
inline constexpr std::string_view kPartitionFunction = "xxh3-64-multiply-shift";
// The XXH3 seed: the ASCII bytes of "roost" read as a big-endian number,
// 0x726f6f7374 = 491495846772. Under 2^53, so that every JSON reader holds
// it exactly; distinct from the cuckoo tables' seeds, so that a shard's keys
// still spread evenly over its cuckoo blocks.
inline constexpr uint64_t kPartitionSeed = 0x726f6f7374;
// The most shards a version may have (shard file names have four digits).
inline constexpr uint32_t kMaxShards = 1024;

// The shard of `key` among `num_shards` (>= 1): in [0, num_shards); 0 when
// num_shards is 1.
uint32_t PartitionOf(std::string_view key, uint32_t num_shards);

// "shard-0002-of-0004.sst": the file of shard `shard` of `num_shards` in a
// version directory.
std::string ShardFileName(uint32_t shard, uint32_t num_shards);

}  // namespace roost

#endif  // ROOST_STORAGE_PARTITION_H_
