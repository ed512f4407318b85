#include "tests/storage/table_harness.h"

#include <algorithm>
#include <span>

#include "storage/block/block_table.h"
#include "storage/block/block_table_builder.h"
#include "storage/cuckoo/cuckoo_table.h"
#include "util/escape.h"

namespace roost::testing {

std::optional<std::string> TableHarness::Get(const std::string& key) {
  std::string value;
  auto found = table_->Get(key, &value);
  if (!found.ok() || !*found) return std::nullopt;
  return value;
}

std::vector<std::optional<std::string>> TableHarness::MultiGet(
    const std::vector<std::string>& keys) {
  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<LookupResult> results(keys.size());
  ValuePins pins;
  std::vector<std::optional<std::string>> out(keys.size());
  if (!table_->MultiGet(views, results, &pins).ok()) return out;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (results[i].found) out[i] = std::string(results[i].value);
  }
  return out;
}

namespace {

class CuckooHarness : public TableHarness {
 public:
  CuckooHarness(CuckooBuildOptions options, TableReadOptions read_options)
      : options_(options), read_options_(read_options) {}

  absl::Status Build(const Pairs& pairs, DuplicatePolicy policy,
                     const std::string& path) override {
    CuckooBuildOptions options = options_;
    options.on_duplicate = policy;
    auto builder = CuckooTableBuilder::Create(path, options);
    if (!builder.ok()) return builder.status();
    for (const auto& [k, v] : pairs) {
      absl::Status s = (*builder)->Add(k, v);
      if (!s.ok()) return s;
    }
    return (*builder)->Finish().status();
  }

  absl::Status Open(const std::string& path) override {
    auto table = CuckooTable::Open(path, read_options_);
    if (!table.ok()) return table.status();
    table_ = std::move(*table);
    return absl::OkStatus();
  }

 private:
  CuckooBuildOptions options_;
  TableReadOptions read_options_;
};

// The block table takes sorted, distinct keys: the harness sorts (stably)
// and applies the duplicate policy itself, as roost-load does.
class BlockHarness : public TableHarness {
 public:
  // With `expected_keys_factor` > 0, the builder is told to expect that
  // fraction of the pairs (the filter's size), as roost-load tells it the
  // records it sorted.
  BlockHarness(BlockBuildOptions options, TableReadOptions read_options,
               double expected_keys_factor)
      : options_(options),
        read_options_(read_options),
        expected_keys_factor_(expected_keys_factor) {}

  absl::Status Build(const Pairs& pairs, DuplicatePolicy policy,
                     const std::string& path) override {
    std::vector<size_t> order(pairs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return pairs[a].first < pairs[b].first;
    });
    BlockBuildOptions options = options_;
    if (expected_keys_factor_ > 0) {
      options.expected_keys = std::max<uint64_t>(
          1, static_cast<uint64_t>(expected_keys_factor_ * pairs.size()));
    }
    auto builder = BlockTableBuilder::Create(path, options);
    if (!builder.ok()) return builder.status();
    for (size_t j = 0; j < order.size(); ++j) {
      const auto& [k, v] = pairs[order[j]];
      const bool dup_next =
          j + 1 < order.size() && pairs[order[j + 1]].first == k;
      const bool dup_prev = j > 0 && pairs[order[j - 1]].first == k;
      if (policy == DuplicatePolicy::kError && dup_next) {
        return absl::InvalidArgumentError("duplicate key " + PrintableKey(k));
      }
      if ((policy == DuplicatePolicy::kKeepFirst && dup_prev) ||
          (policy == DuplicatePolicy::kKeepLast && dup_next)) {
        continue;
      }
      absl::Status s = (*builder)->Add(k, v);
      if (!s.ok()) return s;
    }
    return (*builder)->Finish().status();
  }

  absl::Status Open(const std::string& path) override {
    auto table = BlockTable::Open(path, read_options_);
    if (!table.ok()) return table.status();
    table_ = std::move(*table);
    return absl::OkStatus();
  }

 private:
  BlockBuildOptions options_;
  TableReadOptions read_options_;
  double expected_keys_factor_;
};

