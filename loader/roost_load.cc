// roost-load: builds table files from bulk input, inspects them, and looks
// keys up offline. See `roost-load --help` and docs/operations.md.

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "loader/tsv_reader.h"
#include "storage/cuckoo_table.h"
#include "storage/cuckoo_table_builder.h"
#include "storage/escape.h"
#include "storage/str_cat.h"

namespace roost {
namespace {

// Exit codes, after sysexits.h.
constexpr int kExitOk = 0;
constexpr int kExitNotFound = 1;  // `get`: some key is not in the table
constexpr int kExitUsage = 64;
constexpr int kExitBadInput = 65;
constexpr int kExitIo = 74;

int ExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kFailedPrecondition:
      return kExitBadInput;
    default:
      return kExitIo;
  }
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "roost-load: %s\n",
               std::string(status.message()).c_str());
  return ExitCodeFor(status);
}

struct BuildFlags {
  std::vector<std::string> inputs;
  std::string output;
  std::string format = "cuckoo";
  std::string on_duplicate = "error";
  CuckooTableOptions cuckoo;
  bool quiet = false;
};

absl::StatusOr<DuplicatePolicy> ParseDuplicatePolicy(const std::string& s) {
  if (s == "error") return DuplicatePolicy::kError;
  if (s == "first") return DuplicatePolicy::kKeepFirst;
  if (s == "last") return DuplicatePolicy::kKeepLast;
  return absl::InvalidArgumentError(
      StrCat("--on-duplicate must be error, first or last, not ", s));
}

int RunBuild(BuildFlags flags) {
  auto policy = ParseDuplicatePolicy(flags.on_duplicate);
  if (!policy.ok()) return Fail(policy.status());
  flags.cuckoo.on_duplicate = *policy;
  const auto start = std::chrono::steady_clock::now();
  CuckooTableBuilder builder(flags.cuckoo);
  // Where each input's pairs start, to name the lines of a duplicate.
  std::vector<std::pair<uint64_t, std::string>> starts;
  auto origin = [&](uint64_t pair) {
    auto it = std::prev(std::upper_bound(
        starts.begin(), starts.end(), pair,
        [](uint64_t p, const auto& start) { return p < start.first; }));
    return StrCat(it->second, ":", pair - it->first + 1);
  };
  uint64_t input_bytes = 0;
  for (const std::string& input : flags.inputs) {
    auto reader = TsvReader::Open(input);
    if (!reader.ok()) return Fail(reader.status());
    starts.emplace_back(builder.num_added(), (*reader)->path());
    std::string_view key, value;
    while (true) {
      auto more = (*reader)->Next(&key, &value);
      if (!more.ok()) return Fail(more.status());
      if (!*more) break;
      input_bytes += key.size() + value.size() + 2;
      absl::Status s = builder.Add(key, value);
      if (!s.ok()) {
        return Fail(absl::InvalidArgumentError(StrCat(
            (*reader)->path(), ":", (*reader)->line(), ": ", s.message())));
      }
    }
  }
  auto report = builder.Finish(flags.output);
  if (!report.ok()) {
    if (const auto dup = builder.duplicate()) {
      return Fail(absl::InvalidArgumentError(
          StrCat(origin(dup->second), ": duplicate key ",
                 PrintableKey(dup->key), " (first seen at ", origin(dup->first),
                 "); --on-duplicate=first or last keeps "
                 "one")));
    }
    return Fail(report.status());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!flags.quiet) {
    std::fprintf(stderr,
                 "roost-load: wrote %s: %llu keys, %s layout, %llu bytes "
                 "(%.2f bytes/key), utilization %.3f, %.2f s\n",
                 flags.output.c_str(),
                 static_cast<unsigned long long>(report->num_keys),
                 std::string(CuckooLayoutName(report->layout)).c_str(),
                 static_cast<unsigned long long>(report->file_size),
                 report->num_keys
                     ? static_cast<double>(report->file_size) / report->num_keys
                     : 0.0,
                 report->utilization, seconds);
    if (report->retries > 0) {
      std::fprintf(stderr,
                   "roost-load: could not place every key at utilization "
                   "%.3f; retried %d times and built at %.3f\n",
                   report->requested_utilization, report->retries,
                   report->utilization);
    }
    if (report->duplicates_dropped > 0) {
      std::fprintf(stderr, "roost-load: dropped %llu duplicate keys\n",
                   static_cast<unsigned long long>(report->duplicates_dropped));
    }
  }
  return kExitOk;
}

