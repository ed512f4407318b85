// Retention for a table repository: which versions of a table go, and
// deleting them (`roost-load build --keep-versions`, `roost-load prune`).
//
// A complete version goes when it is older than the `keep_versions` newest
// complete ones, unless the pointer names it or it is newer than the
// version the pointer names (after a rollback, the versions above the
// pointer are the way forward again). An incomplete version (no MANIFEST)
// goes when none of its objects was written for `abandoned_after`: a
// publisher killed mid-upload leaves one, and a publisher still uploading
// keeps writing objects (its CLAIM first), so a claim in progress is never
// taken for abandoned unless it has been silent that long. The newest
// version of the table, whatever it is, never goes: its number must not be
// handed out twice.
//
// Each version is deleted MANIFEST first (TableRepository::DeleteVersion),
// so a prune cut short leaves incomplete versions, never a complete one
// missing files; the next prune finishes them.
//
// Example:
//   RetentionOptions options;
//   options.keep_versions = 3;
//   ROOST_ASSIGN_OR_RETURN(PruneResult pruned,
//                          PruneTable(&repository, "users", options));
#ifndef ROOST_REPOSITORY_RETENTION_H_
#define ROOST_REPOSITORY_RETENTION_H_

#include <chrono>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "repository/repository.h"

namespace roost {

struct RetentionOptions {
  // Complete versions kept, newest first (at least 1). The default value
  // is 3.
  uint64_t keep_versions = 3;
  // An incomplete version none of whose objects was written for this long
  // is abandoned. The default value is 24 hours.
  std::chrono::seconds abandoned_after{24 * 3600};
  // "Now", Unix seconds, to judge abandoned_after by; 0 means the system
  // clock. The default value is 0.
  int64_t now_unix = 0;
};

struct PruneResult {
  std::vector<uint64_t> deleted;    // complete versions deleted
  std::vector<uint64_t> abandoned;  // incomplete versions deleted
};

// What PruneTable would delete, given the versions and the pointer's
// version (nullopt: no pointer). Pure: the policy alone.
PruneResult PlanPrune(const std::vector<VersionObjects>& versions,
                      std::optional<uint64_t> pointer,
                      const RetentionOptions& options);

// Deletes what PlanPrune names, oldest first; stops at the first error
// (what was deleted so far stays deleted). InvalidArgument for
// keep_versions 0.
absl::StatusOr<PruneResult> PruneTable(TableRepository* repository,
                                       std::string_view table,
                                       const RetentionOptions& options);

}  // namespace roost

#endif  // ROOST_REPOSITORY_RETENTION_H_
