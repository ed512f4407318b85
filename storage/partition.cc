#include "storage/partition.h"

#include <fmt/format.h>

#include "storage/hash.h"

namespace roost {

uint32_t PartitionOf(std::string_view key, uint32_t num_shards) {
  // Lemire's multiply-shift reduction rather than a modulo: no division on
  // the lookup path, and every shard gets within one of hash-space/N of the
  // hash values. It is two lines in any language with 128-bit or
  // arbitrary-precision integers (Python's int).
  return static_cast<uint32_t>(
      FastRange64(Hash64(key, kPartitionSeed), num_shards));
}

std::string ShardFileName(uint32_t shard, uint32_t num_shards) {
  return fmt::format("shard-{:04d}-of-{:04d}.sst", shard, num_shards);
}

}  // namespace roost
