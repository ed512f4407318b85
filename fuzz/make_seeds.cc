// make_seeds OUT_DIR: writes the seed corpus of every fuzz target into
// OUT_DIR/<target>/ (fuzz/make_seeds.sh runs it into fuzz/corpus/). Tables
// come from the real builders, MANIFESTs from roost-load's own build, and
// the inputs read through FuzzedDataProvider are encoded the way it decodes
// them, so that every seed starts the fuzzer on a path that does something.
// Every seed is a function of nothing but this file: running it again
// writes the same bytes.
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "fuzz/fixtures.h"
#include "fuzz/fuzz_util.h"
#include "roost/v1/lookup.pb.h"
#include "storage/block/block_table_builder.h"
#include "storage/coding.h"
#include "storage/cuckoo/cuckoo_table_builder.h"
#include "storage/version/data_dir.h"

namespace roost::fuzz {
namespace {

namespace fs = std::filesystem;

std::string out_dir;

std::string ReadAll(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) Fail("cannot read ", path);
  std::string s;
  char buf[65536];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), f)) > 0;)
    s.append(buf, n);
  std::fclose(f);
  return s;
}

void Seed(const std::string& target, const std::string& name,
          std::string_view bytes) {
  const std::string dir = StrCat(out_dir, "/", target);
  fs::create_directories(dir);
  WriteFileOrDie(StrCat(dir, "/", name), bytes);
}

std::string Bytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

using Pairs = std::vector<std::pair<std::string, std::string>>;

Pairs FixedPairs(uint64_t seed, size_t n, size_t key, size_t value) {
  std::mt19937_64 rng(seed);
  Pairs pairs;
  for (size_t i = 0; i < n; ++i) {
    std::string k = Bytes(rng, key);
    for (size_t b = 0; b < key && b < 8; ++b)
      k[b] = static_cast<char>(i >> (8 * b));
    pairs.emplace_back(k, Bytes(rng, value));
  }
  return pairs;
}

Pairs VariablePairs(uint64_t seed, size_t n, size_t max_key, size_t max_value) {
  std::mt19937_64 rng(seed);
  Pairs pairs;
  for (size_t i = 0; i < n; ++i) {
    pairs.emplace_back(StrCat(i, "/", Bytes(rng, rng() % (max_key + 1))),
                       Bytes(rng, rng() % (max_value + 1)));
  }
  return pairs;
}

Pairs SortedPairs(size_t n, size_t max_value) {
  Pairs pairs;
  for (size_t i = 0; i < n; ++i) {
    pairs.emplace_back(
        StrCat("key/", 1000 + 3 * i),
        std::string(i % (max_value + 1), static_cast<char>('a' + i % 26)));
  }
  return pairs;
}

void CuckooSeed(const std::string& name, const Pairs& pairs,
                CuckooBuildOptions options = {}) {
  const std::string path = ScratchPath("seed");
  auto builder = CuckooTableBuilder::Create(path, options);
  if (!builder.ok())
    Fail("cannot build ", name, ": ", builder.status().ToString());
  for (const auto& [k, v] : pairs) {
    if (!(*builder)->Add(k, v).ok()) Fail("cannot add to ", name);
  }
  if (auto r = (*builder)->Finish(); !r.ok()) {
    Fail("cannot build ", name, ": ", r.status().ToString());
  }
  Seed("cuckoo_table_fuzz", name, ReadAll(path));
}

void BlockSeed(const std::string& name, Pairs pairs,
               BlockBuildOptions options = {}) {
  std::sort(pairs.begin(), pairs.end());
  const std::string path = ScratchPath("seed");
  auto builder = BlockTableBuilder::Create(path, options);
  if (!builder.ok()) Fail("cannot create ", name);
  for (const auto& [k, v] : pairs) {
    if (!(*builder)->Add(k, v).ok()) Fail("cannot add to ", name);
  }
  if (auto r = (*builder)->Finish(); !r.ok()) {
    Fail("cannot build ", name, ": ", r.status().ToString());
  }
  Seed("block_table_fuzz", name, ReadAll(path));
}

