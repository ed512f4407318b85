// What the RocksDB peers share (their options are rocksdb_options.h): the
// two ways a table is built (one flushed memtable, or an
// ingested SstFileWriter file), and the measurement of a table through a DB
// opened read-only (DB::Get, DB::MultiGet), as a server would read it.
#ifndef ROOST_BENCH_PEERS_ROCKSDB_H_
#define ROOST_BENCH_PEERS_ROCKSDB_H_

#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include <memory>
#include <string>

#include "bench/peers/recorder.h"
#include "bench/peers/rocksdb_options.h"
#include "bench/suite_data.h"

namespace roost::bench {

// Dies (SystemFailure) with `what` and the status unless it is ok.
void CheckOk(const rocksdb::Status& st, const std::string& what);

// DB::Open and DB::OpenForReadOnly into a unique_ptr.
std::unique_ptr<rocksdb::DB> OpenDb(const rocksdb::Options& options,
                                    const std::string& dir, bool read_only,
                                    const std::string& name);

// Writes every pair into one memtable and flushes it: the path RocksDB's
// CuckooTable and PlainTable builders are written for.
void FlushBuild(const SuiteData& data, rocksdb::Options options,
                const std::string& dir, const std::string& name);

// Writes the sorted pairs with SstFileWriter and ingests the file.
void IngestBuild(const SuiteData& data, const rocksdb::Options& options,
                 const std::string& dir, const std::string& name);

// Opens the DB at `dir` read-only (after a full scan with `warm_scan`, which
// fills the block cache) and measures Get and MultiGet.
void MeasureRocks(const Settings& s, Recorder& rec, const std::string& system,
                  const std::string& config, const rocksdb::Options& options,
                  const std::string& dir, double build_s, bool warm_scan);

}  // namespace roost::bench

#endif  // ROOST_BENCH_PEERS_ROCKSDB_H_
