package roost

import (
	"math/bits"

	"github.com/zeebo/xxh3"
)

// PartitionSeed is the XXH3-64 seed of the partition function: the ASCII
// bytes of "roost" read as a big-endian number.
const PartitionSeed = 0x726f6f7374

// MaxShards is the most shards a table may have.
const MaxShards = 1024

// PartitionOf returns the shard, in [0, n), that key belongs to among n
// shards: the high 64 bits of XXH3-64(key, seed 0x726f6f7374) × n, the
// public contract of docs/format/partitioning.md, which every roost client
// and roost-load compute alike. n must be at least 1.
func PartitionOf(key []byte, n uint32) uint32 {
	hi, _ := bits.Mul64(xxh3.HashSeed(key, PartitionSeed), uint64(n))
	return uint32(hi)
}
