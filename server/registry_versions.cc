// TableRegistry: a version's way in and out of service. A load runs on a
// worker (StartLoad) and comes back through the inbox (TakeLoaded, Apply);
// a loaded version is published to the table's slots (Serve), dropped when
// a writer breaks its lease (OnLeaseBreaks, StopServing) and checked whole
// once the writer is done (Apply), and removed from disk past
// --keep-versions (PruneVersions). Every method runs on the registry
// thread; the registry loop is table_registry.cc.
#include <algorithm>
#include <filesystem>

#include "server/log.h"
#include "server/table_registry.h"
#include "storage/version/data_dir.h"
#include "util/str_cat.h"

namespace roost {

namespace fs = std::filesystem;

namespace {

// LoadVersion's outcome, as TableVersions takes it: Aborted is a table file
// open for writing.
TableVersions::LoadResult ResultOf(const absl::Status& status) {
  if (status.ok()) return TableVersions::LoadResult::kLoaded;
  if (status.code() == absl::StatusCode::kAborted) {
    return TableVersions::LoadResult::kBusy;
  }
  return TableVersions::LoadResult::kFailed;
}

}  // namespace

void TableRegistry::StartLoad(TableState* state, uint64_t version,
                              std::function<void(Loaded&)> then) {
  const TableVersions::LoadPlan plan = state->versions.StartLoad(version);
  LoadOptions options;
  options.open.read.verify_checksums = options_.verify_checksums;
  options.open.read.load_mode = options_.load_mode;
  options.open.read.advise_random = options_.mmap_random;
  options.open.read.block_cache = block_cache_;
  options.open.shard = options_.shard;
  // Leased in every load mode: a private copy (huge-pages) cannot be pulled
  // from under the server, but a version whose file changes is no longer
  // the version its MANIFEST describes, and is dropped all the same.
  options.lease = true;
  // A version that was modified while served must match its MANIFEST byte
  // for byte before it is served again: another table's file, copied over
  // it, would pass every check of its own.
  options.open.check_file_checksum = plan.check_file_checksum;
  options.verified = verified_;
  options.generation = plan.generation;
  Loaded job;
  job.table = state->entry->name;
  job.table_id = state->id;
  job.version = version;
  job.then = std::move(then);
  const std::string dir = VersionDir(*state, version);
  // Taken before the load, so that a change during it makes a retry.
  job.fingerprint = VersionFingerprint(dir);
  workers_.Submit([dir, options, job = std::move(job), inbox = inbox_,
                   watcher = watcher_]() mutable {
    job.outcome = LoadVersion(dir, job.version, options);
    {
      std::lock_guard lock(inbox->mu);
      inbox->loaded.push_back(std::move(job));
    }
    watcher->Wake();
  });
}

void TableRegistry::TakeLoaded() {
  std::deque<Loaded> loaded;
  {
    std::lock_guard lock(inbox_->mu);
    loaded.swap(inbox_->loaded);
  }
  for (Loaded& l : loaded) Apply(l);
}

void TableRegistry::Apply(Loaded& loaded) {
  TableState* state = Present(loaded.table);
  if (state == nullptr || state->id != loaded.table_id) {
    if (loaded.then) loaded.then(loaded);  // reports the table gone
    return;                                // the table went away meanwhile
  }
  auto& outcome = loaded.outcome;
  if (!outcome.lease_problem.empty() && !state->lease_problem_logged) {
    Log("serving ", loaded.table, " without a lease: ", outcome.lease_problem,
        " (a writer that truncates a served file can crash the server; "
        "see docs/operations/serving.md)");
    state->lease_problem_logged = true;
  }
  const std::string version_name = VersionDirName(loaded.version);
  const bool busy =
      outcome.version.status().code() == absl::StatusCode::kAborted;
  const TableVersions::AfterLoad after = state->versions.Loaded(
      loaded.version, ResultOf(outcome.version.status()));
  if (outcome.version.ok()) {
    if (after.rechecked) {
      Log(loaded.table, " ", version_name,
          " is intact after the writer (every byte as its MANIFEST says)",
          !loaded.then && after.serve ? ": serving it again" : "");
      std::lock_guard lock(mu_);
      state->rechecks["intact"]++;
    }
  } else if (busy) {
    // Open for writing: tried again on the next scan (the close of the
    // file wakes one: ScanTable watches the version).
    if (after.first_busy) {
      Log("not loading ", loaded.table, " ", version_name,
          " yet: ", outcome.version.status().message());
    }
  } else {
    Fail(state, loaded.version, outcome.version.status(), loaded.fingerprint);
    if (after.rechecked) {
      Log(loaded.table, " ", version_name,
          " was changed by the writer: not served again unless its files "
          "change back");
      std::lock_guard lock(mu_);
      state->rechecks["changed"]++;
    }
  }
  if (loaded.then) {
    loaded.then(loaded);
  } else if (after.serve &&
             Serve(state, *outcome.version) == ServeResult::kBusy) {
    state->waiting = *outcome.version;
  }
  // Not at once after a busy load: the writer would be asked again and
  // again while it writes.
  if (after.load_next) {
    if (const uint64_t target = state->versions.LoadNext()) {
      StartLoad(state, target);
    }
  }
}

void TableRegistry::Fail(TableState* state, uint64_t version,
                         const absl::Status& status,
                         const std::string& fingerprint) {
  const std::string reason = LoadFailureReason(status);
  Log("cannot load ", state->entry->name, " ", VersionDirName(version), ": ",
      status.message(),
      reason == "incomplete" ? " (tried again when its files change)" : "");
  std::lock_guard lock(mu_);
  state->versions.Failed(version, {reason, fingerprint});
  state->failures[reason]++;
  if (reason != "incomplete") state->swaps_failed++;
}

TableRegistry::ServeResult TableRegistry::Serve(
    TableState* state, std::shared_ptr<const ServingVersion> v,
    bool hold_previous, uint64_t withdrawing) {
  if (v->lease && !v->lease->Held()) {
    // A writer asked for the file after it was checked: the next scan
    // loads it again.
    Log("not serving ", state->entry->name, " ", v->version_name,
        ": its table file was opened for writing since it was checked");
    return ServeResult::kStale;
  }
  // Before it is published: its first answer names it already.
  v->withdrawn_through.store(
      std::max(state->versions.WithdrawnThrough(v->version),
               withdrawing > v->version ? withdrawing : uint64_t{0}));
  Held before = HoldPrevious(state, *v, hold_previous);
  if (!state->entry->slots.Publish(v)) {
    RestorePrevious(state, std::move(before));
    if (state->waiting != v) {
      Log("cannot swap in ", state->entry->name, " ", v->version_name,
          " yet: older versions are still in use; will retry");
    }
    return ServeResult::kBusy;
  }
  Log("serving ", state->entry->name, " ", v->version_name, " (",
      TableFormatName(v->table().format()), ", ",
      Count(v->table().num_keys(), "key"),
      v->opened.shard ? StrCat(", shard ", *v->opened.shard, " of ",
                               v->opened.manifest.shards)
                      : std::string(),
      v->verified_when_pulled ? ", its checksums checked as it was pulled" : "",
      ")");
  {
    std::lock_guard lock(mu_);
    state->versions.Served(v->version, v->generation);
    state->serving = std::move(v);
    state->swaps_ok++;
  }
  Changed(state->entry->name);
  return ServeResult::kServed;
}

void TableRegistry::StopServing(TableState* state, const std::string& why) {
  Log("stopped serving ", state->entry->name, " ", state->serving->version_name,
      ": ", why);
  state->entry->slots.Clear();
  {
    std::lock_guard lock(mu_);
    state->versions.StoppedServing();
    state->serving.reset();
  }
  Changed(state->entry->name);
}

void TableRegistry::OnLeaseBreaks(const WatchEvents& events) {
  if (events.lease_breaks.empty() && !events.lease_overflow) return;
  std::vector<TableState*> dropped;
  for (auto& entry : states_) {
    // Named, not bound: clang before 16 cannot capture a structured binding
    // in a lambda (the fuzz build is clang's).
    const std::string& name = entry.first;
    TableState& state = entry.second;
    const auto broken = [&](const std::shared_ptr<const ServingVersion>& v) {
      if (!v || !v->lease) return false;
      return events.lease_overflow
                 ? !v->lease->Held()
                 : std::count(events.lease_breaks.begin(),
                              events.lease_breaks.end(), v->lease->fd()) > 0;
    };
    // Counted as "modified", and checked against its MANIFEST, byte for
    // byte, before it is served again (ScanTable watches it for the
    // writer's close; Apply says what the check found).
    const auto modified = [&](uint64_t version) {
      std::lock_guard lock(mu_);
      state.versions.Modified(version);
      state.failures["modified"]++;
    };
    // A version held for --version-grace is let go of as a served one is
    // dropped.
    if (broken(state.previous)) {
      const uint64_t version = state.previous->version;
      Log("no longer answering ", name, " ", VersionDirName(version),
          ": its table file is being opened for writing or truncated");
      ReleasePrevious(&state);
      modified(version);
    }
    if (broken(state.serving)) {
      modified(state.serving->version);
      {
        std::lock_guard lock(mu_);
        state.swaps_failed++;
      }
      StopServing(&state,
                  "its table file is being opened for writing or truncated "
                  "(published versions must not change); checked against "
                  "its MANIFEST once the writer is done, it serves again if "
                  "every byte is as it says");
      dropped.push_back(&state);
    }
  }
  // The writer waits until the lease goes with the mapping: unmap now if
  // no request reads it, and keep reclaiming until then.
  Reclaim();
  for (TableState* state : dropped) {
    // The version dropped, most often: busy while the writer has the file,
    // then tried again when it closes it.
    if (const uint64_t target = state->versions.LoadNext()) {
      StartLoad(state, target);
    }
  }
}

void TableRegistry::PruneVersions(TableState* state) {
  const size_t keep = options_.keep_versions;
  std::vector<uint64_t> removed;
  for (uint64_t v : state->versions.Prunable()) {
    // Requests may still read it: unlinking a mapped file is safe, and the
    // mapping lasts until the version is reclaimed. roost-load publishes
    // versions read-only, so the directory is made writable first.
    const fs::path dir = VersionDir(*state, v);
    std::error_code ec;
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir, ec);
    if (ec) {
      Log("cannot remove ", dir.string(), ": ", ec.message());
    } else {
      Log("removed ", state->entry->name, " ", VersionDirName(v),
          " (--keep-versions ", keep, ")");
      removed.push_back(v);
    }
  }
  std::lock_guard lock(mu_);
  for (uint64_t v : removed) state->versions.Removed(v);
}

}  // namespace roost