HarnessFactory Block(std::string name, BlockBuildOptions options,
                     TableReadOptions read_options = {},
                     double expected_keys_factor = 0) {
  return {std::move(name), [options, read_options, expected_keys_factor] {
            return std::make_unique<BlockHarness>(options, read_options,
                                                  expected_keys_factor);
          }};
}

HarnessFactory Cuckoo(std::string name, CuckooBuildOptions options,
                      TableReadOptions read_options = {}) {
  return {std::move(name), [options, read_options] {
            return std::make_unique<CuckooHarness>(options, read_options);
          }};
}

}  // namespace

std::vector<HarnessFactory> AllHarnesses() {
  CuckooBuildOptions three_hashes;
  three_hashes.num_hash_functions = 3;
  three_hashes.overflow_bits_per_block = 8;
  CuckooBuildOptions dense;
  dense.utilization = 0.97;
  dense.overflow_bits_per_block = 1;
  CuckooBuildOptions sparse;
  sparse.utilization = 0.5;
  TableReadOptions huge_pages;
  huge_pages.load_mode = LoadMode::kAnonymousHugePages;
  TableReadOptions locked;
  locked.load_mode = LoadMode::kMmapLocked;
  BlockBuildOptions tiny_blocks;
  tiny_blocks.block_size = 64;
  BlockBuildOptions restart1;
  restart1.restart_interval = 1;
  BlockBuildOptions restart1024;
  restart1024.restart_interval = 1024;
  BlockBuildOptions no_hash;
  no_hash.hash_index = false;
  BlockBuildOptions snappy;
  snappy.compression = Compression::kSnappy;
  BlockBuildOptions zstd;
  zstd.compression = Compression::kZstd;
  zstd.block_size = 512;
  BlockBuildOptions binary;
  binary.index_search = IndexSearch::kBinary;
  BlockBuildOptions interpolation;
  interpolation.index_search = IndexSearch::kInterpolation;
  interpolation.block_size = 256;
  TableReadOptions tiny_cache;
  tiny_cache.block_cache = std::make_shared<BlockCache>(4096);
  BlockBuildOptions filter;
  filter.filter_bits_per_key = 10;
  BlockBuildOptions filter_tiny_snappy = filter;
  filter_tiny_snappy.block_size = 64;
  filter_tiny_snappy.compression = Compression::kSnappy;
  filter_tiny_snappy.filter_bits_per_key = 4;
  BlockBuildOptions filter_interpolation = interpolation;
  filter_interpolation.filter_bits_per_key = 20;
  filter_interpolation.hash_index = false;
  BlockBuildOptions filter_one_bit = filter;
  filter_one_bit.filter_bits_per_key = 1;
  return {
      Block("Block", {}),
      Block("BlockTinyBlocks", tiny_blocks),
      Block("BlockRestart1", restart1),
      Block("BlockRestart1024", restart1024),
      Block("BlockNoHashIndex", no_hash),
      Block("BlockSnappy", snappy),
      Block("BlockZstdTinyCache", zstd, tiny_cache),
      Block("BlockBinarySearch", binary),
      Block("BlockInterpolation", interpolation),
      Block("BlockFilter", filter),
      Block("BlockFilterExpectedKeys", filter, {}, 1.0),
      // Far fewer keys expected than come: a crowded filter.
      Block("BlockFilterUnderestimated", filter, {}, 0.01),
      Block("BlockFilterOverestimated", filter, {}, 3.0),
      Block("BlockFilterTinyBlocksSnappy", filter_tiny_snappy, {}, 1.0),
      Block("BlockFilterInterpolationNoHash", filter_interpolation),
      Block("BlockFilterOneBit", filter_one_bit, {}, 1.0),
      Cuckoo("Cuckoo", {}),
      Cuckoo("CuckooThreeHashes", three_hashes),
      Cuckoo("CuckooDense", dense),
      Cuckoo("CuckooSparse", sparse),
      Cuckoo("CuckooHugePages", {}, huge_pages),
      Cuckoo("CuckooLocked", {}, locked),
  };
}

}  // namespace roost::testing
