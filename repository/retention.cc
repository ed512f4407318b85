#include "repository/retention.h"

#include <algorithm>
#include <ctime>

#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {

PruneResult PlanPrune(const std::vector<VersionObjects>& versions,
                      std::optional<uint64_t> pointer,
                      const RetentionOptions& options) {
  PruneResult plan;
  if (versions.empty()) return plan;
  const uint64_t newest = versions.back().version;
  const int64_t now = options.now_unix != 0
                          ? options.now_unix
                          : static_cast<int64_t>(std::time(nullptr));
  // The complete versions kept for their rank: the keep_versions newest.
  uint64_t kept_rank_floor = 0;  // complete versions below this may go
  uint64_t seen = 0;
  for (auto it = versions.rbegin(); it != versions.rend(); ++it) {
    if (!it->complete) continue;
    if (++seen == options.keep_versions) {
      kept_rank_floor = it->version;
      break;
    }
  }
  for (const VersionObjects& v : versions) {
    if (v.version == newest) continue;
    if (pointer && v.version >= *pointer) continue;
    if (v.complete) {
      if (kept_rank_floor != 0 && v.version < kept_rank_floor) {
        plan.deleted.push_back(v.version);
      }
      continue;
    }
    // Incomplete: abandoned only when the store says when it was last
    // written, and that was long enough ago.
    const int64_t written = v.LastWrittenAt();
    if (written != 0 && now - written >= options.abandoned_after.count()) {
      plan.abandoned.push_back(v.version);
    }
  }
  return plan;
}

absl::StatusOr<PruneResult> PruneTable(TableRepository* repository,
                                       std::string_view table,
                                       const RetentionOptions& options) {
  if (options.keep_versions == 0) {
    return absl::InvalidArgumentError(
        "--keep-versions must be at least 1: the version served stays");
  }
  ROOST_ASSIGN_OR_RETURN(std::vector<VersionObjects> versions,
                         repository->ListVersionObjects(table));
  ROOST_ASSIGN_OR_RETURN(std::optional<Pointer> pointer,
                         repository->ReadPointer(table));
  const PruneResult plan = PlanPrune(
      versions, pointer ? std::optional(pointer->version) : std::nullopt,
      options);
  PruneResult done;
  std::vector<uint64_t> order = plan.deleted;
  order.insert(order.end(), plan.abandoned.begin(), plan.abandoned.end());
  std::sort(order.begin(), order.end());
  for (uint64_t version : order) {
    ROOST_RETURN_IF_ERROR(repository->DeleteVersion(table, version));
    const bool complete =
        std::binary_search(plan.deleted.begin(), plan.deleted.end(), version);
    (complete ? done.deleted : done.abandoned).push_back(version);
  }
  return done;
}

}  // namespace roost
