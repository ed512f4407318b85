// One harness over every table format and configuration, so that one
// behaviour suite runs against each (LevelDB's Harness idea). Building is
// each format's own; reading goes through storage/table.h's Table, as the
// server's does. A format adds a TableHarness and a line to AllHarnesses()
// in table_harness.cc.
#ifndef ROOST_TESTS_STORAGE_TABLE_HARNESS_H_
#define ROOST_TESTS_STORAGE_TABLE_HARNESS_H_

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "storage/cuckoo/cuckoo_table_builder.h"
#include "storage/table.h"
#include "tests/harness/test_util.h"

namespace roost::testing {

class TableHarness {
 public:
  virtual ~TableHarness() = default;

  // Builds a table of `pairs` (in this order) at `path`.
  virtual absl::Status Build(const Pairs& pairs, DuplicatePolicy policy,
                             const std::string& path) = 0;
  // Opens `path` with this configuration's read options.
  virtual absl::Status Open(const std::string& path) = 0;

  // Table::Get and Table::MultiGet on what Open() opened; a lookup error
  // reads as a miss (the behaviour suite's tables are whole).
  std::optional<std::string> Get(const std::string& key);
  std::vector<std::optional<std::string>> MultiGet(
      const std::vector<std::string>& keys);
  // What Open() opened. REQUIRES: Open() succeeded.
  const Table& table() const { return *table_; }

 protected:
  std::unique_ptr<Table> table_;
};

struct HarnessFactory {
  std::string name;
  std::function<std::unique_ptr<TableHarness>()> make;
};

inline void PrintTo(const HarnessFactory& f, std::ostream* os) {
  *os << f.name;
}

std::vector<HarnessFactory> AllHarnesses();

}  // namespace roost::testing

#endif  // ROOST_TESTS_STORAGE_TABLE_HARNESS_H_
