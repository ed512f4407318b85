// Writes docs/format/partition_vectors.tsv, the partition function's test
// vectors (storage/partition.h), to stdout:
//
//   ./build/release/tests/storage/partition_vectors_gen >
//   docs/format/partition_vectors.tsv
//
// The keys are fixed here, so the file only changes if the function does,
// which it must not: partition_test checks the committed file against
// PartitionOf, and every client checks it against its own implementation.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "storage/hash.h"
#include "storage/partition.h"

namespace {

constexpr uint32_t kShardCounts[] = {1, 2, 3, 4, 7, 16, 64, 1000};

// Bytes 0, 1, 2, ... (mod 256) of `n` bytes, starting at `first`.
std::string Counting(size_t n, unsigned first) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((first + i) & 0xff);
  return s;
}

std::vector<std::string> Keys() {
  std::vector<std::string> keys = {
      "",
      std::string(1, '\0'),
      std::string(1, '\xff'),
      std::string(4, '\0'),
      std::string("\x00\x01\x02\x03\x04\x05\x06\x07", 8),
      "\xde\xad\xbe\xef",
      std::string("a\0b", 3),
      "\x80",
      "a",
      "ab",
      "abc",
      "user1",
      "user:42",
      "hello world",
      "The quick brown fox jumps over the lazy dog",
      "tab\there",
      "new\nline",
      "caf\xc3\xa9",  // "café" in UTF-8
  };
  for (int i = 0; i < 64; ++i) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "key%05d", i);
    keys.push_back(buf);
  }
  // Lengths around XXH3's internal boundaries (3, 8, 16, 128, 240 bytes)
  // and beyond its 1 KiB stripes.
  for (size_t n :
       {2,   3,   4,   8,   9,   16,  17,   31,   64,   127,  128,
        129, 200, 240, 241, 255, 256, 1000, 1024, 1025, 2048, 4096}) {
    keys.push_back(Counting(n, static_cast<unsigned>(n)));
  }
  keys.push_back(std::string(300, 'x'));
  return keys;
}

}  // namespace

int main() {
  std::printf(
      "# Test vectors of roost's partition function "
      "(docs/format/partitioning.md).\n"
      "# key_hex: the key's bytes, hex (empty: the empty key). xxh3_64: "
      "XXH3-64 of the key with seed %llu, 16 hex digits.\n"
      "# Then the key's shard for each shard count N in the header.\n"
      "# Written by tests/storage/partition_vectors_gen.cc; lines starting "
      "with # "
      "are comments.\n",
      static_cast<unsigned long long>(roost::kPartitionSeed));
  std::printf("key_hex\txxh3_64");
  for (uint32_t n : kShardCounts) std::printf("\t%u", n);
  std::printf("\n");
  for (const std::string& key : Keys()) {
    std::printf("%s\t%016llx", absl::BytesToHexString(key).c_str(),
                static_cast<unsigned long long>(
                    roost::Hash64(key, roost::kPartitionSeed)));
    for (uint32_t n : kShardCounts) {
      std::printf("\t%u", roost::PartitionOf(key, n));
    }
    std::printf("\n");
  }
  return 0;
}