void TableSeeds() {
  CuckooSeed("inline-8x8", FixedPairs(1, 24, 8, 8));
  CuckooSeed("inline-4x3", FixedPairs(2, 30, 4, 3));
  CuckooSeed("heap", VariablePairs(3, 30, 12, 20));
  CuckooSeed("heap-empty-key", {{"", "empty"}, {"a", ""}, {"bb", "x"}});
  CuckooSeed("inline-empty-key", {{"", "only"}});
  CuckooSeed("one-key", {{"key", "value"}});
  CuckooSeed("empty", {});
  CuckooBuildOptions three;
  three.num_hash_functions = 3;
  three.overflow_bits_per_block = 8;
  three.utilization = 0.97;
  CuckooSeed("three-hashes-dense", FixedPairs(4, 40, 8, 8), three);
  CuckooBuildOptions one_bit;
  one_bit.overflow_bits_per_block = 1;
  CuckooSeed("wide-inline", FixedPairs(5, 6, 40, 60), one_bit);

  BlockSeed("default", SortedPairs(60, 12));
  BlockBuildOptions tiny;
  tiny.block_size = 64;
  BlockSeed("tiny-blocks", SortedPairs(40, 8), tiny);
  BlockBuildOptions restart1;
  restart1.restart_interval = 1;
  restart1.block_size = 128;
  BlockSeed("restart-1", VariablePairs(6, 30, 6, 10), restart1);
  BlockBuildOptions restart1024;
  restart1024.restart_interval = 1024;
  BlockSeed("restart-1024", SortedPairs(50, 4), restart1024);
  BlockBuildOptions no_hash;
  no_hash.hash_index = false;
  no_hash.block_size = 256;
  BlockSeed("no-hash-index", SortedPairs(50, 6), no_hash);
  BlockBuildOptions snappy;
  snappy.compression = Compression::kSnappy;
  snappy.block_size = 256;
  BlockSeed("snappy", SortedPairs(60, 30), snappy);
  BlockBuildOptions zstd;
  zstd.compression = Compression::kZstd;
  zstd.block_size = 512;
  BlockSeed("zstd", SortedPairs(60, 30), zstd);
  BlockBuildOptions interpolation;
  interpolation.index_search = IndexSearch::kInterpolation;
  interpolation.block_size = 64;
  BlockSeed("interpolation", FixedPairs(7, 40, 8, 4), interpolation);
  BlockSeed("empty", {});
  BlockSeed("one-entry", {{"k", "v"}});
  // Format 2.0: a filter between the data blocks and the index.
  BlockBuildOptions filter;
  filter.filter_bits_per_key = 10;
  filter.block_size = 128;
  BlockSeed("filter", SortedPairs(60, 12), filter);
  BlockBuildOptions filter_snappy = snappy;
  filter_snappy.filter_bits_per_key = 4;
  filter_snappy.expected_keys = 30;
  BlockSeed("filter-snappy", SortedPairs(60, 30), filter_snappy);
  BlockSeed("filter-empty", {}, filter);
}

void ManifestSeeds() {
  const std::string data = ScratchPath("published");
  fs::create_directories(data);
  if (absl::Status s = PublishFixtures(data, ScratchDir()); !s.ok()) {
    Fail("cannot publish the fixtures: ", s.ToString());
  }
  for (const char* table : {"kv", "sorted"}) {
    std::string manifest = ReadAll(
        StrCat(data, "/", table, "/", VersionDirName(1), "/", kManifestName));
    // The input's path names this run's scratch directory: name a fixed
    // one, so that the seed is the same bytes on every run.
    for (size_t at; (at = manifest.find(ScratchDir())) != std::string::npos;) {
      manifest.replace(at, ScratchDir().size(), "/tmp/roost-fuzz");
    }
    Seed("manifest_fuzz", StrCat("manifest-", table), manifest);
  }
  Seed("manifest_fuzz", "rollback",
       "{\"pinned\": 3, \"rolled_back\": [4, 5]}\n");
  Seed("manifest_fuzz", "rollback-none",
       "{\"pinned\": null, \"rolled_back\": []}");
  Seed("manifest_fuzz", "json-values",
       "[1, -2, 3.5e10, 18446744073709551615, \"\\u00e9\\ud83d\\ude00\", "
       "true, false, null, {\"a\": {\"b\": []}}]");
}

