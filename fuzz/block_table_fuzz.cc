// block_table_fuzz: the input is a block table file.
//
// It is opened as it is (checksums verified) and with its footer, index and
// data block checksums recomputed (fuzz_util.h), so that mutations reach the
// footer's checks, the index, the blocks and their decompression. Every
// table that opens is read whole with an iterator, every key seen is looked
// up with Get, MultiGet and Seek, and so are near misses; read options (hash
// index, index search, block cache size) come from a hash of the input, so
// that one input always runs the same way. A table may be damaged in ways
// no checksum shows, so nothing is asserted about the answers: only that
// nothing crashes, leaks or reads out of bounds, and that damage is
// reported as DataLoss.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "storage/block/block_table.h"
#include "storage/hash.h"

namespace roost::fuzz {
namespace {

constexpr size_t kMaxEntries = 4096;

void CheckError(const absl::Status& status, std::string_view what) {
  if (!status.ok() && status.code() != absl::StatusCode::kDataLoss) {
    Fail(what, " failed with other than DataLoss: ", status.ToString());
  }
}

void ReadEverything(const BlockTable& table) {
  TailGuard guard(table.file_data());
  std::vector<std::string> keys;
  auto it = table.NewIterator();
  size_t entries = 0;
  for (it->SeekToFirst(); it->Valid() && entries < kMaxEntries; it->Next()) {
    ++entries;
    Touch(it->value());
    if (keys.size() < 256) keys.emplace_back(it->key());
  }
  CheckError(it->status(), "iteration");

  const size_t seen = keys.size();
  for (size_t i = 0; i < seen && i < 32; ++i) {
    std::string k = keys[i];
    keys.push_back(k + '\0');
    if (!k.empty()) {
      keys.push_back(k.substr(0, k.size() - 1));
      k.back() = static_cast<char>(k.back() + 1);
      keys.push_back(k);
    }
  }
  keys.emplace_back();
  keys.emplace_back("\xff\xff\xff\xff");

  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<LookupResult> results(views.size());
  ValuePins pins;
  table.RequestPages(views);  // reads the index and filter, asks for pages
  const absl::Status multi = table.MultiGet(views, results, &pins);
  CheckError(multi, "MultiGet");
  for (size_t i = 0; i < views.size(); ++i) {
    BlockTable::Value value;
    auto got = table.Get(views[i], &value);
    CheckError(got.status(), "Get");
    if (got.ok() && *got) Touch(value.view());
    if (multi.ok() && results[i].found) Touch(results[i].value);
  }
  for (size_t i = 0; i < views.size(); i += 3) {
    it->Seek(views[i]);
    for (int steps = 0; it->Valid() && steps < 3; ++steps) {
      Touch(it->key());
      Touch(it->value());
      it->Next();
    }
    CheckError(it->status(), "Seek");
  }
  CheckError(table.VerifyChecksums(), "VerifyChecksums");
}

TableReadOptions OptionsFor(std::string_view input) {
  const uint64_t h = Hash64(input, 0x626c6f636b2d667aULL);
  TableReadOptions options;
  options.use_hash_index = (h & 1) != 0;
  switch ((h >> 1) % 4) {
    case 0:
      break;  // as the file says
    case 1:
      options.index_search = IndexSearch::kBinary;
      break;
    case 2:
      options.index_search = IndexSearch::kInterpolation;
      break;
    case 3:
      options.index_search = IndexSearch::kAuto;
      break;
  }
  constexpr size_t kCacheSizes[] = {0, 256, 4096, 64 << 20};
  options.block_cache = std::make_shared<BlockCache>(kCacheSizes[(h >> 3) % 4]);
  // Mostly through the filter (2.0), as a server reads.
  options.use_filter = (h >> 5) % 4 != 0;
  return options;
}

}  // namespace
}  // namespace roost::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roost;
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::string path = fuzz::ScratchPath("block");
  const TableReadOptions options = fuzz::OptionsFor(input);

  fuzz::WriteFileOrDie(path, input);
  if (auto table = BlockTable::Open(path, options); table.ok()) {
    fuzz::ReadEverything(**table);
  }

  const std::string fixed = fuzz::FixBlockTableChecksums(input);
  if (fixed == input) return 0;
  fuzz::WriteFileOrDie(path, fixed);
  auto table = BlockTable::Open(path, options);
  if (!table.ok()) return 0;
  fuzz::ReadEverything(**table);
  return 0;
}
