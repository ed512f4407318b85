// differential_fuzz: the same pairs through both table formats and a
// std::map must give the same answers.
//
// The input (through FuzzedDataProvider) gives the builders' options (cuckoo:
// utilization, hash functions, overflow bits, displacement depth, seed; block:
// block size, restart interval, hash index and its utilization, compression,
// index search, filter bits and expected key count), a duplicate policy, the
// shape of keys and values (one width each, or any length), the pairs, and keys
// to look for that may be absent. The pairs go, in input order, into a cuckoo
// table (whose builder applies the duplicate policy) and, sorted with the
// policy applied as roost-load does, into a block table, both built by the real
// builders and opened verified. Then every key of the map and every absent key
// must give the map's answer from CuckooTable::Get and MultiGet,
// BlockTable::Get and MultiGet, and Table::Get and MultiGet on either file; the
// block table's iterator must list the map exactly; and Seek must land where
// std::map::lower_bound does.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/escaping.h"
#include "fuzz/fuzz_util.h"
#include "storage/block/block_table.h"
#include "storage/block/block_table_builder.h"
#include "storage/cuckoo/cuckoo_table.h"
#include "storage/cuckoo/cuckoo_table_builder.h"
#include "storage/table.h"
#include "util/escape.h"

namespace roost::fuzz {
namespace {

constexpr size_t kMaxPairs = 300;

std::string Printable(const std::optional<std::string>& v) {
  return v ? PrintableKey(*v) : std::string("(absent)");
}

void Expect(std::string_view who, std::string_view key,
            const std::optional<std::string>& got,
            const std::optional<std::string>& want) {
  if (got != want) {
    Fail(who, " gives ", Printable(got), " for key ", PrintableKey(key),
         " where the map has ", Printable(want));
  }
}

CuckooBuildOptions CuckooOptions(FuzzedDataProvider& in) {
  CuckooBuildOptions o;
  o.utilization = in.PickValueInArray({0.3, 0.5, 0.8, 0.9, 0.95, 0.99});
  o.num_hash_functions = in.ConsumeIntegralInRange(2, 8);
  o.overflow_bits_per_block = in.PickValueInArray({1, 2, 4, 8});
  o.max_displacement_depth = in.ConsumeIntegralInRange(0, 8);
  o.seed = in.ConsumeIntegral<uint64_t>();
  return o;
}

BlockBuildOptions BlockOptions(FuzzedDataProvider& in) {
  BlockBuildOptions o;
  o.block_size = in.PickValueInArray<uint32_t>({1, 16, 64, 256, 1024, 4096});
  o.restart_interval = in.PickValueInArray<uint32_t>({1, 2, 3, 4, 16, 1024});
  o.hash_index = in.ConsumeBool();
  o.hash_index_utilization = in.PickValueInArray({0.1, 0.5, 0.75, 1.0});
  o.compression = in.PickValueInArray(
      {Compression::kNone, Compression::kSnappy, Compression::kZstd});
  o.index_search = in.PickValueInArray(
      {IndexSearch::kBinary, IndexSearch::kInterpolation, IndexSearch::kAuto});
  o.uniformity_threshold = in.PickValueInArray({0.0, 0.2, 1.0, 100.0});
  o.filter_bits_per_key = in.PickValueInArray<uint32_t>({0, 0, 1, 4, 10, 32});
  o.expected_keys = in.PickValueInArray<uint64_t>({0, 1, 5, 100, 10000});
  return o;
}

// A key or value: exactly `width` bytes when it has a width, else any length.
std::string Field(FuzzedDataProvider& in, std::optional<size_t> width,
                  size_t max_length) {
  if (width) {
    std::string s = in.ConsumeBytesAsString(*width);
    s.resize(*width, '\0');
    return s;
  }
  return in.ConsumeRandomLengthString(max_length);
}

// The options and pairs a build was given, for a failure's message.
std::string Describe(
    const CuckooBuildOptions& o,
    const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string out =
      StrCat("utilization ", o.utilization, ", ", o.num_hash_functions,
             " hash functions, ", o.overflow_bits_per_block,
             " overflow bits, displacement depth ", o.max_displacement_depth,
             ", seed ", o.seed, "; ", pairs.size(), " pairs, in hex:");
  for (const auto& [key, value] : pairs) {
    out += StrCat("\n  ", absl::BytesToHexString(key), " -> ",
                  absl::BytesToHexString(value));
  }
  return out;
}

struct Lookups {
  std::vector<std::string> keys;
  std::vector<std::optional<std::string>> want;
};

void CheckCuckoo(const std::string& path, const Lookups& l,
                 const std::map<std::string, std::string>& map) {
  auto table = CuckooTable::Open(path);
  if (!table.ok())
    Fail("cuckoo table does not open: ", table.status().ToString());
  TailGuard guard((*table)->file_data());
  if ((*table)->num_keys() != map.size()) {
    Fail("cuckoo table holds ", (*table)->num_keys(), " keys, not ",
         map.size());
  }
  std::vector<std::string_view> views(l.keys.begin(), l.keys.end());
  std::vector<LookupResult> results(views.size());
  (*table)->MultiGet(views, results);
  for (size_t i = 0; i < views.size(); ++i) {
    std::string_view value;
    std::optional<std::string> got;
    if ((*table)->Get(views[i], &value)) got = std::string(value);
    Expect("CuckooTable::Get", views[i], got, l.want[i]);
    got.reset();
    if (results[i].found) got = std::string(results[i].value);
    Expect("CuckooTable::MultiGet", views[i], got, l.want[i]);
  }
}

void CheckBlock(const std::string& path, const Lookups& l,
                const std::map<std::string, std::string>& map,
                bool use_hash_index) {
  TableReadOptions options;
  options.use_hash_index = use_hash_index;
  auto table = BlockTable::Open(path, options);
  if (!table.ok())
    Fail("block table does not open: ", table.status().ToString());
  TailGuard guard((*table)->file_data());
  std::vector<std::string_view> views(l.keys.begin(), l.keys.end());
  std::vector<LookupResult> results(views.size());
  ValuePins pins;
  if (absl::Status s = (*table)->MultiGet(views, results, &pins); !s.ok()) {
    Fail("BlockTable::MultiGet: ", s.ToString());
  }
  for (size_t i = 0; i < views.size(); ++i) {
    BlockTable::Value value;
    auto hit = (*table)->Get(views[i], &value);
    if (!hit.ok()) Fail("BlockTable::Get: ", hit.status().ToString());
    std::optional<std::string> got;
    if (*hit) got = std::string(value.view());
    Expect("BlockTable::Get", views[i], got, l.want[i]);
    got.reset();
    if (results[i].found) got = std::string(results[i].value);
    Expect("BlockTable::MultiGet", views[i], got, l.want[i]);
  }

  auto it = (*table)->NewIterator();
  auto m = map.begin();
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
    if (m == map.end() || it->key() != m->first || it->value() != m->second) {
      Fail("the block table's iterator gives key ", PrintableKey(it->key()),
           " where the map has ",
           m == map.end() ? std::string("no more") : PrintableKey(m->first));
    }
  }
  if (!it->status().ok()) Fail("iteration: ", it->status().ToString());
  if (m != map.end())
    Fail("the iterator stops before ", PrintableKey(m->first));
  for (const std::string& key : l.keys) {
    it->Seek(key);
    const auto want = map.lower_bound(key);
    if (!it->status().ok()) Fail("Seek: ", it->status().ToString());
    if (it->Valid() != (want != map.end()) ||
        (it->Valid() && it->key() != want->first)) {
      Fail("Seek(", PrintableKey(key), ") lands on ",
           it->Valid() ? PrintableKey(it->key()) : std::string("the end"),
           " where lower_bound gives ",
           want == map.end() ? std::string("the end")
                             : PrintableKey(want->first));
    }
  }
}

// The Table interface over either file: Get, and MultiGet of all the keys
// at once (with the cuckoo table's batch of one, its own path, too).
void CheckTable(const std::string& path, const Lookups& l) {
  auto table = Table::Open(path);
  if (!table.ok()) Fail("Table::Open: ", table.status().ToString());
  std::vector<std::string_view> views(l.keys.begin(), l.keys.end());
  std::vector<LookupResult> results(views.size());
  ValuePins pins;
  if (absl::Status s = (*table)->MultiGet(views, results, &pins); !s.ok()) {
    Fail("Table::MultiGet: ", s.ToString());
  }
  for (size_t i = 0; i < l.keys.size(); ++i) {
    std::string value;
    auto hit = (*table)->Get(l.keys[i], &value);
    if (!hit.ok()) Fail("Table::Get: ", hit.status().ToString());
    Expect("Table::Get", l.keys[i],
           *hit ? std::optional<std::string>(value) : std::nullopt, l.want[i]);
    Expect("Table::MultiGet", l.keys[i],
           results[i].found ? std::optional<std::string>(results[i].value)
                            : std::nullopt,
           l.want[i]);
  }
}

}  // namespace
}  // namespace roost::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roost;
  FuzzedDataProvider in(data, size);
  CuckooBuildOptions cuckoo_options = fuzz::CuckooOptions(in);
  const BlockBuildOptions block_options = fuzz::BlockOptions(in);
  const bool keep_last = in.ConsumeBool();
  cuckoo_options.on_duplicate =
      keep_last ? DuplicatePolicy::kKeepLast : DuplicatePolicy::kKeepFirst;
  const bool use_hash_index = in.ConsumeBool();
  std::optional<size_t> key_width, value_width;
  if (in.ConsumeBool()) key_width = in.ConsumeIntegralInRange<size_t>(0, 16);
  if (in.ConsumeBool()) value_width = in.ConsumeIntegralInRange<size_t>(0, 16);
  const size_t max_length = in.ConsumeIntegralInRange<size_t>(0, 64);
  const size_t num_pairs =
      in.ConsumeIntegralInRange<size_t>(0, fuzz::kMaxPairs);
  const size_t num_absent = in.ConsumeIntegralInRange<size_t>(0, 16);

  std::vector<std::pair<std::string, std::string>> pairs;
  std::map<std::string, std::string> map;
  for (size_t i = 0; i < num_pairs && in.remaining_bytes() > 0; ++i) {
    std::string key = fuzz::Field(in, key_width, max_length);
    std::string value = fuzz::Field(in, value_width, max_length);
    if (keep_last) {
      map[key] = value;
    } else {
      map.emplace(key, value);
    }
    pairs.emplace_back(std::move(key), std::move(value));
  }
  fuzz::Lookups lookups;
  for (const auto& [key, value] : map) {
    lookups.keys.push_back(key);
    lookups.want.push_back(value);
  }
  // Absent keys: near misses of present ones, and keys from the input.
  std::vector<std::string> candidates;
  for (const auto& [key, value] : map) {
    if (candidates.size() >= 3 * num_absent) break;
    candidates.push_back(key + '\0');
    if (!key.empty()) {
      candidates.push_back(key.substr(0, key.size() - 1));
      std::string next = key;
      next.back() = static_cast<char>(next.back() + 1);
      candidates.push_back(next);
    }
  }
  for (size_t i = 0; i < num_absent; ++i) {
    candidates.push_back(fuzz::Field(in, key_width, max_length));
  }
  candidates.emplace_back();
  for (const std::string& key : candidates) {
    if (map.count(key) == 0) {
      lookups.keys.push_back(key);
      lookups.want.push_back(std::nullopt);
    }
  }

  const std::string cuckoo_path = fuzz::ScratchPath("differential.cuckoo");
  const std::string block_path = fuzz::ScratchPath("differential.block");
  auto cuckoo = CuckooTableBuilder::Create(cuckoo_path, cuckoo_options);
  if (!cuckoo.ok()) {
    fuzz::Fail("CuckooTableBuilder::Create: ", cuckoo.status().ToString());
  }
  for (const auto& [key, value] : pairs) {
    if (absl::Status s = (*cuckoo)->Add(key, value); !s.ok()) {
      fuzz::Fail("CuckooTableBuilder::Add: ", s.ToString());
    }
  }
  auto report = (*cuckoo)->Finish();
  if (!report.ok())
    fuzz::Fail("CuckooTableBuilder::Finish: ", report.status().ToString(), "\n",
               fuzz::Describe(cuckoo_options, pairs));
  if (report->num_keys != map.size() ||
      report->duplicates_dropped != pairs.size() - map.size()) {
    fuzz::Fail("the cuckoo builder kept ", report->num_keys, " keys of ",
               pairs.size(), " where the map has ", map.size());
  }

  auto block = BlockTableBuilder::Create(block_path, block_options);
  if (!block.ok())
    fuzz::Fail("BlockTableBuilder::Create: ", block.status().ToString());
  for (const auto& [key, value] : map) {
    if (absl::Status s = (*block)->Add(key, value); !s.ok()) {
      fuzz::Fail("BlockTableBuilder::Add: ", s.ToString());
    }
  }
  if (auto r = (*block)->Finish(); !r.ok()) {
    fuzz::Fail("BlockTableBuilder::Finish: ", r.status().ToString());
  }

  fuzz::CheckCuckoo(cuckoo_path, lookups, map);
  fuzz::CheckBlock(block_path, lookups, map, use_hash_index);
  fuzz::CheckTable(cuckoo_path, lookups);
  fuzz::CheckTable(block_path, lookups);
  return 0;
}
