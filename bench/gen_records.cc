// Writes the input of bench/load_bench.sh: N pairs of uniformly random
// 8-byte keys and 8-byte values, in random (unsorted) order, as
//
//   DIR/records.bin  fixed-width binary records: 8 key bytes, 8 value bytes
//   DIR/records.tsv  the same pairs, in the same order, as hex<TAB>hex lines
//   DIR/probes.txt   a few of the pairs, for `roost-load get` checks
//
// Key i is a bijective 64-bit mix of (seed, i), so the N keys are distinct
// by construction; value i is a different mix of the key. The same N and
// seed give byte-identical files.
//
//   gen_records N SEED DIR
//
// probes.txt lines: "hit KEYHEX VALUEHEX" for pairs whose key and value
// hold no zero byte, whose key holds no newline (which a shell's command
// substitution would strip) and does not start with '-' (so both pass
// through argv and `get`'s output intact), and "miss KEYHEX" for a key that
// is not in the set.

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/generated_pairs.h"

namespace {

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "gen_records: %s\n", what.c_str());
  std::exit(1);
}

std::FILE* Create(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) Die(path + ": " + std::strerror(errno));
  return f;
}

void Write(std::FILE* f, const void* data, size_t n, const std::string& path) {
  if (n > 0 && std::fwrite(data, 1, n, f) != n) {
    Die(path + ": " + std::strerror(errno));
  }
}

void Close(std::FILE* f, const std::string& path) {
  if (std::fclose(f) != 0) Die(path + ": " + std::strerror(errno));
}

constexpr char kHexDigits[] = "0123456789abcdef";

// The 16 hex digits of the 8 bytes of `x` as they lie in memory.
void Hex(uint64_t x, char* out) {
  unsigned char bytes[8];
  std::memcpy(bytes, &x, 8);
  for (int i = 0; i < 8; ++i) {
    out[2 * i] = kHexDigits[bytes[i] >> 4];
    out[2 * i + 1] = kHexDigits[bytes[i] & 15];
  }
}

std::string HexString(uint64_t x) {
  char buf[16];
  Hex(x, buf);
  return std::string(buf, 16);
}

bool ArgvSafe(uint64_t x, bool is_key) {
  unsigned char bytes[8];
  std::memcpy(bytes, &x, 8);
  for (unsigned char b : bytes) {
    if (b == 0 || (is_key && b == '\n')) return false;
  }
  return !is_key || bytes[0] != '-';
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) Die("usage: gen_records N SEED DIR");
  char* end = nullptr;
  const uint64_t n = std::strtoull(argv[1], &end, 10);
  if (*end != '\0' || n == 0) Die("N must be a positive integer");
  const uint64_t seed = std::strtoull(argv[2], &end, 10);
  if (*end != '\0') Die("SEED must be an integer");
  const std::string dir = argv[3];

  // The miss is Key(j) for a j >= n, so it is not among the keys.
  const roost::bench::GeneratedPairs pairs(seed);
  auto key_of = [&pairs](uint64_t i) { return pairs.Key(i); };
  auto value_of = &roost::bench::GeneratedPairs::ValueOf;

  const std::string bin_path = dir + "/records.bin";
  const std::string tsv_path = dir + "/records.tsv";
  const std::string probe_path = dir + "/probes.txt";
  std::FILE* bin = Create(bin_path);
  std::FILE* tsv = Create(tsv_path);

  constexpr size_t kBatch = 1 << 16;  // records per write
  std::vector<uint64_t> bin_buf;
  std::vector<char> tsv_buf;
  bin_buf.reserve(2 * kBatch);
  tsv_buf.reserve(34 * kBatch);
  std::vector<std::string> probes;
  // Probes spread over the input: near the start, the middle and the end.
  const uint64_t probe_at[] = {0, n / 2, n - n / 16};
  size_t next_probe = 0;

  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t key = key_of(i);
    const uint64_t value = value_of(key);
    bin_buf.push_back(key);
    bin_buf.push_back(value);
    char line[34];
    Hex(key, line);
    line[16] = '\t';
    Hex(value, line + 17);
    line[33] = '\n';
    tsv_buf.insert(tsv_buf.end(), line, line + 34);
    if (next_probe < std::size(probe_at) && i >= probe_at[next_probe] &&
        ArgvSafe(key, true) && ArgvSafe(value, false)) {
      probes.push_back("hit " + HexString(key) + " " + HexString(value));
      ++next_probe;
      while (next_probe < std::size(probe_at) && probe_at[next_probe] <= i) {
        ++next_probe;
      }
    }
    if (bin_buf.size() == 2 * kBatch || i + 1 == n) {
      Write(bin, bin_buf.data(), bin_buf.size() * sizeof(uint64_t), bin_path);
      Write(tsv, tsv_buf.data(), tsv_buf.size(), tsv_path);
      bin_buf.clear();
      tsv_buf.clear();
    }
  }
  Close(bin, bin_path);
  Close(tsv, tsv_path);

  for (uint64_t j = n;; ++j) {
    const uint64_t key = key_of(j);
    if (ArgvSafe(key, true)) {
      probes.push_back("miss " + HexString(key));
      break;
    }
  }
  std::FILE* probe_file = Create(probe_path);
  for (const std::string& p : probes) {
    Write(probe_file, p.data(), p.size(), probe_path);
    Write(probe_file, "\n", 1, probe_path);
  }
  Close(probe_file, probe_path);
  return 0;
}
