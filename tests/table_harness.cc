#include "tests/table_harness.h"

#include <span>

#include "storage/cuckoo_table.h"

namespace roost::testing {
namespace {

class CuckooHarness : public TableHarness {
 public:
  CuckooHarness(CuckooTableOptions options, CuckooReadOptions read_options)
      : options_(options), read_options_(read_options) {}

  absl::Status Build(const Pairs& pairs, DuplicatePolicy policy,
                     const std::string& path) override {
    CuckooTableOptions options = options_;
    options.on_duplicate = policy;
    CuckooTableBuilder builder(options);
    for (const auto& [k, v] : pairs) {
      absl::Status s = builder.Add(k, v);
      if (!s.ok()) return s;
    }
    return builder.Finish(path).status();
  }

  absl::Status Open(const std::string& path) override {
    auto table = CuckooTable::Open(path, read_options_);
    if (!table.ok()) return table.status();
    table_ = std::move(*table);
    return absl::OkStatus();
  }

  std::optional<std::string> Get(const std::string& key) override {
    std::string_view value;
    if (!table_->Get(key, &value)) return std::nullopt;
    return std::string(value);
  }

  std::vector<std::optional<std::string>> MultiGet(
      const std::vector<std::string>& keys) override {
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::vector<LookupResult> results(keys.size());
    table_->MultiGet(views, results);
    std::vector<std::optional<std::string>> out;
    for (const LookupResult& r : results) {
      out.push_back(r.found ? std::optional<std::string>(std::string(r.value))
                            : std::nullopt);
    }
    return out;
  }

 private:
  CuckooTableOptions options_;
  CuckooReadOptions read_options_;
  std::unique_ptr<CuckooTable> table_;
};

HarnessFactory Cuckoo(std::string name, CuckooTableOptions options,
                      CuckooReadOptions read_options = {}) {
  return {std::move(name), [options, read_options] {
            return std::make_unique<CuckooHarness>(options, read_options);
          }};
}

}  // namespace

std::vector<HarnessFactory> AllHarnesses() {
  CuckooTableOptions three_hashes;
  three_hashes.num_hash_functions = 3;
  three_hashes.overflow_bits_per_block = 8;
  CuckooTableOptions dense;
  dense.utilization = 0.97;
  dense.overflow_bits_per_block = 1;
  CuckooTableOptions sparse;
  sparse.utilization = 0.5;
  CuckooReadOptions huge_pages;
  huge_pages.load_mode = LoadMode::kAnonymousHugePages;
  CuckooReadOptions locked;
  locked.load_mode = LoadMode::kMmapLocked;
  return {
      Cuckoo("Cuckoo", {}),
      Cuckoo("CuckooThreeHashes", three_hashes),
      Cuckoo("CuckooDense", dense),
      Cuckoo("CuckooSparse", sparse),
      Cuckoo("CuckooHugePages", {}, huge_pages),
      Cuckoo("CuckooLocked", {}, locked),
  };
}

}  // namespace roost::testing
