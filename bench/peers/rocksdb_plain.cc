// RocksDB's PlainTable in the suite, hashed on an 8-byte prefix, read
// through a DB opened read-only.

#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench/peers/peer.h"
#include "bench/peers/rocksdb.h"

namespace roost::bench {
namespace {

namespace fs = std::filesystem;

void RocksPlain(const Settings& s, const SuiteData& data, Recorder& rec) {
  const char* system = "RocksDB PlainTable";
  // A record holds the key, 8 bytes of sequence and type, two lengths and
  // the value; the reader refuses files of 2 GiB or more.
  const uint64_t avg_pair = data.fixed_width() ? 16 : 25 + 110;
  if (s.keys * (avg_pair + 9) >= (uint64_t{1} << 31)) {
    rec.Skip(system, "prefix hash",
             "the file would pass PlainTable's 2 GiB limit");
    return;
  }
  rocksdb::Options options = BaseRocksOptions();
  options.allow_mmap_reads = true;  // PlainTable requires it
  // Every key's first 8 bytes are distinct: the prefix hash finds one key.
  options.prefix_extractor.reset(rocksdb::NewFixedPrefixTransform(8));
  rocksdb::PlainTableOptions plain;  // bloom 10 bits/key, hash ratio 0.75
  if (data.fixed_width()) plain.user_key_len = 8;
  options.table_factory.reset(rocksdb::NewPlainTableFactory(plain));
  const std::string dir = (s.dir / "rocksdb-plain").string();
  const auto start = std::chrono::steady_clock::now();
  FlushBuild(data, options, dir, system);
  MeasureRocks(s, rec, system, "prefix hash", options, dir, SecondsSince(start),
               false);
  rocksdb::DestroyDB(dir, options);
}

}  // namespace

std::unique_ptr<Peer> NewRocksPlainPeer() {
  return std::make_unique<FunctionPeer>("rocksdb-plain", RocksPlain);
}

}  // namespace roost::bench
