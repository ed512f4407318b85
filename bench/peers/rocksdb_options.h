// The RocksDB configurations roost is measured against, written once: the
// suite's peers (bench/peers/rocksdb_*.cc) and the component benchmarks
// (bench/cuckoo_bench.cc, bench/block_bench.cc) all take them from here, so
// that "RocksDB's CuckooTable" or "RocksDB's block-based table" means one
// thing in every report.
//
// Example:
//   rocksdb::Options options =
//       RocksBlockOptions(/*hash_index=*/true, rocksdb::NewLRUCache(bytes));
//   ... SstFileWriter(EnvOptions(), options), DB::Open(options, ...) ...
#ifndef ROOST_BENCH_PEERS_ROCKSDB_OPTIONS_H_
#define ROOST_BENCH_PEERS_ROCKSDB_OPTIONS_H_

#include <rocksdb/cache.h>
#include <rocksdb/options.h>

#include <memory>

namespace roost::bench {

// Creates the DB if missing; no compression, no automatic compaction, every
// file kept open.
rocksdb::Options BaseRocksOptions();

// BaseRocksOptions with RocksDB's CuckooTable in its default options
// (hash_table_ratio 0.9), and the mmap reads CuckooTable requires.
rocksdb::Options RocksCuckooOptions();

// BaseRocksOptions with a block-based table: 4 KiB blocks, data blocks
// searched by binary search or, with `hash_index`, by binary search and
// their hash index (kDataBlockBinaryAndHash, util ratio 0.75), and `cache`
// as the block cache. With `bloom_bits_per_key` > 0, a full (whole-table)
// Bloom filter of that many bits a key (NewBloomFilterPolicy; with the
// default format_version 5, RocksDB's cache-line-blocked FastLocalBloom),
// held by the table reader rather than the block cache.
rocksdb::Options RocksBlockOptions(bool hash_index,
                                   std::shared_ptr<rocksdb::Cache> cache,
                                   int bloom_bits_per_key = 0);

}  // namespace roost::bench

#endif  // ROOST_BENCH_PEERS_ROCKSDB_OPTIONS_H_
