#include "tests/harness/build_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>

#include "storage/version/data_dir.h"
#include "tests/harness/child_process.h"
#include "tests/harness/roost_binaries.h"
#include "tests/harness/test_util.h"
#include "util/encoding.h"
#include "util/json.h"

namespace roost::testing {

namespace fs = std::filesystem;

void WriteHexTsv(const std::string& path, const KeyValues& kvs) {
  std::string text;
  for (const auto& [key, value] : kvs) {
    text += EncodeHex(key);
    text += '\t';
    text += EncodeHex(value);
    text += '\n';
  }
  WriteFile(path, text);
}

std::string BuildTable(const std::string& data_dir, const std::string& table,
                       const KeyValues& kvs, const std::string& format,
                       const std::vector<std::string>& flags) {
  static std::atomic<int> inputs{0};
  const fs::path parent = fs::absolute(data_dir).parent_path();
  const std::string input =
      (parent / ("input-" + table + "-" + std::to_string(inputs++) + ".tsv"))
          .string();
  WriteHexTsv(input, kvs);
  std::vector<std::string> args = {RoostLoadBinary(),
                                   "build",
                                   "-q",
                                   "--output-format",
                                   "json",
                                   "--format",
                                   format,
                                   "--key-encoding",
                                   "hex",
                                   "--value-encoding",
                                   "hex",
                                   "--data-dir",
                                   data_dir,
                                   "--table",
                                   table,
                                   "-i",
                                   input};
  args.insert(args.end(), flags.begin(), flags.end());
  const ProcessResult r = RunProcess(args);
  fs::remove(input);
  auto json = ParseJson(r.out);
  const std::optional<uint64_t> version =
      json.ok() ? JsonUint64(*json, "version") : std::nullopt;
  if (r.exit_code != 0 || !version) {
    ADD_FAILURE() << "roost-load build of " << table << " failed (exit "
                  << r.exit_code << ")\nstdout: " << r.out
                  << "\nstderr: " << r.err;
    return "";
  }
  return (fs::path(data_dir) / table / VersionDirName(*version)).string();
}

std::vector<std::string> VersionDirs(const std::string& table_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(table_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (ParseVersionDirName(name)) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace roost::testing
