// Tables for the end-to-end tests, built and published by the real
// roost-load into a data directory.
//
// Example:
//   ASSERT_NE(BuildTable(data_dir, "users", {{"k", "v"}}), "");
#ifndef ROOST_TESTS_HARNESS_BUILD_TABLE_H_
#define ROOST_TESTS_HARNESS_BUILD_TABLE_H_

#include <map>
#include <string>
#include <vector>

namespace roost::testing {

// Keys and values of a table, as given to roost-load.
using KeyValues = std::map<std::string, std::string>;

// Writes `kvs` to `path` as TSV with hex-encoded keys and values, so that
// any bytes (tabs, newlines, zeros) survive; read it with
// `--key-encoding hex --value-encoding hex`.
void WriteHexTsv(const std::string& path, const KeyValues& kvs);

// Publishes `kvs` as the next version of DATA_DIR/`table` with
// `roost-load build --format FORMAT FLAGS...` (input: a hex TSV written
// beside `data_dir`). Returns the new version's directory
// (DATA_DIR/TABLE/v00000N), or "" after recording a test failure with the
// loader's output.
std::string BuildTable(const std::string& data_dir, const std::string& table,
                       const KeyValues& kvs,
                       const std::string& format = "cuckoo",
                       const std::vector<std::string>& flags = {});

// The version directories (v000001...) under a table directory, sorted.
std::vector<std::string> VersionDirs(const std::string& table_dir);

}  // namespace roost::testing

#endif  // ROOST_TESTS_HARNESS_BUILD_TABLE_H_
