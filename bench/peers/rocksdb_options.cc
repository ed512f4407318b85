#include "bench/peers/rocksdb_options.h"

#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>

#include <utility>

namespace roost::bench {

rocksdb::Options BaseRocksOptions() {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.disable_auto_compactions = true;
  options.max_open_files = -1;
  options.compression = rocksdb::kNoCompression;
  options.bottommost_compression = rocksdb::kNoCompression;
  return options;
}

rocksdb::Options RocksCuckooOptions() {
  rocksdb::Options options = BaseRocksOptions();
  options.allow_mmap_reads = true;  // CuckooTable requires it
  options.table_factory.reset(
      rocksdb::NewCuckooTableFactory(rocksdb::CuckooTableOptions()));
  return options;
}

rocksdb::Options RocksBlockOptions(bool hash_index,
                                   std::shared_ptr<rocksdb::Cache> cache,
                                   int bloom_bits_per_key) {
  rocksdb::BlockBasedTableOptions table;
  table.block_size = 4096;
  table.data_block_index_type =
      hash_index ? rocksdb::BlockBasedTableOptions::kDataBlockBinaryAndHash
                 : rocksdb::BlockBasedTableOptions::kDataBlockBinarySearch;
  table.data_block_hash_table_util_ratio = 0.75;
  table.block_cache = std::move(cache);
  if (bloom_bits_per_key > 0) {
    table.filter_policy.reset(
        rocksdb::NewBloomFilterPolicy(bloom_bits_per_key));
    table.whole_key_filtering = true;
  }
  rocksdb::Options options = BaseRocksOptions();
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

}  // namespace roost::bench
