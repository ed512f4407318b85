// cuckoo_table_fuzz: the input is a cuckoo table file.
//
// It is opened twice: as it is (checksums verified, so a mutation is almost
// always refused, which is what that path is for), and with its header and
// region checksums recomputed (fuzz_util.h), so that mutations reach the
// header's sanity checks and the lookups. Every table that opens is looked
// up with keys it is likely to hold (read out of its buckets and heap the
// way the format lays them out), near misses of those, and the empty key;
// Get and MultiGet must agree, and every value returned is read in full
// under AddressSanitizer.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "storage/coding.h"
#include "storage/cuckoo/cuckoo_table.h"

namespace roost::fuzz {
namespace {

constexpr size_t kMaxKeys = 256;

// Keys the table is likely to hold: the key of each bucket (inline layout)
// or of each heap record (heap layout), as the header places them.
std::vector<std::string> KeysIn(const CuckooTable& table) {
  std::vector<std::string> keys;
  const CuckooHeader& h = table.header();
  const std::string_view file = table.file_data();
  if (h.layout == CuckooLayout::kInline) {
    const std::string_view buckets = h.buckets.In(file);
    for (uint64_t b = 0; b < h.num_blocks && keys.size() < kMaxKeys; ++b) {
      for (uint32_t s = 0; s < h.buckets_per_block; ++s) {
        const uint64_t at = b * h.block_size + uint64_t{s} * h.bucket_size;
        if (at + h.key_width > buckets.size()) break;
        keys.emplace_back(buckets.substr(at, h.key_width));
      }
    }
  } else {
    const std::string_view heap = h.heap.In(file);
    const char* p = heap.data();
    const char* limit = heap.data() + heap.size();
    while (p < limit && keys.size() < kMaxKeys) {
      uint64_t key_length, value_length;
      p = DecodeVarint64(p, limit, &key_length);
      if (p == nullptr) break;
      p = DecodeVarint64(p, limit, &value_length);
      if (p == nullptr || key_length > static_cast<uint64_t>(limit - p)) break;
      keys.emplace_back(p, key_length);
      p += key_length;
      if (value_length > static_cast<uint64_t>(limit - p)) break;
      p += value_length;
    }
  }
  return keys;
}

void LookUpEverything(const CuckooTable& table) {
  TailGuard guard(table.file_data());
  std::vector<std::string> keys = KeysIn(table);
  // Near misses: one byte shorter, one longer, the last byte changed.
  const size_t found_keys = keys.size();
  for (size_t i = 0; i < found_keys && i < 16; ++i) {
    std::string k = keys[i];
    keys.push_back(k + '\0');
    if (!k.empty()) {
      keys.push_back(k.substr(0, k.size() - 1));
      k.back() ^= 1;
      keys.push_back(k);
    }
  }
  keys.emplace_back();

  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<LookupResult> results(views.size());
  table.RequestPages(views);  // reads buckets and heap offsets, asks for pages
  table.MultiGet(views, results);
  for (size_t i = 0; i < views.size(); ++i) {
    std::string_view value;
    int blocks = 0;
    const bool found = table.Get(views[i], &value, &blocks);
    if (blocks < 0 || blocks > table.header().num_hashes) {
      Fail("Get probed ", blocks, " blocks with ", +table.header().num_hashes,
           " hash functions");
    }
    if (found != results[i].found ||
        (found && (value.data() != results[i].value.data() ||
                   value.size() != results[i].value.size()))) {
      Fail("MultiGet disagrees with Get on key ", i);
    }
    if (found) Touch(value);
  }
}

}  // namespace
}  // namespace roost::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roost;
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::string path = fuzz::ScratchPath("cuckoo");

  fuzz::WriteFileOrDie(path, input);
  if (auto table = CuckooTable::Open(path); table.ok()) {
    fuzz::LookUpEverything(**table);
  }

  const std::string fixed = fuzz::FixCuckooChecksums(input);
  if (fixed == input) return 0;
  fuzz::WriteFileOrDie(path, fixed);
  auto table = CuckooTable::Open(path);
  if (!table.ok()) return 0;
  if (absl::Status s = (*table)->VerifyChecksums(); !s.ok()) {
    fuzz::Fail("a table that opened verified fails VerifyChecksums: ",
               s.message());
  }
  fuzz::LookUpEverything(**table);
  return 0;
}
