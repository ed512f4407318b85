// What the libFuzzer targets in fuzz/ share: a scratch directory for the
// files the code under test insists on opening by path, a guard that makes
// AddressSanitizer see reads past the end of a mapped table, checksum
// fix-ups that let mutated tables past their checksums, and failure reports.
//
// Example (in LLVMFuzzerTestOneInput):
//   const std::string path = fuzz::ScratchPath("t");
//   fuzz::WriteFileOrDie(path, fuzz::FixCuckooChecksums(input));
//   auto table = CuckooTable::Open(path);
//   if (!table.ok()) return 0;
//   fuzz::TailGuard guard((*table)->file_data());
//   ... look keys up, fuzz::Touch() every value returned ...
//   if (wrong) fuzz::Fail("MultiGet disagrees with Get for key ", i);
#ifndef ROOST_FUZZ_FUZZ_UTIL_H_
#define ROOST_FUZZ_FUZZ_UTIL_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "util/str_cat.h"

namespace roost::fuzz {

// A directory of this process's own (mkdtemp): under /dev/shm when it is
// writable, so that the files written for every input never reach a disk,
// else under $TMPDIR. Made on first use and removed when the process exits
// normally (a crash leaves it for the reproducer to look at).
const std::string& ScratchDir();
// ScratchDir()/name.
std::string ScratchPath(std::string_view name);

// Writes `bytes` to `path`, created or truncated; aborts when it cannot.
void WriteFileOrDie(const std::string& path, std::string_view bytes);

// Reads every byte of `bytes` and returns a value that depends on them, so
// that a view returned by the code under test is checked by AddressSanitizer
// (a view into freed memory or past a buffer is reported here).
uint64_t Touch(std::string_view bytes);

// Poisons the bytes between the end of a mapped file and the end of its last
// page for as long as it lives, so that AddressSanitizer reports a read past
// the end of a table file (the kernel maps whole pages, and the tail of the
// last one reads as zeros rather than faulting). REQUIRES: `mapped` is the
// whole mapping of a file (file_data() of a table opened with
// LoadMode::kMmap), and it outlives the guard.
class TailGuard {
 public:
  explicit TailGuard(std::string_view mapped);
  ~TailGuard();
  TailGuard(const TailGuard&) = delete;
  TailGuard& operator=(const TailGuard&) = delete;

 private:
  const char* begin_ = nullptr;
  size_t size_ = 0;
};

// A copy of a cuckoo table file whose header checksum, and, when the header
// then decodes, every region checksum, are recomputed: mutations get past
// the checksums to the checks and lookups behind them. Anything too short to
// hold a header comes back unchanged.
std::string FixCuckooChecksums(std::string file);

// The same for a block table: the footer checksum, then the index block's
// trailer (and the filter block's, in 2.0), then the trailer of every data
// block the index names (within the
// data region).
std::string FixBlockTableChecksums(std::string file);

// Prints "roost fuzz: " and the message on stderr and aborts, which libFuzzer
// reports as a crash and saves the input of.
[[noreturn]] void FailMessage(const std::string& message);
template <typename... Args>
[[noreturn]] void Fail(const Args&... args) {
  FailMessage(StrCat(args...));
}

}  // namespace roost::fuzz

#endif  // ROOST_FUZZ_FUZZ_UTIL_H_
