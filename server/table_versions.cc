// TableVersions: the registry's rules (table_versions.h says them), one
// method each.
#include "server/table_versions.h"

#include <algorithm>

#include "storage/version/data_dir.h"
#include "util/escape.h"
#include "util/str_cat.h"

namespace roost {

std::string LoadFailureReason(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kDataLoss:
      return "corrupt";
    case absl::StatusCode::kFailedPrecondition:
      return "unsupported";
    case absl::StatusCode::kInvalidArgument:
      return "manifest";
    case absl::StatusCode::kUnavailable:
      return "incomplete";
    default:
      return "open";
  }
}

TableVersions::TableVersions(std::string table, Options options)
    : table_(std::move(table)), options_(options) {}

bool TableVersions::Usable(uint64_t version) const {
  return std::binary_search(on_disk_.begin(), on_disk_.end(), version) &&
         !failed_.count(version);
}

uint64_t TableVersions::Next() const {
  // With --repository nothing loads before the POINTERs are read: the
  // newest version on disk may be one the repository rolled back from.
  if (options_.repository && !pointers_read_) return 0;
  const uint64_t current = serving_version();
  if (pinned_ && Usable(*pinned_)) return *pinned_ == current ? 0 : *pinned_;
  if (options_.repository) {
    // The POINTER decides, forward or back, once the copy on disk is known
    // to be the repository's; a new copy of the version served (pulled
    // over one that was not) is loaded again.
    if (pointer_) {
      if (pointer_->local != RepositoryPointer::Local::kMatches ||
          !Usable(pointer_->version)) {
        return 0;
      }
      const bool served = current == pointer_->version &&
                          serving_->generation == pointer_->generation;
      return served ? 0 : pointer_->version;
    }
    // No POINTER, for a table that had one or whose versions were pulled:
    // no version on disk is known to be the repository's, and switching to
    // the newest would let servers diverge. It keeps what it serves.
    if (from_repository_) return 0;
  }
  // The newest version not rolled back from and not failed, never going
  // back past the one served.
  for (auto it = on_disk_.rbegin(); it != on_disk_.rend(); ++it) {
    if (*it <= current) break;
    if (!rolled_back_.count(*it) && !failed_.count(*it)) return *it;
  }
  return 0;
}

uint64_t TableVersions::LoadNext() const { return loading() ? 0 : Next(); }

void TableVersions::Listed(
    std::vector<uint64_t> complete,
    const std::map<uint64_t, std::string>& fingerprints) {
  on_disk_ = std::move(complete);
  // Failed versions whose files changed since are tried again (one a
  // writer changed while it served is still in recheck_: checked whole).
  for (auto it = failed_.begin(); it != failed_.end();) {
    auto now = fingerprints.find(it->first);
    const bool listed =
        std::binary_search(on_disk_.begin(), on_disk_.end(), it->first);
    if (listed && now != fingerprints.end() &&
        now->second != it->second.fingerprint) {
      it = failed_.erase(it);
    } else {
      ++it;
    }
  }
}

bool TableVersions::FailedAlike(uint64_t version,
                                std::string_view fingerprint) const {
  auto it = failed_.find(version);
  return it != failed_.end() && it->second.fingerprint == fingerprint;
}

std::set<uint64_t> TableVersions::Watched(std::set<uint64_t> incomplete) const {
  // The writer's close is when they are tried again.
  for (uint64_t v : on_disk_) {
    auto f = failed_.find(v);
    if ((f != failed_.end() && f->second.reason == "incomplete") ||
        (f == failed_.end() && (recheck_.count(v) || busy_.count(v)))) {
      incomplete.insert(v);
    }
  }
  return incomplete;
}

void TableVersions::Failed(uint64_t version, Failure failure) {
  failed_[version] = std::move(failure);
}

TableVersions::LoadPlan TableVersions::StartLoad(uint64_t version) {
  loading_.insert(version);
  LoadPlan plan;
  plan.check_file_checksum = recheck_.count(version) > 0;
  if (pointer_ && pointer_->version == version) {
    plan.generation = pointer_->generation;
  }
  return plan;
}

TableVersions::AfterLoad TableVersions::Loaded(uint64_t version,
                                               LoadResult result) {
  if (auto it = loading_.find(version); it != loading_.end()) {
    loading_.erase(it);
  }
  AfterLoad after;
  // A version a writer opened while it served, checked now that the writer
  // is done (the load took the lease, so the file is no longer open for
  // writing).
  after.rechecked = result != LoadResult::kBusy && recheck_.count(version);
  switch (result) {
    case LoadResult::kLoaded:
      busy_.erase(version);
      recheck_.erase(version);
      after.serve = Next() == version;
      break;
    case LoadResult::kBusy:
      after.first_busy = busy_.insert(version).second;
      break;
    case LoadResult::kFailed:
      // Still to be checked whole if its files change back.
      break;
  }
  after.load_next = result != LoadResult::kBusy;
  return after;
}

