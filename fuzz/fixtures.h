// The published tables that request_fuzz serves and manifest_fuzz checks
// MANIFESTs against, and that make_seeds takes seeds from. They are made the
// way a user makes them, by roost-load's own build (RunBuild: TSV input,
// builders, verification, publishing), from pairs that depend on nothing but
// fixed seeds: the builders write byte-identical files from the same pairs,
// so a MANIFEST seed written by make_seeds names exactly the table.sst a
// fuzzer builds for itself at start-up.
//
// Example:
//   const std::vector<FixtureTable>& tables = FixtureTables();
//   ROOST_RETURN_IF_ERROR(PublishFixtures(data_dir, scratch_dir));
//   // data_dir/<table.name>/v000001/{table.sst, MANIFEST} for each table
#ifndef ROOST_FUZZ_FIXTURES_H_
#define ROOST_FUZZ_FIXTURES_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "loader/build_job.h"

namespace roost::fuzz {

struct FixtureTable {
  std::string name;
  // The format and options it is built with.
  BuildJob job;
  // Every pair it holds.
  std::map<std::string, std::string> pairs;
};

// "kv": cuckoo, heap layout (keys of 0 to 40 bytes, the empty key too);
// "fixed": cuckoo, inline layout (8-byte keys and values); "sorted": block
// table with snappy, 256-byte blocks, restarts every 4 keys, keys sharing
// long prefixes; "empty": a cuckoo table of no keys.
const std::vector<FixtureTable>& FixtureTables();

// Publishes every fixture table as version 1 of itself in `data_dir` (which
// must exist), writing the loader's TSV input under `scratch_dir`.
absl::Status PublishFixtures(const std::string& data_dir,
                             const std::string& scratch_dir);

}  // namespace roost::fuzz

#endif  // ROOST_FUZZ_FIXTURES_H_
