#include "bench/peers/rocksdb.h"

#include <rocksdb/memtablerep.h>
#include <rocksdb/sst_file_writer.h>

#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "bench/peers/peer.h"
#include "fmt/format.h"

namespace roost::bench {
namespace {

namespace fs = std::filesystem;

rocksdb::Slice ToSlice(std::string_view s) { return {s.data(), s.size()}; }

uint64_t BytesUnder(const fs::path& path) {
  if (fs::is_regular_file(path)) return fs::file_size(path);
  uint64_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(path)) {
    if (e.is_regular_file() && e.path().extension() == ".sst") {
      total += e.file_size();
    }
  }
  return total;
}

}  // namespace

void CheckOk(const rocksdb::Status& st, const std::string& what) {
  if (!st.ok()) Die(what + ": " + st.ToString());
}

std::unique_ptr<rocksdb::DB> OpenDb(const rocksdb::Options& options,
                                    const std::string& dir, bool read_only,
                                    const std::string& name) {
  rocksdb::DB* db = nullptr;
  CheckOk(read_only ? rocksdb::DB::OpenForReadOnly(options, dir, &db)
                    : rocksdb::DB::Open(options, dir, &db),
          name + " open");
  return std::unique_ptr<rocksdb::DB>(db);
}

void FlushBuild(const SuiteData& data, rocksdb::Options options,
                const std::string& dir, const std::string& name) {
  options.write_buffer_size = size_t{64} << 30;  // one memtable, one SST
  options.memtable_factory = std::make_shared<rocksdb::VectorRepFactory>();
  options.allow_concurrent_memtable_write = false;
  std::unique_ptr<rocksdb::DB> db = OpenDb(options, dir, false, name);
  rocksdb::WriteOptions wo;
  wo.disableWAL = true;
  rocksdb::WriteBatch batch;
  ForEachPair(data, false, [&](std::string_view k, std::string_view v) {
    CheckOk(batch.Put(ToSlice(k), ToSlice(v)), name + " put");
    if (batch.Count() == 1000) {
      CheckOk(db->Write(wo, &batch), name + " write");
      batch.Clear();
    }
  });
  CheckOk(db->Write(wo, &batch), name + " write");
  CheckOk(db->Flush(rocksdb::FlushOptions()), name + " flush");
  CheckOk(db->Close(), name + " close");
}

void IngestBuild(const SuiteData& data, const rocksdb::Options& options,
                 const std::string& dir, const std::string& name) {
  const std::string sst = dir + ".sst";
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), options);
  CheckOk(writer.Open(sst), name + " sst open");
  ForEachPair(data, true, [&](std::string_view k, std::string_view v) {
    CheckOk(writer.Put(ToSlice(k), ToSlice(v)), name + " sst put");
  });
  CheckOk(writer.Finish(), name + " sst finish");
  std::unique_ptr<rocksdb::DB> db = OpenDb(options, dir, false, name);
  rocksdb::IngestExternalFileOptions ingest;
  ingest.move_files = true;
  CheckOk(db->IngestExternalFile({sst}, ingest), name + " ingest");
  CheckOk(db->Close(), name + " close");
}

void MeasureRocks(const Settings& s, Recorder& rec, const std::string& system,
                  const std::string& config, const rocksdb::Options& options,
                  const std::string& dir, double build_s, bool warm_scan) {
  std::unique_ptr<rocksdb::DB> db = OpenDb(options, dir, true, system);
  if (warm_scan) {  // fills the block cache with every block
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator({}));
    uint64_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
    CheckOk(it->status(), system + " scan");
    if (n != s.keys) Die(fmt::format("{}: scan saw {} keys", system, n));
  }
  const uint64_t bytes = BytesUnder(dir);
  const rocksdb::ReadOptions ro;
  rocksdb::ColumnFamilyHandle* cf = db->DefaultColumnFamily();
  rocksdb::PinnableSlice value;
  rec.Gets(system, config, bytes, build_s,
           [&](std::string_view key, auto&& sink) {
             value.Reset();
             const rocksdb::Status st = db->Get(ro, cf, ToSlice(key), &value);
             if (st.IsNotFound()) return false;
             CheckOk(st, system + " get");
             sink(std::string_view(value.data(), value.size()));
             return true;
           });
  std::vector<rocksdb::Slice> slices(s.batch);
  std::vector<rocksdb::PinnableSlice> values(s.batch);
  std::vector<rocksdb::Status> statuses(s.batch);
  rec.MultiGets(system, config, bytes, build_s,
                [&](std::span<const std::string_view> keys, auto&& sink) {
                  for (size_t j = 0; j < keys.size(); ++j) {
                    slices[j] = ToSlice(keys[j]);
                    values[j].Reset();
                  }
                  db->MultiGet(ro, cf, keys.size(), slices.data(),
                               values.data(), statuses.data());
                  for (size_t j = 0; j < keys.size(); ++j) {
                    if (statuses[j].IsNotFound()) continue;
                    CheckOk(statuses[j], system + " multiget");
                    sink(j,
                         std::string_view(values[j].data(), values[j].size()));
                  }
                });
}

}  // namespace roost::bench
