// Private working directories named after the process that made them, so
// that a later process can tell those of a build that was killed:
//
//   <parent>/<prefix><pid>-XXXXXX
//
// roost-load makes them for a version's staging directory (".staging-"),
// the directory a `build -o FILE` is written in ("FILE.tmp-") and, under
// the temporary directory (MakeOwnedTempDir), the sorter's spill directory
// ("roost-sort-") and the staging directory of a build for a repository
// ("roost-publish-", "roost-shard-"). Each is made
// with mkdtemp (mode 0700, a fresh name: no one can have planted a link
// in it) after the debris of dead processes with the same prefix is
// removed. roost-server --repository stages the versions it pulls in
// ".staging-" directories too, so that either cleans up after the other.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(std::string dir,
//                          MakeOwnedDir("/tmp", "roost-sort-"));
//   ... write under dir ...
//   RemoveTree(dir);
#ifndef ROOST_UTIL_OWNED_DIR_H_
#define ROOST_UTIL_OWNED_DIR_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace roost {

// Removes every <parent>/<prefix><pid>-* whose process is gone.
void RemoveDeadOwnersDirs(const std::string& parent, std::string_view prefix);

// RemoveDeadOwnersDirs, then makes <parent>/<prefix><own pid>-XXXXXX and
// returns its path.
absl::StatusOr<std::string> MakeOwnedDir(const std::string& parent,
                                         std::string_view prefix);

// Where scratch goes: `temp_dir` where one is given (roost-load's
// --temp-dir), else the system's temporary directory ($TMPDIR where that
// is a directory, else /tmp).
std::string TempParent(const std::string& temp_dir);

// MakeOwnedDir(TempParent(temp_dir), prefix).
absl::StatusOr<std::string> MakeOwnedTempDir(const std::string& temp_dir,
                                             std::string_view prefix);

// Removes `path` and everything under it, read-only directories included;
// errors are ignored (what is left is debris for the next run).
void RemoveTree(const std::string& path);

}  // namespace roost

#endif  // ROOST_UTIL_OWNED_DIR_H_