std::string Gzip(std::string_view data) {
  z_stream z{};
  deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
               Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// record_reader_fuzz's header (see there): format and encodings, gzip and
// buffer size, fixed sizes, limits.
std::string ReaderHeader(int format, int key_enc, int value_enc, bool strip_cr,
                         int gzip, int buffer, int key_size = 0,
                         int value_size = 0, int max_key = 255,
                         int max_value = 255,
                         bool allow_missing_final_newline = false) {
  std::string h(6, '\0');
  h[0] = static_cast<char>(format | key_enc << 2 | value_enc << 4 |
                           (strip_cr ? 64 : 0) |
                           (allow_missing_final_newline ? 128 : 0));
  h[1] = static_cast<char>(gzip | buffer << 2);
  h[2] = static_cast<char>(key_size);
  h[3] = static_cast<char>(value_size);
  h[4] = static_cast<char>(max_key);
  h[5] = static_cast<char>(max_value);
  return h;
}

void ReaderSeeds() {
  // Buffer sizes: 0 is 1 byte, 3 is 5 bytes, 5 is 64 bytes, 7 the default.
  const std::string t = "record_reader_fuzz";
  const std::string raw =
      "apple\t1\nbanana\t2\tand a tab\n\ncherry\t\n\tempty key\n";
  Seed(t, "tsv-raw", ReaderHeader(0, 0, 0, false, 0, 7) + raw);
  Seed(t, "tsv-raw-small-buffer", ReaderHeader(0, 0, 0, false, 0, 3) + raw);
  Seed(t, "tsv-hex",
       ReaderHeader(0, 1, 1, false, 0, 2) +
           "6b6579\t76616c7565\n00ff\t\nzz\t00\n0\t1\n");
  Seed(t, "tsv-base64",
       ReaderHeader(0, 2, 2, false, 0, 5) +
           "a2V5\tdmFsdWU=\nAA==\tAP8\n!!\tx\n");
  Seed(t, "tsv-crlf",
       ReaderHeader(0, 0, 0, true, 0, 1) + "a\tb\r\nc\td\r\n\r\n");
  Seed(t, "tsv-limits",
       ReaderHeader(0, 1, 0, true, 0, 0, 0, 0, 2, 3) +
           "6162\t123456789012\n61626364\tx\n");
  Seed(t, "tsv-gzip-two", ReaderHeader(0, 0, 0, false, 2, 1) + raw);
  Seed(t, "tsv-gzipped", ReaderHeader(0, 0, 0, false, 0, 4) + Gzip(raw));
  // A last line without its newline: cut short, or (with the flag) read.
  const std::string cut = "k:029998\tv29-28\nk:029999\tv29-29";
  Seed(t, "tsv-cut-line", ReaderHeader(0, 0, 0, false, 0, 1) + cut);
  Seed(t, "tsv-cut-line-allowed",
       ReaderHeader(0, 0, 0, false, 1, 3, 0, 0, 255, 255, true) + cut);
  // Input of other formats (loader/input_hints.h), refused whole.
  Seed(t, "tsv-other-parquet",
       ReaderHeader(0, 0, 0, false, 0, 2) +
           std::string("PAR1\x15\x00\x15\xa0\x01\t\n", 11) + "k\tv\n");
  Seed(t, "tsv-other-csv",
       ReaderHeader(0, 0, 0, false, 0, 7) + "id,name\n0,alice\n1,bob\n");
  Seed(t, "tsv-other-jsonl",
       ReaderHeader(0, 0, 0, false, 0, 5) + "{\"id\": 0}\n{\"id\": 1}\n");
  Seed(t, "fixed", ReaderHeader(1, 0, 0, false, 0, 7, 3, 2) + "abc12def34gh");
  Seed(t, "fixed-small-buffer",
       ReaderHeader(1, 0, 0, false, 1, 1, 4, 4) + "aaaabbbbccccdd");
  std::string lp;
  for (const auto& [k, v] : Pairs{{"k1", "v1"}, {"", "empty"}, {"key", ""}}) {
    PutVarint64(&lp, k.size());
    PutVarint64(&lp, v.size());
    lp += k + v;
  }
  Seed(t, "length-prefixed", ReaderHeader(2, 0, 0, false, 0, 7) + lp);
  Seed(t, "length-prefixed-gzip", ReaderHeader(2, 0, 0, false, 1, 2) + lp);
  Seed(t, "length-prefixed-truncated",
       ReaderHeader(2, 0, 0, false, 0, 0) + lp + "\x05\x80");
  // Zstd: compressed by the target (compression 3), and as it is.
  Seed(t, "tsv-zstd", ReaderHeader(0, 0, 0, false, 3, 2) + raw);
  Seed(t, "tsv-zstd-as-is",
       ReaderHeader(0, 0, 0, false, 0, 7) +
           std::string("\x28\xb5\x2f\xfd\x20\x08\x41\x00\x00"
                       "a\tb\nc\td\n",
                       17));
  // CSV (format 3, byte 2 bit 0 clear): byte 2's bit 1 no header, bits
  // 2-3 the delimiter, 4-5 the key column, 6-7 the value column.
  const std::string csv =
      "id,b,c\r\n1,\"Smith, J\",\"say \"\"hi\"\"\"\r\n2,\"two\nlines\",\n"
      "3,x\"y,z\n4,\"a\"b,c\n5,short\n\xef,\xff,\\\x01\n";
  Seed(t, "csv", ReaderHeader(3, 0, 0, false, 0, 2, 0x00) + csv);
  Seed(t, "csv-key-b-value-c-gzip",
       ReaderHeader(3, 0, 0, false, 1, 3, 0x10 | 0x40) + csv);
  Seed(t, "csv-no-header-semicolon-zstd",
       ReaderHeader(3, 0, 0, false, 3, 1, 0x02 | 0x04 | 0x20 | 0x80) +
           "a;b;c\nd;\"e;f\";g\n");
  Seed(t, "csv-tab-bom-cut",
       ReaderHeader(3, 0, 0, false, 0, 0, 0x08) +
           "\xef\xbb\xbfk\tb\tc\n1\t2\t3\n4\t5\t\"6");
  Seed(t, "csv-unterminated",
       ReaderHeader(3, 0, 0, false, 0, 4, 0x00) + "id,b\n1,\"a\n2,b\n");
  Seed(t, "csv-header-duplicate",
       ReaderHeader(3, 0, 0, false, 0, 7, 0x00) + "id,b,b\n1,2,3\n");
  Seed(t, "csv-parquet",
       ReaderHeader(3, 0, 0, false, 0, 7, 0x00) +
           std::string("PAR1\x15\x00\x15\xa0\x01,\n", 11));
  // JSON Lines (byte 2 bit 0 set): bits 4-5 the key field, 6-7 the value
  // field.
  const std::string jsonl =
      "{\"k\": \"a\", \"v\": [1, {\"x\": null}]}\n"
      "{\"k\": [7, 8], \"v\": \"s\\u00e9\", \"a/b\": -3}\r\n"
      "{\"k\": 1.5}\n\n  \n{\"k\": 2,}\n[1]\n{\"k\": true}\n";
  Seed(t, "jsonl", ReaderHeader(3, 0, 0, false, 0, 2, 0x01) + jsonl);
  Seed(t, "jsonl-value-v-gzip",
       ReaderHeader(3, 0, 0, false, 1, 3, 0x01 | 0x40) + jsonl);
  Seed(t, "jsonl-pointers-zstd",
       ReaderHeader(3, 0, 0, false, 3, 1, 0x01 | 0x10 | 0x80) + jsonl);
  Seed(t, "jsonl-escaped-pointer-cut",
       ReaderHeader(3, 0, 0, false, 0, 5, 0x01 | 0x20 | 0xc0) + jsonl +
           "{\"a/b\": 1}");
}

// An input for FuzzedDataProvider, written in the order the target reads
// it: integers are taken from the end of the input, strings from the front.
class FdpInput {
 public:
  // The next ConsumeIntegralInRange / ConsumeBool / PickValueInArray of a
  // range under 256 values: `value` is the offset from the range's minimum.
  FdpInput& Int(uint8_t value) {
    back_.insert(back_.begin(), static_cast<char>(value));
    return *this;
  }
  // The next ConsumeRandomLengthString.
  FdpInput& Str(std::string_view s) {
    for (char c : s) {
      front_ += c;
      if (c == '\\') front_ += c;
    }
    front_ += "\\\n";  // ends the string
    return *this;
  }
  std::string Bytes() const { return front_ + back_; }

 private:
  std::string front_;
  std::string back_;
};

void RequestSeeds() {
  const std::string t = "request_fuzz";
  // Operations: 0 Get, 1 MultiGet, 2 StreamMultiGet, 3 raw Get, 4 raw
  // MultiGet, 5 raw stream message, 6 ListTables, 7 Scan, 8 raw Scan.
  // Tables: 3 fixed, 4 sorted, 5 empty, 6 kv, 0 "", 1 missing. Versions
  // (after the keys): 9 none, 0 "1", 1 "v000001", 3 "v000002". Deadlines:
  // 2 none, 0 passed, 1 soon.
  Seed(t, "get-kv-hit",
       FdpInput().Int(0).Int(0).Int(6).Int(1).Int(5).Int(9).Int(2).Bytes());
  Seed(t, "get-pinned-version",
       FdpInput().Int(0).Int(0).Int(6).Int(1).Int(5).Int(1).Int(2).Bytes());
  Seed(t, "get-version-gone",
       FdpInput().Int(0).Int(0).Int(6).Int(1).Int(5).Int(3).Int(2).Bytes());
  Seed(t, "get-fixed-miss",
       FdpInput()
           .Int(0)
           .Int(0)
           .Int(3)
           .Int(0)
           .Str("12345678")
           .Int(9)
           .Int(2)
           .Bytes());
  Seed(t, "get-empty-table",
       FdpInput().Int(0).Int(0).Int(0).Int(0).Str("k").Int(9).Int(2).Bytes());
  Seed(t, "multiget-sorted",
       // Indexes into "sorted" (500 keys) take two bytes, high first.
       FdpInput()
           .Int(0)
           .Int(1)
           .Int(4)
           .Int(4)
           .Int(1)
           .Int(0)
           .Int(3)
           .Int(1)
           .Int(0)
           .Int(200)
           .Int(0)
           .Str("user/1")
           .Int(1)
           .Int(1)
           .Int(17)
           .Int(9)
           .Int(2)
           .Bytes());
  Seed(t, "multiget-too-many",
       FdpInput().Int(0).Int(1).Int(5).Int(18).Int(9).Int(2).Bytes());
  Seed(t, "stream-two",
       FdpInput()
           .Int(0)
           .Int(2)
           .Int(2)
           .Int(6)
           .Int(2)
           .Int(1)
           .Int(9)
           .Int(1)
           .Int(10)
           .Int(9)
           .Int(3)
           .Int(1)
           .Int(1)
           .Int(7)
           .Int(0)
           .Int(2)
           .Bytes());
  Seed(t, "get-passed-deadline",
       FdpInput().Int(0).Int(0).Int(6).Int(1).Int(3).Int(9).Int(0).Bytes());
  Seed(t, "list-tables", FdpInput().Int(0).Int(6).Bytes());
  roost::v1::GetRequest get;
  get.set_table("kv");
  get.set_key("no such key");
  Seed(t, "raw-get",
       FdpInput().Int(0).Int(3).Str(get.SerializeAsString()).Bytes());
  roost::v1::MultiGetRequest multi;
  multi.set_table("sorted");
  multi.add_keys("user/100007/");
  multi.add_keys("");
  Seed(t, "raw-multiget",
       FdpInput().Int(0).Int(4).Str(multi.SerializeAsString()).Bytes());
  Seed(t, "raw-stream",
       FdpInput().Int(0).Int(5).Str(multi.SerializeAsString()).Bytes());
  // Scans: of "sorted" from a start, with a prefix and a limit, pinned to
  // its version; of a cuckoo table (refused); and as raw bytes.
  Seed(t, "scan-sorted-prefix",
       FdpInput()
           .Int(0)
           .Int(7)
           .Int(1)
           .Int(0)
           .Str("user/1001")
           .Int(1)
           .Int(0)
           .Int(0)
           .Str("user/10")
           .Int(0)
           .Int(5)
           .Int(1)
           .Int(2)
           .Bytes());
  Seed(t, "scan-cuckoo",
       FdpInput()
           .Int(0)
           .Int(7)
           .Int(0)
           .Int(6)
           .Int(0)
           .Str("")
           .Int(1)
           .Int(1)
           .Int(1)
           .Int(9)
           .Int(2)
           .Bytes());
  roost::v1::ScanRequest scan;
  scan.set_table("sorted");
  scan.set_prefix("user/100");
  scan.set_limit(3);
  scan.set_version("1");
  Seed(t, "raw-scan",
       FdpInput().Int(0).Int(8).Str(scan.SerializeAsString()).Bytes());
  // Unknown fields, a group, a repeated table: what protobuf skips or takes.
  Seed(t, "raw-unknown-fields",
       FdpInput()
           .Int(0)
           .Int(4)
           .Str(std::string(
               "\x0a\x01x\x18\x05\x23\x08\x01\x24\x0a\x02kv\x12\x00", 15))
           .Bytes());
}

// column_stream_fuzz: an options byte, then an arrow-columns stream
// (docs/format/column_stream.md), built here piece by piece.
std::string U32(uint32_t v) {
  return std::string(reinterpret_cast<char*>(&v), 4);
}
std::string U64(uint64_t v) {
  return std::string(reinterpret_cast<char*>(&v), 8);
}
std::string Str(const std::string& s) { return U32(s.size()) + s; }
std::string Buffers(const std::vector<std::string>& buffers) {
  std::string s;
  for (const std::string& b : buffers) s += U64(b.size()) + b;
  return s;
}
std::string ArrayHead(uint64_t length, uint64_t offset, uint64_t nulls) {
  return U64(length) + U64(offset) + U64(nulls);
}
std::string Int32s(std::initializer_list<int32_t> v) {
  std::string s;
  for (int32_t x : v) s += U32(static_cast<uint32_t>(x));
  return s;
}

void ColumnStreamSeeds() {
  const std::string t = "column_stream_fuzz";
  // Key column "k": strings "a", "b".
  const std::string keys =
      ArrayHead(2, 0, 0) + Buffers({"", Int32s({0, 1, 2}), "ab"});
  auto stream = [&](uint8_t mode, const std::string& columns, int count,
                    const std::string& arrays) {
    const std::string header =
        std::string(1, static_cast<char>(mode)) + U32(count) + columns;
    const std::string batch =
        Str("x.parquet row group 0") + U64(0) + U64(2) + keys + arrays;
    return "ROOSTCOL" + U32(1) + U32(header.size()) + header + "\x01" +
           U64(batch.size()) + batch + std::string(1, '\0');
  };
  const std::string k = Str("k") + "\x0c";
  // The doc's worked example's shape: an int32 with a null.
  const std::string ints =
      ArrayHead(2, 0, 1) + Buffers({"\x01", Int32s({1, 0})});
  Seed(t, "int32", "\x07" + stream(1, k + Str("n") + "\x04", 2, ints));
  Seed(t, "int32-small-buffer",
       std::string(1, '\0') + stream(1, k + Str("n") + "\x04", 2, ints));
  Seed(t, "bytes",
       "\x0b" +
           stream(0, k + Str("v") + "\x0e", 2,
                  ArrayHead(2, 0, 0) + Buffers({"", Int32s({0, 2, 3}),
                                                std::string("\xff\x00z", 3)})));
  // list<struct<x: string>> at offsets, and map<string, double>.
  const std::string list_type =
      Str("l") + "\x18\x1b" + U32(1) + Str("x") + "\x0c";
  const std::string list =
      ArrayHead(2, 1, 0) + Buffers({"", Int32s({0, 0, 1, 3})}) +
      ArrayHead(3, 0, 0) + Buffers({""}) + ArrayHead(3, 0, 0) +
      Buffers({"", Int32s({0, 1, 3, 4}), "p\xc3\xa9z"});
  const std::string map_type = Str("m") + "\x1c\x0c\x0b";
  const double half = 0.5;
  const std::string map =
      ArrayHead(2, 0, 0) + Buffers({"", Int32s({0, 1, 1})}) +
      ArrayHead(1, 0, 0) + Buffers({"", Int32s({0, 1}), "q"}) +
      ArrayHead(1, 0, 0) +
      Buffers({"", std::string(reinterpret_cast<const char*>(&half), 8)});
  Seed(t, "nested",
       "\x12" + stream(1, k + list_type + map_type, 3, list + map));
  // timestamp[ms, UTC] and decimal128(5, 2).
  const std::string ts_type =
      Str("ts") + std::string("\x13\x01", 2) + Str("UTC");
  const std::string dec_type = Str("d") + "\x17" + U32(5) + U32(2);
  const std::string ts = ArrayHead(2, 0, 0) + Buffers({"", U64(1500) + U64(0)});
  const std::string dec =
      ArrayHead(2, 0, 0) +
      Buffers({"", U64(1250) + U64(0) + U64(~uint64_t{0}) + U64(~uint64_t{0})});
  Seed(t, "times", "\x19" + stream(1, k + ts_type + dec_type, 3, ts + dec));
}

void RandomSeeds(const std::string& target, uint64_t seed,
                 std::initializer_list<size_t> sizes) {
  std::mt19937_64 rng(seed);
  for (size_t n : sizes) Seed(target, StrCat("random-", n), Bytes(rng, n));
}

}  // namespace
}  // namespace roost::fuzz

int main(int argc, char** argv) {
  using namespace roost::fuzz;
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds OUT_DIR\n");
    return 64;
  }
  out_dir = argv[1];
  TableSeeds();
  ManifestSeeds();
  ReaderSeeds();
  ColumnStreamSeeds();
  RequestSeeds();
  RandomSeeds("request_fuzz", 1, {16, 64, 256});
  RandomSeeds("differential_fuzz", 2, {32, 128, 512, 2048});
  return 0;
}
