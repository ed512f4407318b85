#include "client/monotonic_reads.h"

#include <algorithm>
#include <optional>

#include "client/version_consensus.h"

namespace roost {

void MonotonicReads::Answered(std::string_view table, uint32_t shard,
                              std::string_view version,
                              std::string_view withdrawn_through) {
  const std::optional<uint64_t> v = VersionNumber(version);
  if (!v.has_value()) return;
  const std::optional<uint64_t> x = VersionNumber(withdrawn_through);
  std::lock_guard lock(mu_);
  auto it = tables_.find(table);
  if (it == tables_.end()) it = tables_.emplace(table, Table()).first;
  Table& t = it->second;
  if (x.has_value() && *x > *v) {
    // A rollback: versions after v up to x are withdrawn; a floor among
    // them goes back to v, and so does what each shard was seen at.
    if (*x > t.withdrawn || (*x == t.withdrawn && *v < t.withdrawn_after)) {
      t.withdrawn_after = *v;
      t.withdrawn = *x;
    }
    if (t.floor > *v && t.floor <= *x) t.floor = *v;
    for (auto& [s, newest] : t.newest) {
      if (newest > *v && newest <= *x) newest = *v;
    }
  }
  if (Withdrawn(t, *v)) return;
  uint64_t& newest = t.newest[shard];
  newest = std::max(newest, *v);
}

uint64_t MonotonicReads::Target(std::string_view table) const {
  std::lock_guard lock(mu_);
  auto it = tables_.find(table);
  if (it == tables_.end()) return 0;
  const Table& t = it->second;
  uint64_t oldest = 0;
  bool first = true;
  for (const auto& [s, newest] : t.newest) {
    if (first || newest < oldest) oldest = newest;
    first = false;
  }
  return std::max(t.floor, oldest);
}

bool MonotonicReads::Readable(std::string_view table, uint64_t version) const {
  std::lock_guard lock(mu_);
  auto it = tables_.find(table);
  return it == tables_.end() || !Withdrawn(it->second, version);
}

void MonotonicReads::Settled(std::string_view table, uint64_t version) {
  std::lock_guard lock(mu_);
  auto it = tables_.find(table);
  if (it == tables_.end()) it = tables_.emplace(table, Table()).first;
  it->second.floor = std::max(it->second.floor, version);
}

uint64_t MonotonicReads::Floor(std::string_view table) const {
  std::lock_guard lock(mu_);
  auto it = tables_.find(table);
  return it == tables_.end() ? 0 : it->second.floor;
}

}  // namespace roost
