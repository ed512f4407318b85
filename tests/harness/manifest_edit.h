// Tests that check how a damaged MANIFEST is refused edit a published one in
// place: published versions are read-only, so the directory and the file are
// made writable first.
#ifndef ROOST_TESTS_HARNESS_MANIFEST_EDIT_H_
#define ROOST_TESTS_HARNESS_MANIFEST_EDIT_H_

#include <filesystem>
#include <functional>
#include <string>

#include "tests/harness/test_util.h"
#include "util/json.h"

namespace roost::testing {

// Rewrites the MANIFEST of `version_dir` with `edit` (run on the parsed JSON).
inline void EditManifest(const std::string& version_dir,
                         const std::function<void(Json&)>& edit) {
  namespace fs = std::filesystem;
  const std::string path = version_dir + "/MANIFEST";
  fs::permissions(version_dir, fs::perms::owner_all, fs::perm_options::add);
  fs::permissions(path, fs::perms::owner_write, fs::perm_options::add);
  Json m = Json::parse(ReadFile(path));
  edit(m);
  WriteFile(path, m.dump(2));
}

}  // namespace roost::testing

#endif  // ROOST_TESTS_HARNESS_MANIFEST_EDIT_H_