int RunInspect(const std::string& path) {
  CuckooReadOptions options;
  options.verify_checksums = false;  // `verify` does that
  auto table = CuckooTable::Open(path, options);
  if (!table.ok()) return Fail(table.status());
  const CuckooHeader& h = (*table)->header();
  std::printf("file             %s\n", path.c_str());
  std::printf("format           cuckoo %u.%u\n", h.major_version,
              h.minor_version);
  std::printf("file size        %llu bytes\n",
              static_cast<unsigned long long>(h.file_size));
  std::printf("keys             %llu\n",
              static_cast<unsigned long long>(h.num_keys));
  std::printf("layout           %s\n",
              std::string(CuckooLayoutName(h.layout)).c_str());
  if (h.layout == CuckooLayout::kInline) {
    std::printf("key width        %u\nvalue width      %u\n", h.key_width,
                h.value_width);
  } else {
    std::printf("key length       %u..%u\nvalue length     %u..%u\n",
                h.min_key_length, h.max_key_length, h.min_value_length,
                h.max_value_length);
  }
  std::printf("blocks           %llu x %u buckets of %u bytes\n",
              static_cast<unsigned long long>(h.num_blocks),
              h.buckets_per_block, h.bucket_size);
  std::printf("hash functions   %u\n", h.num_hashes);
  std::printf("utilization      %.4f built, %.4f requested\n",
              h.built_utilization_ppm / 1e6, h.requested_utilization_ppm / 1e6);
  std::printf("overflow bits    %u per block\n", h.overflow_bits);
  std::printf("probe counts     (keys found after N block probes)\n");
  for (int i = 0; i < h.num_hashes; ++i) {
    std::printf("  %d              %llu (%.2f%%)\n", i + 1,
                static_cast<unsigned long long>(h.keys_per_hash[i]),
                h.num_keys ? 100.0 * h.keys_per_hash[i] / h.num_keys : 0.0);
  }
  return kExitOk;
}

int RunVerify(const std::string& path) {
  auto table = CuckooTable::Open(path);  // verifies every checksum
  if (!table.ok()) return Fail(table.status());
  std::printf("%s: ok (%llu keys)\n", path.c_str(),
              static_cast<unsigned long long>((*table)->num_keys()));
  return kExitOk;
}

int RunGet(const std::string& path, const std::vector<std::string>& keys) {
  auto table = CuckooTable::Open(path);
  if (!table.ok()) return Fail(table.status());
  int code = kExitOk;
  for (const std::string& key : keys) {
    std::string_view value;
    if ((*table)->Get(key, &value)) {
      std::printf("%s\t%.*s\n", key.c_str(), static_cast<int>(value.size()),
                  value.data());
    } else {
      std::fflush(stdout);  // keep the output in key order on a terminal
      std::fprintf(stderr, "roost-load: %s: not found\n",
                   PrintableKey(key).c_str());
      code = kExitNotFound;
    }
  }
  return code;
}

}  // namespace
}  // namespace roost

int main(int argc, char** argv) {
  using namespace roost;
  CLI::App app{
      "roost-load: builds roost table files from bulk input, inspects and "
      "verifies them, and looks keys up offline."};
  app.set_version_flag("--version", "roost-load 0.1.0");
  app.require_subcommand(1);

  BuildFlags build;
  CLI::App* b = app.add_subcommand(
      "build", "Build a table file from key<TAB>value lines (raw bytes).");
  b->add_option("--input,-i", build.inputs,
                "Input files of key<TAB>value lines; - for stdin")
      ->required();
  b->add_option("--output,-o", build.output, "Table file to write")->required();
  b->add_option("--format", build.format, "Table format")
      ->check(CLI::IsMember({"cuckoo"}))
      ->capture_default_str();
  b->add_option("--on-duplicate", build.on_duplicate,
                "A key seen twice: error, first or last")
      ->check(CLI::IsMember({"error", "first", "last"}))
      ->capture_default_str();
  b->add_option("--utilization", build.cuckoo.utilization,
                "Cuckoo: fraction of buckets to fill, in (0, 1)")
      ->capture_default_str();
  b->add_option("--hash-functions", build.cuckoo.num_hash_functions,
                "Cuckoo: candidate blocks per key, 2 to 8")
      ->capture_default_str();
  b->add_option("--overflow-bits", build.cuckoo.overflow_bits_per_block,
                "Cuckoo: overflow bits per block: 1, 2, 4 or 8")
      ->capture_default_str();
  b->add_option("--max-displacement-depth", build.cuckoo.max_displacement_depth,
                "Cuckoo: longest displacement chain tried per insertion")
      ->capture_default_str();
  b->add_flag("--quiet,-q", build.quiet, "Print nothing but errors");

  std::string path;
  CLI::App* inspect =
      app.add_subcommand("inspect", "Print a table's header and statistics.");
  inspect->add_option("table", path, "Table file")->required();
  CLI::App* verify = app.add_subcommand(
      "verify", "Check every checksum of a table; exit 0 only if all hold.");
  verify->add_option("table", path, "Table file")->required();
  std::vector<std::string> keys;
  CLI::App* get = app.add_subcommand(
      "get", "Look keys up in a table file; exit 1 if any is missing.");
  get->add_option("table", path, "Table file")->required();
  get->add_option("keys", keys, "Keys (raw bytes)")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }
  if (b->parsed()) return RunBuild(build);
  if (inspect->parsed()) return RunInspect(path);
  if (verify->parsed()) return RunVerify(path);
  return RunGet(path, keys);
}
