// The machine's ceiling in the suite: independent and dependent random
// 64-byte reads over an array the size of roost's cuckoo table, with and
// without huge pages.

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "bench/peers/peer.h"

namespace roost::bench {
namespace {

namespace fs = std::filesystem;

void Ceiling(const Settings& s, uint64_t bytes, Recorder& rec) {
  const size_t lines = std::max<size_t>(bytes / 64, 2);
  const size_t size = lines * 64;
  for (const bool huge : {false, true}) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) Die("ceiling: mmap failed");
    madvise(p, size, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    char* base = static_cast<char*>(p);
    // A random cyclic permutation of the lines: line perm[i] holds the
    // number of line perm[i + 1].
    std::mt19937_64 rng(7);
    std::vector<uint64_t> perm(lines);
    for (size_t i = 0; i < lines; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    for (size_t i = 0; i < lines; ++i) {
      std::memcpy(base + perm[i] * 64, &perm[(i + 1) % lines], 8);
    }
    const size_t reads = s.probes;
    std::vector<uint64_t> order(reads);
    for (auto& o : order) o = rng() % lines;
    const std::string suffix = huge ? ", huge pages" : "";
    std::vector<double> independent, dependent;
    uint64_t sink = 0;
    for (int r = 0; r < s.repeats; ++r) {
      auto start = std::chrono::steady_clock::now();
      for (size_t i = 0; i < reads; ++i) {
        uint64_t v;
        std::memcpy(&v, base + order[i] * 64, 8);
        sink += v;
      }
      independent.push_back(SecondsSince(start));
      uint64_t line = perm[0];
      start = std::chrono::steady_clock::now();
      for (size_t i = 0; i < reads; ++i)
        std::memcpy(&line, base + line * 64, 8);
      dependent.push_back(SecondsSince(start));
      sink += line;
    }
    if (sink == 1) std::fprintf(stderr, " ");  // keeps the reads
    std::sort(independent.begin(), independent.end());
    std::sort(dependent.begin(), dependent.end());
    rec.Print("ceiling", "independent 64-byte reads" + suffix, "read", "-",
              reads, independent[independent.size() / 2], size);
    rec.Print("ceiling", "dependent 64-byte reads" + suffix, "read", "-", reads,
              dependent[dependent.size() / 2], size);
    munmap(p, size);
  }
}

class CeilingPeer final : public Peer {
 public:
  std::string_view name() const override { return "ceiling"; }
  void Measure(Suite& suite) const override {
    if (suite.cuckoo_bytes == 0) {  // the size roost's cuckoo table would have
      const fs::path path = suite.settings.dir / "size.sst";
      suite.cuckoo_bytes = BuildRoostCuckoo(suite.data, path.string());
      fs::remove(path);
    }
    Ceiling(suite.settings, suite.cuckoo_bytes, suite.rec);
  }
};

}  // namespace

std::unique_ptr<Peer> NewCeilingPeer() {
  return std::make_unique<CeilingPeer>();
}

}  // namespace roost::bench
