// RocksDB's SstFileWriter writing the pairs of a fixed-width binary record
// file (8-byte keys, 8-byte values, as bench/gen_records writes them): the
// reference beside `roost-load build` in bench/load_bench.sh.
//
//   sst_writer_bench RECORDS.bin OUTPUT.sst
//
// The records are read and sorted (bytewise by key) before the clock starts;
// only the writer is timed: Open, Put for every pair, Finish. Default
// BlockBasedTableOptions, no compression. Afterwards the file is checked
// (checksums, entry count, and a scan comparing every pair). Prints one line
// of key=value fields: keys, seconds, keys_per_second, file_size, and the
// process's resident memory before Open (rss_before_open_kib: mostly the
// pairs held in memory) and its peak (vm_hwm_kib) at the end of Finish.

#include <rocksdb/env.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <rocksdb/sst_file_reader.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace {

struct Record {
  char key[8];
  char value[8];
};
static_assert(sizeof(Record) == 16);

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "sst_writer_bench: %s\n", what.c_str());
  std::exit(1);
}

void Check(const rocksdb::Status& s, const char* what) {
  if (!s.ok()) Die(std::string(what) + ": " + s.ToString());
}

// A field of /proc/self/status, in KiB ("VmRSS", "VmHWM").
uint64_t ProcStatusKib(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, field.size() + 1, field + ":") == 0) {
      return std::strtoull(line.c_str() + field.size() + 1, nullptr, 10);
    }
  }
  return 0;
}

std::vector<Record> ReadRecords(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) Die(path + ": " + std::strerror(errno));
  if (std::fseek(f, 0, SEEK_END) != 0) Die(path + ": cannot seek");
  const long size = std::ftell(f);
  if (size < 0 || size % sizeof(Record) != 0) {
    Die(path + ": size is not a multiple of 16 bytes");
  }
  std::rewind(f);
  std::vector<Record> records(static_cast<size_t>(size) / sizeof(Record));
  if (std::fread(records.data(), sizeof(Record), records.size(), f) !=
      records.size()) {
    Die(path + ": short read");
  }
  std::fclose(f);
  return records;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) Die("usage: sst_writer_bench RECORDS.bin OUTPUT.sst");
  const std::string input = argv[1];
  const std::string output = argv[2];

  std::vector<Record> records = ReadRecords(input);
  auto less = [](const Record& a, const Record& b) {
    return std::memcmp(a.key, b.key, sizeof(a.key)) < 0;
  };
  std::sort(records.begin(), records.end(), less);
  for (size_t i = 1; i < records.size(); ++i) {
    if (!less(records[i - 1], records[i])) Die("duplicate key in the input");
  }

  rocksdb::Options options;
  options.compression = rocksdb::kNoCompression;
  options.table_factory.reset(
      rocksdb::NewBlockBasedTableFactory(rocksdb::BlockBasedTableOptions()));
  const uint64_t rss_before = ProcStatusKib("VmRSS");

  const auto start = std::chrono::steady_clock::now();
  {
    rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), options);
    Check(writer.Open(output), "Open");
    for (const Record& r : records) {
      Check(writer.Put(rocksdb::Slice(r.key, sizeof(r.key)),
                       rocksdb::Slice(r.value, sizeof(r.value))),
            "Put");
    }
    Check(writer.Finish(), "Finish");
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  const uint64_t hwm = ProcStatusKib("VmHWM");

  // Check what was written, outside the timing.
  rocksdb::SstFileReader reader(options);
  Check(reader.Open(output), "reader Open");
  Check(reader.VerifyChecksum(), "VerifyChecksum");
  if (reader.GetTableProperties()->num_entries != records.size()) {
    Die("the file holds a different number of entries");
  }
  std::unique_ptr<rocksdb::Iterator> it(
      reader.NewIterator(rocksdb::ReadOptions()));
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
    if (i >= records.size() || it->key() != rocksdb::Slice(records[i].key, 8) ||
        it->value() != rocksdb::Slice(records[i].value, 8)) {
      Die("the file's pairs differ from the input's");
    }
  }
  Check(it->status(), "scan");
  if (i != records.size()) Die("the file holds fewer pairs than the input");

  std::FILE* f = std::fopen(output.c_str(), "rb");
  if (f == nullptr) Die(output + ": " + std::strerror(errno));
  std::fseek(f, 0, SEEK_END);
  const long file_size = std::ftell(f);
  std::fclose(f);

  std::printf(
      "keys=%zu seconds=%.3f keys_per_second=%.0f file_size=%ld "
      "rss_before_open_kib=%llu vm_hwm_kib=%llu\n",
      records.size(), seconds, records.size() / seconds, file_size,
      static_cast<unsigned long long>(rss_before),
      static_cast<unsigned long long>(hwm));
  return 0;
}
