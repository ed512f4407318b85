// Helpers shared by the test suites: scratch directories and random data.
#ifndef ROOST_TESTS_HARNESS_TEST_UTIL_H_
#define ROOST_TESTS_HARNESS_TEST_UTIL_H_

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace roost::testing {

// A fresh directory under $TMPDIR, removed with everything in it when the
// object goes away.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "roost-test-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) std::abort();
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    // Published versions are read-only (0555), which, unless root, keeps
    // their files from being removed: make every directory writable first.
    for (auto it = std::filesystem::recursive_directory_iterator(path_, ec);
         !ec && it != std::filesystem::recursive_directory_iterator();
         it.increment(ec)) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) {
        std::filesystem::permissions(it->path(),
                                     std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::add, ec);
      }
    }
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string File(const std::string& name) const {
    return (path_ / name).string();
  }

 private:
  std::filesystem::path path_;
};

// The VmFlags of this process's mapping that holds `address`, from
// /proc/self/smaps ("rd mr mw me rr ..."; "rr" is MADV_RANDOM); empty when
// no mapping holds it.
inline std::string MappingVmFlags(const void* address) {
  const auto at = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    if (line.rfind("VmFlags:", 0) == 0) {
      if (inside) return line.substr(8) + " ";
      continue;
    }
    // A mapping's first line: "BEGIN-END perms offset ...", in hex.
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= at && at < end;
    }
  }
  return "";
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

inline std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

using Pairs = std::vector<std::pair<std::string, std::string>>;

// `n` pairs with distinct random keys of `key_size` bytes and values of
// `value_size` bytes.
inline Pairs RandomFixedPairs(uint64_t seed, size_t n, size_t key_size,
                              size_t value_size) {
  std::mt19937_64 rng(seed);
  Pairs pairs;
  pairs.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    // The index in the first bytes keeps keys distinct when they are long
    // enough; short keys are random (callers dedupe if they care).
    std::string key = RandomBytes(rng, key_size);
    for (size_t b = 0; b < std::min<size_t>(key_size, 8); ++b) {
      key[b] = static_cast<char>(i >> (8 * b));
    }
    if (key_size >= 8) {
      // Scramble so keys are not sequential: xor with a hash of the index.
      uint64_t x = i * 0x9e3779b97f4a7c15ULL;
      x ^= x >> 29;
      for (size_t b = 0; b < 8; ++b) key[b] = static_cast<char>(x >> (8 * b));
    }
    pairs.emplace_back(std::move(key), RandomBytes(rng, value_size));
  }
  return pairs;
}

// `n` pairs with distinct keys of length in [min_key, max_key] and values of
// length in [min_value, max_value].
inline Pairs RandomVariablePairs(uint64_t seed, size_t n, size_t min_key,
                                 size_t max_key, size_t min_value,
                                 size_t max_value) {
  std::mt19937_64 rng(seed);
  Pairs pairs;
  pairs.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t klen = min_key + rng() % (max_key - min_key + 1);
    std::string key = std::to_string(i) + "/";
    key += RandomBytes(rng, klen > key.size() ? klen - key.size() : 0);
    pairs.emplace_back(
        std::move(key),
        RandomBytes(rng, min_value + rng() % (max_value - min_value + 1)));
  }
  return pairs;
}

}  // namespace roost::testing

#endif  // ROOST_TESTS_HARNESS_TEST_UTIL_H_
