// TableReadOptions: how a table file is opened and read, one struct for
// every format's reader (Table::Open, CuckooTable::Open, BlockTable::Open),
// so that what a caller asks for reaches the reader whichever format the
// file holds. A format ignores the fields it has no use for.
//
// Example:
//   TableReadOptions read;
//   read.block_cache = std::make_shared<BlockCache>(256 << 20);  // shared
//   ROOST_ASSIGN_OR_RETURN(std::unique_ptr<Table> a, Table::Open(p, read));
//   ROOST_ASSIGN_OR_RETURN(std::unique_ptr<Table> b, Table::Open(q, read));
//
// Thread-safety: a plain struct; copies share the cache.
#ifndef ROOST_STORAGE_READ_OPTIONS_H_
#define ROOST_STORAGE_READ_OPTIONS_H_

#include <memory>
#include <optional>

#include "storage/block/block_cache.h"
#include "storage/block/block_format.h"
#include "storage/file.h"

namespace roost {

struct TableReadOptions {
  // Verify every checksum at Open(): every region of a cuckoo table, every
  // block of a block table (a compressed block is verified again whenever
  // it is decompressed). Without it the header or footer (and a block
  // table's index) is still checked and no lookup reads outside the file,
  // but a flipped byte in a value goes unnoticed. The default value is
  // true.
  bool verify_checksums = true;
  // How the file is brought into memory; see LoadMode. The default value
  // is LoadMode::kMmap.
  LoadMode load_mode = LoadMode::kMmap;
  // Load mode kMmap: once Open() (and its checksum pass, which reads the
  // file in order) is done, advise the kernel that the table is read at
  // random (madvise MADV_RANDOM), so that a page fault reads that one page
  // rather than the ~128 KiB around it. On a table larger than the memory
  // it may use, that read-around evicts 30 useful pages for each one read:
  // bench/cold_bench.sh measured 100 to 200 times fewer lookups/s without
  // this advice. The default value is true.
  bool advise_random = true;

  // Block tables in load mode kMmap: copy the index block and the filter
  // into memory of the table's own at Open() (as RocksDB keeps them in its
  // heap), where the kernel never pages them out: in a table larger than
  // the memory it may use, a lookup then reads its data block from disk,
  // not the index and filter pages too, and BlockTable::RequestPages finds
  // the data blocks without a fault. Costs their size in anonymous memory
  // (a 10-bit filter is 1.25 bytes a key). The default value is true.
  bool resident_index_and_filter = true;
  // Block tables: the cache their decompressed data blocks go into, shared
  // by every table opened with it (one per process: roost-server sizes it
  // with --block-cache). Null: the table makes one of its own of
  // kDefaultBlockCacheBytes. The default value is nullptr.
  std::shared_ptr<BlockCache> block_cache = nullptr;
  // Block tables: search the index this way instead of as the file says.
  // The default value is std::nullopt (as the file says).
  std::optional<IndexSearch> index_search = std::nullopt;
  // Block tables: use the data blocks' hash indexes for point lookups. The
  // default value is true.
  bool use_hash_index = true;
  // Block tables: test the table's filter (format 2.0) before searching the
  // index. The default value is true.
  bool use_filter = true;

  // Cuckoo tables: let MultiGet on a table of 8-byte keys and values
  // compare a block's four keys with two AVX2 loads where the CPU has AVX2
  // (checked at Open()), rather than with four 8-byte loads. The answers
  // are the same either way; tests turn it off to cover the portable code.
  // The default value is true.
  bool vector_compares = true;
};

}  // namespace roost

#endif  // ROOST_STORAGE_READ_OPTIONS_H_
