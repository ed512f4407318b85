// What the roost-load suites share: the binary under test, run through the
// shell on real files, and a fixture with a scratch directory to write
// inputs into. The suites, by concern:
//   roost_load_test.cc          building: inputs, encodings, formats,
//                               duplicates, sorting
//   roost_load_publish_test.cc  versions published into a data directory,
//                               and what failed or killed builds leave
//   roost_load_errors_test.cc   malformed input, bad flags, usage
//   roost_load_input_test.cc    input cut short, of another format, CSV-
//                               quoted values, empty keys
//   roost_load_inspect_test.cc  inspect, verify and get
//   roost_load_shards_test.cc   --shards: sharded versions built,
//                               inspected, verified, and refused when
//                               malformed
//   roost_load_csv_test.cc      --input-format csv and jsonl: tables
//                               read back, refusals, flags, what is
//                               recorded
//   roost_load_rows_test.cc     --rows: rows read back, the schema, its
//                               evolution checked at publish
#ifndef ROOST_TESTS_LOADER_ROOST_LOAD_FIXTURE_H_
#define ROOST_TESTS_LOADER_ROOST_LOAD_FIXTURE_H_

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"
#include "util/json.h"

namespace roost::testing {

// The binary built beside the test, unless ROOST_TEST_LOAD_BINARY names
// another (to show that a test fails against an earlier build).
inline const char* LoadBinary() {
  const char* other = std::getenv("ROOST_TEST_LOAD_BINARY");
  return other != nullptr && *other != '\0' ? other : ROOST_LOAD_BINARY;
}

struct Result {
  int exit_code;
  std::string out;  // stdout and stderr together
};

// Runs roost-load with `args` (shell words) and captures its output, with
// stderr (`redirect`) merged into it by default.
inline Result RoostLoad(const std::string& args,
                        const std::string& redirect = " 2>&1") {
  const std::string cmd = std::string(LoadBinary()) + " " + args + redirect;
  FILE* pipe = popen(cmd.c_str(), "r");
  Result run{-1, ""};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) run.out.append(buf, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// Only stdout (the JSON summary), stderr dropped.
inline Result RoostLoadStdout(const std::string& args) {
  return RoostLoad(args, " 2>/dev/null");
}

inline Json ParseOrFail(const std::string& text) {
  auto j = ParseJson(text);
  EXPECT_OK(j) << text;
  return j.ok() ? *j : Json();
}

class RoostLoadTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_.File(name);
    WriteFile(path, bytes);
    return path;
  }
  // The version directories of a table, and whether any is incomplete.
  std::vector<std::string> Versions(const std::string& table_dir) {
    std::vector<std::string> out;
    if (!std::filesystem::exists(table_dir)) return out;
    for (const auto& e : std::filesystem::directory_iterator(table_dir)) {
      const std::string name = e.path().filename().string();
      if (name[0] == 'v') out.push_back(name);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  ScratchDir dir_;
};

}  // namespace roost::testing

#endif  // ROOST_TESTS_LOADER_ROOST_LOAD_FIXTURE_H_
