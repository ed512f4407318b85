#include "fuzz/fixtures.h"

#include <random>

#include "absl/strings/escaping.h"
#include "fuzz/fuzz_util.h"
#include "loader/progress.h"
#include "util/status_macros.h"

namespace roost::fuzz {
namespace {

// std::mt19937_64 is specified to the bit, so these are the same pairs on
// every machine and with every compiler.
std::string Bytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

std::vector<FixtureTable> MakeFixtures() {
  std::vector<FixtureTable> tables;
  auto add = [&](std::string name, TableFormat format) -> FixtureTable& {
    FixtureTable& t = tables.emplace_back();
    t.name = std::move(name);
    t.job.format = format;
    t.job.table = t.name;
    t.job.reader.key_encoding = Encoding::kHex;
    t.job.reader.value_encoding = Encoding::kHex;
    return t;
  };

  std::mt19937_64 rng(12);
  FixtureTable& kv = add("kv", TableFormat::kCuckoo);
  kv.pairs[""] = "the empty key";
  while (kv.pairs.size() < 200) {
    kv.pairs[Bytes(rng, rng() % 41)] = Bytes(rng, rng() % 101);
  }

  FixtureTable& fixed = add("fixed", TableFormat::kCuckoo);
  fixed.job.cuckoo.num_hash_functions = 3;
  while (fixed.pairs.size() < 300) fixed.pairs[Bytes(rng, 8)] = Bytes(rng, 8);

  FixtureTable& sorted = add("sorted", TableFormat::kBlock);
  sorted.job.block.block_size = 256;
  sorted.job.block.restart_interval = 4;
  sorted.job.block.compression = Compression::kSnappy;
  for (int i = 0; i < 500; ++i) {
    // Long shared prefixes and values that compress.
    sorted.pairs[StrCat("user/", 100000 + i * 7, "/", Bytes(rng, rng() % 4))] =
        std::string(rng() % 200, static_cast<char>('a' + i % 26));
  }

  FixtureTable& empty = add("empty", TableFormat::kCuckoo);
  empty.job.allow_empty = true;
  return tables;
}

}  // namespace

const std::vector<FixtureTable>& FixtureTables() {
  static const std::vector<FixtureTable> tables = MakeFixtures();
  return tables;
}

absl::Status PublishFixtures(const std::string& data_dir,
                             const std::string& scratch_dir) {
  Progress quiet(Progress::kQuiet);
  for (const FixtureTable& t : FixtureTables()) {
    std::string tsv;
    for (const auto& [key, value] : t.pairs) {
      tsv += StrCat(absl::BytesToHexString(key), "\t",
                    absl::BytesToHexString(value), "\n");
    }
    const std::string input = StrCat(scratch_dir, "/", t.name, ".tsv");
    WriteFileOrDie(input, tsv);
    BuildJob job = t.job;
    job.inputs = {input};
    job.data_dir = data_dir;
    job.temp_dir = scratch_dir;
    ROOST_RETURN_IF_ERROR(RunBuild(job, &quiet).status());
  }
  return absl::OkStatus();
}

}  // namespace roost::fuzz