void TableVersions::Served(uint64_t version, uint64_t generation) {
  serving_ = Serving{version, generation};
}

void TableVersions::StoppedServing() { serving_.reset(); }

bool TableVersions::HoldsOnSwap(uint64_t replacing, bool forward,
                                bool unmodified) const {
  return forward && options_.version_grace > Clock::duration::zero() &&
         serving_ && serving_->version < replacing && unmodified;
}

void TableVersions::Hold(Clock::time_point now) {
  held_ = Held{serving_version(), now + options_.version_grace};
}

uint64_t TableVersions::Expired(Clock::time_point now) const {
  return held_ && now >= held_->until ? held_->version : 0;
}

void TableVersions::Modified(uint64_t version) { recheck_.insert(version); }

std::vector<uint64_t> TableVersions::Prunable() const {
  const size_t keep = options_.keep_versions;
  if (keep == 0 || on_disk_.size() <= keep) return {};
  // With --repository, nothing goes before the POINTERs are known: one may
  // name an old version.
  if (options_.repository && !pointers_read_) return {};
  std::vector<uint64_t> prunable;
  const uint64_t oldest_kept = on_disk_[on_disk_.size() - keep];
  for (uint64_t v : on_disk_) {
    if (v >= oldest_kept || v == serving_version() || pinned_ == v ||
        loading_.count(v) || v == pointer_version()) {
      continue;
    }
    prunable.push_back(v);
  }
  return prunable;
}

void TableVersions::Removed(uint64_t version) {
  auto it = std::lower_bound(on_disk_.begin(), on_disk_.end(), version);
  if (it != on_disk_.end() && *it == version) on_disk_.erase(it);
}

absl::StatusOr<uint64_t> TableVersions::RollbackTarget(
    std::string_view version_text) const {
  if (!serving_) {
    return absl::FailedPreconditionError(
        StrCat("table \"", table_, "\" serves no version to roll back from"));
  }
  const uint64_t current = serving_->version;
  uint64_t target = 0;
  if (version_text.empty()) {
    for (uint64_t v : on_disk_) {
      if (v < current && !failed_.count(v)) target = v;
    }
    if (target == 0) {
      return absl::FailedPreconditionError(
          StrCat("table \"", table_, "\" has no complete version older than ",
                 VersionDirName(current), " on disk"));
    }
  } else {
    std::optional<uint64_t> v = ParseVersionText(version_text);
    if (!v) {
      return absl::InvalidArgumentError(StrCat("bad version ",
                                               PrintableKey(version_text, 64),
                                               " (expected v000003 or 3)"));
    }
    target = *v;
  }
  if (!std::binary_search(on_disk_.begin(), on_disk_.end(), target)) {
    return absl::NotFoundError(StrCat("table \"", table_,
                                      "\" has no complete version ",
                                      VersionDirName(target), " on disk"));
  }
  return target;
}

void TableVersions::Pin(uint64_t target, uint64_t previous) {
  if (target != previous) rolled_back_.insert(previous);
  rolled_back_.erase(target);
  pinned_ = target;
}

void TableVersions::SetRollbackState(RollbackState state) {
  pinned_ = state.pinned;
  rolled_back_ = std::move(state.rolled_back);
}

void TableVersions::SetPointer(std::optional<RepositoryPointer> pointer) {
  pointers_read_ = true;
  pointer_ = pointer;
}

uint64_t TableVersions::WithdrawnThrough(uint64_t serving) const {
  uint64_t newest = 0;
  if (!rolled_back_.empty() && *rolled_back_.rbegin() > serving) {
    newest = *rolled_back_.rbegin();
  }
  if (pointer_ && !on_disk_.empty()) {
    const uint64_t last = on_disk_.back();  // oldest first
    if (last > serving && last > pointer_->version) {
      newest = std::max(newest, last);
    }
  }
  return newest;
}

uint64_t TableVersions::StaleCopy() const {
  if (!pointer_ || pointer_->local != RepositoryPointer::Local::kDiffers) {
    return 0;
  }
  // An admin's pin wins over the POINTER, whatever copy it pins.
  if (pinned_ == pointer_->version) return 0;
  return pointer_->version;
}

bool TableVersions::ServesPointer() const {
  return pointer_ && serving_ && serving_->version == pointer_->version &&
         serving_->generation == pointer_->generation &&
         pointer_->local == RepositoryPointer::Local::kMatches;
}

TableVersions::Readiness TableVersions::Ready() const {
  if (serving_) return Readiness::kServes;
  // With --repository a table with a POINTER is ready when it serves that
  // (ServesPointer); one without, whose versions came from the
  // repository, serves none of them and holds nobody back.
  if (options_.repository && (pointer_version() != 0 || from_repository_)) {
    return Readiness::kElsewhere;
  }
  return !loading() && Next() == 0 ? Readiness::kStuck : Readiness::kWaiting;
}

}  // namespace roost
