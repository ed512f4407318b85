// manifest_fuzz: the input is the text of a MANIFEST (or of any JSON file
// roost reads).
//
// The text goes through every reader of roost's JSON files:
//   - Manifest::Parse; a MANIFEST that parses must write (ToJson) a text
//     that parses back to the same MANIFEST;
//   - ParseJson; a document that parses must dump (DumpJson, indented and
//     not) to text that parses back to the same document;
//   - ReadRollbackFile, as a table directory's ROLLBACK; a state that reads
//     must write (WriteRollbackFile) and read back the same;
//   - OpenVersion, as the MANIFEST of a version directory beside a real
//     table.sst (the fixture tables "kv", a cuckoo table, and "sorted", a
//     block table, as roost-load published them), which checks the
//     MANIFEST against the table file the way roost-server and
//     roost-load verify do.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "fuzz/fixtures.h"
#include "fuzz/fuzz_util.h"
#include "server/rollback_file.h"
#include "storage/hash.h"
#include "storage/version/data_dir.h"
#include "storage/version/manifest.h"
#include "storage/version/open_version.h"
#include "util/json.h"

namespace roost::fuzz {
namespace {

namespace fs = std::filesystem;

// Writable version directories holding a copy of each fixture's table.sst,
// where the input is written as the MANIFEST.
struct Versions {
  std::string rollback_dir;
  std::vector<std::string> dirs;
};

const Versions& SetUp() {
  static const Versions versions = [] {
    Versions v;
    const std::string published = ScratchPath("published");
    fs::create_directories(published);
    if (absl::Status s = PublishFixtures(published, ScratchDir()); !s.ok()) {
      Fail("cannot publish the fixture tables: ", s.ToString());
    }
    const std::string data = ScratchPath("data");
    for (const char* table : {"kv", "sorted"}) {
      // Published versions are read-only: copy the table file into a
      // directory of the same name that is not.
      const std::string dir = StrCat(data, "/", table, "/", VersionDirName(1));
      fs::create_directories(dir);
      fs::copy_file(StrCat(published, "/", table, "/", VersionDirName(1), "/",
                           kTableFileName),
                    StrCat(dir, "/", kTableFileName));
      v.dirs.push_back(dir);
    }
    v.rollback_dir = StrCat(data, "/kv");
    return v;
  }();
  return versions;
}

void CheckManifest(std::string_view text) {
  auto m = Manifest::Parse(text);
  if (!m.ok()) return;
  const std::string written = m->ToJson();
  auto back = Manifest::Parse(written);
  if (!back.ok()) {
    Fail("a parsed MANIFEST writes text that does not parse: ",
         back.status().ToString(), "\n", written);
  }
  if (back->ToJson() != written) {
    Fail("a MANIFEST does not survive writing and reading:\n", written);
  }
}

void CheckJson(std::string_view text) {
  auto json = ParseJson(text);
  if (!json.ok()) return;
  JsonUint64(*json, "keys");
  JsonString(*json, "table");
  for (bool indent : {false, true}) {
    const std::string dumped = DumpJson(OrderedJson(*json), indent);
    auto back = ParseJson(dumped);
    if (!back.ok()) {
      Fail("dumped JSON does not parse: ", back.status().ToString());
    }
    if (*back != *json) Fail("JSON does not survive dumping:\n", dumped);
  }
}

void CheckRollback(std::string_view text, const std::string& table_dir) {
  WriteFileOrDie(StrCat(table_dir, "/", kRollbackFileName), text);
  std::string problem;
  const RollbackState state = ReadRollbackFile(table_dir, &problem);
  if (!problem.empty()) return;
  if (absl::Status s = WriteRollbackFile(table_dir, state); !s.ok()) {
    Fail("cannot write ROLLBACK: ", s.ToString());
  }
  const RollbackState back = ReadRollbackFile(table_dir, &problem);
  if (!problem.empty() || back.pinned != state.pinned ||
      back.rolled_back != state.rolled_back) {
    Fail("a ROLLBACK state does not survive writing and reading: ", problem);
  }
}

void CheckVersion(std::string_view text, const std::string& dir,
                  bool check_file_checksum) {
  WriteFileOrDie(StrCat(dir, "/", kManifestName), text);
  VersionOpenOptions options;
  options.check_file_checksum = check_file_checksum;
  auto opened = OpenVersion(dir, options);
  if (opened.ok() && opened->file == nullptr) Fail("opened, with no file");
}

}  // namespace
}  // namespace roost::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roost;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const fuzz::Versions& versions = fuzz::SetUp();
  fuzz::CheckManifest(text);
  fuzz::CheckJson(text);
  fuzz::CheckRollback(text, versions.rollback_dir);
  const bool checksum = (Hash64(text, 0) & 1) != 0;
  for (const std::string& dir : versions.dirs) {
    fuzz::CheckVersion(text, dir, checksum);
  }
  return 0;
}
