// Tables whose every value names its version: "VERSION:KEY", so that a
// test sees which version of a table answered.
//
// Example:
//   BuildTable(data, "t", Versioned(2, Keys(100)));
//   EXPECT_TRUE(ServesVersion(server, Keys(100), 2));
#ifndef ROOST_TESTS_HARNESS_VERSIONED_TABLES_H_
#define ROOST_TESTS_HARNESS_VERSIONED_TABLES_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/harness/build_table.h"
#include "tests/harness/server_process.h"

namespace roost::testing {

std::vector<std::string> Keys(int n);  // distinct, of different lengths
KeyValues Versioned(int version, const std::vector<std::string>& keys);
// The version a value "VERSION:KEY" names, or -1 when it is not `key`'s.
int VersionOf(const std::string& value, const std::string& key);
// Every key of `keys` answers version `version` in one MultiGet, and the
// first one in a Get.
::testing::AssertionResult ServesVersion(ServerProcess& server,
                                         const std::vector<std::string>& keys,
                                         int version,
                                         const std::string& table = "t");

}  // namespace roost::testing

#endif  // ROOST_TESTS_HARNESS_VERSIONED_TABLES_H_
