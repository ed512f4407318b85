// tinycdb's constant database in the suite (files below 4 GiB); Get only.

#include <cdb.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench/peers/peer.h"

namespace roost::bench {
namespace {

namespace fs = std::filesystem;

void TinyCdb(const Settings& s, const SuiteData& data, Recorder& rec) {
  const char* system = "tinycdb";
  // 24 bytes of record and hash-table overhead per pair, plus the pairs.
  const uint64_t avg_pair = data.fixed_width() ? 16 : 25 + 110;
  if (s.keys * (avg_pair + 24) + 2048 >= (uint64_t{1} << 32)) {
    rec.Skip(system, "default", "the file would pass cdb's 4 GiB limit");
    return;
  }
  const std::string path = (s.dir / "tinycdb.cdb").string();
  const auto start = std::chrono::steady_clock::now();
  {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) Die(path + ": cannot create");
    struct cdb_make make;
    if (cdb_make_start(&make, fd) != 0) Die("tinycdb: cdb_make_start");
    ForEachPair(data, false, [&](std::string_view k, std::string_view v) {
      if (cdb_make_add(&make, k.data(), k.size(), v.data(), v.size()) != 0) {
        Die("tinycdb: cdb_make_add");
      }
    });
    if (cdb_make_finish(&make) != 0) Die("tinycdb: cdb_make_finish");
    ::close(fd);
  }
  const double build_s = SecondsSince(start);
  const int fd = ::open(path.c_str(), O_RDONLY);
  struct cdb db;
  if (fd < 0 || cdb_init(&db, fd) != 0) Die("tinycdb: cannot open " + path);
  // Read every page once, as roost's and RocksDB's opens do.
  uint64_t sum = 0;
  for (unsigned pos = 0; pos + 8 <= db.cdb_fsize; pos += 4096) {
    sum += *static_cast<const unsigned char*>(cdb_get(&db, 1, pos));
  }
  if (sum == 0xffffffffffffffffULL) std::fprintf(stderr, " ");
  rec.Gets(system, "default", fs::file_size(path), build_s,
           [&db](std::string_view key, auto&& sink) {
             if (cdb_find(&db, key.data(), key.size()) <= 0) return false;
             sink(std::string_view(static_cast<const char*>(cdb_getdata(&db)),
                                   cdb_datalen(&db)));
             return true;
           });
  cdb_free(&db);
  ::close(fd);
  fs::remove(path);
}

}  // namespace

std::unique_ptr<Peer> NewTinyCdbPeer() {
  return std::make_unique<FunctionPeer>("tinycdb", TinyCdb);
}

}  // namespace roost::bench
