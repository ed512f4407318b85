#include "server/table_registry.h"

#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "server/log.h"
#include "storage/data_dir.h"
#include "util/str_cat.h"

namespace roost {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             Clock::now().time_since_epoch())
      .count();
}

Clock::duration Seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(s));
}

// What a version's files look like now: changes when any of them is
// written, replaced, renamed in or out, or has its permissions changed.
std::string Fingerprint(const std::string& dir) {
  std::string out;
  for (const std::string& path : {dir, StrCat(dir, "/", kManifestName),
                                  StrCat(dir, "/", kTableFileName)}) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      out += StrCat("-", errno, ";");
      continue;
    }
    out += StrCat(st.st_ino, ":", st.st_size, ":", st.st_mode, ":",
                  st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec, ":",
                  st.st_ctim.tv_sec, ".", st.st_ctim.tv_nsec, ";");
  }
  return out;
}

}  // namespace

TableRegistry::TableRegistry(const ServerOptions& options, Callbacks callbacks)
    : options_(options),
      callbacks_(std::move(callbacks)),
      index_(options.max_tables),
      workers_(static_cast<int>(options.load_threads)) {
  heartbeat_.store(NowNanos());
}

TableRegistry::~TableRegistry() { Stop(); }

absl::Status TableRegistry::Start() {
  std::error_code ec;
  if (!fs::is_directory(options_.data_dir, ec)) {
    return absl::NotFoundError(StrCat("data directory ", options_.data_dir,
                                      " does not exist or is not a directory"));
  }
  auto watcher = Watcher::Create(options_.inotify);
  if (!watcher.ok()) return watcher.status();
  watcher_ = std::move(*watcher);
  thread_ = std::thread([this] { Run(); });
  return absl::OkStatus();
}

bool TableRegistry::Stop() {
  if (!thread_.joinable()) return true;
  stop_.store(true);
  watcher_->Wake();
  thread_.join();
  const bool finished =
      workers_.Stop(std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::duration<double>(options_.shutdown_timeout_seconds)));
  if (!finished) Log("abandoning loads still in progress");
  return finished;
}

bool TableRegistry::Stalled() const {
  return NowNanos() - heartbeat_.load() >
         static_cast<int64_t>(options_.stall_timeout_seconds * 1e9);
}

void TableRegistry::Run() {
  watcher_->Watch(options_.data_dir);
  Scan();
  for (const auto& [name, state] : states_) {
    if (!state.on_disk.empty()) must_serve_.insert(name);
  }
  CheckReady();
  const Clock::duration poll = Seconds(options_.poll_interval_seconds);
  const Clock::duration refresh = Seconds(options_.resident_refresh_seconds);
  auto next_poll = Clock::now() + poll;
  auto next_refresh = Clock::now();
  bool reclaim_pending = false;
  while (!stop_.load()) {
    heartbeat_.store(NowNanos());
    // At least once a second round the loop, so that the heartbeat says
    // the thread is alive; and often while old versions still have
    // readers, so that they are unmapped soon after their last request.
    auto wake_at = std::min(
        {next_poll, next_refresh, Clock::now() + std::chrono::seconds(1)});
    if (reclaim_pending) {
      wake_at = std::min(wake_at, Clock::now() + std::chrono::milliseconds(5));
    }
    const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
        wake_at - Clock::now());
    const WatchEvents events =
        watcher_->Wait(std::max(timeout, std::chrono::milliseconds(0)));
    if (stop_.load()) break;
    heartbeat_.store(NowNanos());
    OnLeaseBreaks(events);
    RunCommands();
    TakeLoaded();
    if (events.changed || Clock::now() >= next_poll) {
      Scan();
      next_poll = Clock::now() + poll;
    }
    CheckReady();
    if (Clock::now() >= next_refresh) {
      RefreshResidentBytes();
      // Give freed response buffers back to the system.
      ::malloc_trim(0);
      next_refresh = Clock::now() + refresh;
    }
    reclaim_pending = Reclaim();
  }
}

bool TableRegistry::Reclaim() {
  bool waiting = index_.Reclaim() > 0;
  for (auto& [name, state] : states_) {
    if (state.entry->slots.Reclaim() > 0) waiting = true;
    if (state.waiting && Serve(&state, state.waiting) != ServeResult::kBusy) {
      state.waiting.reset();
    }
  }
  return waiting;
}

void TableRegistry::CheckReady() {
  if (ready_) return;
  bool waiting = false;
  std::string stuck;  // tables with nothing loading that could serve
  for (const std::string& name : must_serve_) {
    auto it = states_.find(name);
    if (it == states_.end() || it->second.serving != nullptr) continue;
    waiting = true;
    if (it->second.loading.empty() && Target(it->second) == 0) {
      stuck += StrCat(stuck.empty() ? "" : ", ", name);
    }
  }
  if (waiting) {
    if (!stuck.empty() && stuck != waiting_logged_) {
      Log("not ready: waiting for a version of ", stuck,
          " that loads (health stays NOT_SERVING)");
      waiting_logged_ = stuck;
    }
    return;
  }
  ready_ = true;
  if (callbacks_.on_ready) callbacks_.on_ready();
}

void TableRegistry::Changed(const std::string& table) {
  if (callbacks_.on_table_change) callbacks_.on_table_change(table);
}

void TableRegistry::Scan() {
  std::error_code ec;
  std::set<std::string> seen;
  std::set<std::string> refused;
  fs::directory_iterator it(options_.data_dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (!it->is_directory(type_ec) || !ValidateTableName(name).ok()) continue;
    seen.insert(name);
    TableState* state = StateFor(name);
    if (state == nullptr) {
      refused.insert(name);
      if (!refused_tables_.count(name)) {
        Log("ignoring table ", name, ": ", index_.size(),
            " tables are served already (--max-tables ", options_.max_tables,
            ")");
      }
      continue;
    }
    ScanTable(state);
  }
  refused_tables_ = std::move(refused);
  if (ec) {
    Log("cannot list ", options_.data_dir, ": ", ec.message());
    return;
  }
  std::vector<std::string> gone;
  for (const auto& [name, state] : states_) {
    if (!seen.count(name)) gone.push_back(name);
  }
  for (const std::string& name : gone) RemoveTable(name);
}

TableRegistry::TableState* TableRegistry::StateFor(const std::string& name) {
  auto it = states_.find(name);
  if (it != states_.end()) return &it->second;
  auto entry = std::make_unique<TableEntry>(name);
  TableEntry* e = entry.get();
  if (!index_.Add(entry)) return nullptr;
  TableState state;
  state.id = next_table_id_++;
  state.entry = e;
  state.dir = (fs::path(options_.data_dir) / name).string();
  TableState* s;
  {
    std::lock_guard lock(mu_);
    s = &states_.emplace(name, std::move(state)).first->second;
  }
  LoadRollbackState(s);
  s->watch = watcher_->Watch(s->dir);
  Changed(name);
  return s;
}

void TableRegistry::RemoveTable(const std::string& name) {
  auto it = states_.find(name);
  if (it == states_.end()) return;
  TableState& state = it->second;
  Log("table ", name, " removed from ", options_.data_dir);
  // Out of the index before its versions go, so that a request from now on
  // finds no table (NOT_FOUND) and none finds a table without a version
  // (UNAVAILABLE). The entry lives until Reclaim() below.
  TableEntry* entry = state.entry;
  index_.Remove(name);
  entry->slots.Clear();
  watcher_->Unwatch(state.watch);
  for (const auto& [version, wd] : state.copying) watcher_->Unwatch(wd);
  {
    std::lock_guard lock(mu_);
    states_.erase(it);
  }
  // The entry (and any version a request still holds) is freed once no
  // request can hold it.
  index_.Reclaim();
  Changed(name);
}

TableRegistry::TableState* TableRegistry::Present(const std::string& table) {
  auto it = states_.find(table);
  return it == states_.end() ? nullptr : &it->second;
}

std::string TableRegistry::VersionDir(const TableState& state,
                                      uint64_t version) const {
  return StrCat(state.dir, "/", VersionDirName(version));
}

uint64_t TableRegistry::Target(const TableState& state) const {
  const uint64_t current = state.serving ? state.serving->version : 0;
  const auto usable = [&](uint64_t v) {
    return std::binary_search(state.on_disk.begin(), state.on_disk.end(), v) &&
           !state.failed.count(v);
  };
  if (state.pinned && usable(*state.pinned)) {
    return *state.pinned == current ? 0 : *state.pinned;
  }
  // The newest version not rolled back from and not failed, never going
  // back past the one served.
  for (auto it = state.on_disk.rbegin(); it != state.on_disk.rend(); ++it) {
    if (*it <= current) break;
    if (!state.rolled_back.count(*it) && !state.failed.count(*it)) return *it;
  }
  return 0;
}

void TableRegistry::ScanTable(TableState* state) {
  auto versions = ListVersions(state->dir);
  if (!versions.ok()) {
    // Removed while scanning (the next scan sees it gone), or unreadable:
    // say so once, and keep serving what is served.
    const std::string problem(versions.status().message());
    if (problem != state->list_problem) {
      Log(problem, "; its new versions are not seen until it can be read");
      state->list_problem = problem;
    }
    return;
  }
  state->list_problem.clear();
  std::vector<uint64_t> complete;
  std::set<uint64_t> incomplete;
  for (const TableVersion& v : *versions) {
    if (v.complete) {
      complete.push_back(v.version);
    } else if (!v.problem.empty()) {
      // A version directory that cannot be searched, say: a failed
      // version (reason "open"), tried again if that changes.
      const std::string fingerprint = Fingerprint(v.path);
      auto failed = state->failed.find(v.version);
      if (failed == state->failed.end() ||
          failed->second.fingerprint != fingerprint) {
        Fail(state, v.version, absl::PermissionDeniedError(v.problem),
             fingerprint);
      }
    } else {
      incomplete.insert(v.version);
    }
  }
  {
    std::lock_guard lock(mu_);
    state->on_disk = complete;
  }
  // Failed versions whose files changed since are tried again.
  for (auto it = state->failed.begin(); it != state->failed.end();) {
    const bool listed =
        std::binary_search(complete.begin(), complete.end(), it->first);
    if (listed &&
        Fingerprint(VersionDir(*state, it->first)) != it->second.fingerprint) {
      if (it->second.reason == "modified") state->recheck.insert(it->first);
      it = state->failed.erase(it);
    } else {
      ++it;
    }
  }
  // Versions still being copied in, and failed ones that were incomplete,
  // are watched for their files.
  for (uint64_t v : complete) {
    auto f = state->failed.find(v);
    if (f != state->failed.end() && f->second.reason == "incomplete") {
      incomplete.insert(v);
    }
  }
  for (auto it = state->copying.begin(); it != state->copying.end();) {
    if (incomplete.count(it->first)) {
      ++it;
      continue;
    }
    watcher_->Unwatch(it->second);
    it = state->copying.erase(it);
  }
  for (uint64_t v : incomplete) {
    if (!state->copying.count(v)) {
      state->copying[v] = watcher_->Watch(VersionDir(*state, v), true);
    }
  }
  if (state->loading.empty()) {
    if (const uint64_t target = Target(*state)) StartLoad(state, target);
  }
  PruneVersions(state);
}

void TableRegistry::StartLoad(TableState* state, uint64_t version,
                              std::function<void(Loaded&)> then) {
  state->loading.insert(version);
  LoadOptions options;
  options.open.read.verify_checksums = options_.verify_checksums;
  options.open.read.load_mode = options_.load_mode;
  // Leased in every load mode: a private copy (huge-pages) cannot be pulled
  // from under the server, but a version whose file changes is no longer
  // the version its MANIFEST describes, and is dropped all the same.
  options.lease = true;
  // A version that was modified while served must match its MANIFEST byte
  // for byte before it is served again: another table's file, copied over
  // it, would pass every check of its own.
  options.open.check_file_checksum = state->recheck.count(version) > 0;
  Loaded job;
  job.table = state->entry->name;
  job.table_id = state->id;
  job.version = version;
  job.then = std::move(then);
  const std::string dir = VersionDir(*state, version);
  // Taken before the load, so that a change during it makes a retry.
  job.fingerprint = Fingerprint(dir);
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
  state->loading.erase(state->loading.find(loaded.version));
  auto& outcome = loaded.outcome;
  if (!outcome.lease_problem.empty() && !state->lease_problem_logged) {
    Log("serving ", loaded.table, " without a lease: ", outcome.lease_problem,
        " (a writer that truncates a served file can crash the server; "
        "see docs/operations.md)");
    state->lease_problem_logged = true;
  }
  const std::string version_name = VersionDirName(loaded.version);
  if (outcome.version.ok()) {
    state->busy_logged.erase(loaded.version);
    state->recheck.erase(loaded.version);
  } else if (outcome.version.status().code() == absl::StatusCode::kAborted) {
    // Open for writing: tried again on the next scan.
    if (state->busy_logged.insert(loaded.version).second) {
      Log("not loading ", loaded.table, " ", version_name,
          " yet: ", outcome.version.status().message());
    }
  } else {
    Fail(state, loaded.version, outcome.version.status(), loaded.fingerprint);
  }
  if (loaded.then) {
    loaded.then(loaded);
  } else if (outcome.version.ok() && Target(*state) == loaded.version &&
             Serve(state, *outcome.version) == ServeResult::kBusy) {
    state->waiting = *outcome.version;
  }
  if (state->loading.empty()) {
    if (const uint64_t target = Target(*state)) StartLoad(state, target);
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
  state->failed[version] = {reason, fingerprint};
  state->failures[reason]++;
  if (reason != "incomplete") state->swaps_failed++;
}

TableRegistry::ServeResult TableRegistry::Serve(
    TableState* state, std::shared_ptr<const ServingVersion> v) {
  if (v->lease && !v->lease->Held()) {
    // A writer asked for the file after it was checked: the next scan
    // loads it again.
    Log("not serving ", state->entry->name, " ", v->version_name,
        ": its table file was opened for writing since it was checked");
    return ServeResult::kStale;
  }
  if (!state->entry->slots.Publish(v)) {
    if (state->waiting != v) {
      Log("cannot swap in ", state->entry->name, " ", v->version_name,
          " yet: older versions are still in use; will retry");
    }
    return ServeResult::kBusy;
  }
  Log("serving ", state->entry->name, " ", v->version_name, " (",
      TableFormatName(v->table().format()), ", ", v->table().num_keys(),
      " keys)");
  {
    std::lock_guard lock(mu_);
    state->serving = std::move(v);
    state->swaps_ok++;
  }
  Changed(state->entry->name);
  return ServeResult::kServed;
}

void TableRegistry::Drop(TableState* state, const std::string& why) {
  const uint64_t version = state->serving->version;
  Log("stopped serving ", state->entry->name, " ", VersionDirName(version),
      ": ", why);
  state->entry->slots.Clear();
  {
    std::lock_guard lock(mu_);
    state->serving.reset();
    // Fingerprinted now, while the writer waits for the lease: whatever it
    // writes makes the version be tried again (recheck).
    state->failed[version] = {"modified",
                              Fingerprint(VersionDir(*state, version))};
    state->failures["modified"]++;
    state->swaps_failed++;
  }
  Changed(state->entry->name);
}

void TableRegistry::OnLeaseBreaks(const WatchEvents& events) {
  if (events.lease_breaks.empty() && !events.lease_overflow) return;
  std::vector<TableState*> dropped;
  for (auto& [name, state] : states_) {
    const auto& v = state.serving;
    if (!v || !v->lease) continue;
    const bool broken =
        events.lease_overflow
            ? !v->lease->Held()
            : std::count(events.lease_breaks.begin(), events.lease_breaks.end(),
                         v->lease->fd()) > 0;
    if (broken) {
      Drop(&state,
           "its table file is being opened for writing or truncated "
           "(published versions must not change)");
      dropped.push_back(&state);
    }
  }
  // The writer waits until the lease goes with the mapping: unmap now if
  // no request reads it, and keep reclaiming until then.
  Reclaim();
  for (TableState* state : dropped) {
    // Fingerprinted after the writer is done: tried again if it changed.
    if (state->loading.empty()) {
      if (const uint64_t target = Target(*state)) StartLoad(state, target);
    }
  }
}

void TableRegistry::PruneVersions(TableState* state) {
  const size_t keep = options_.keep_versions;
  if (keep == 0 || state->on_disk.size() <= keep) return;
  std::vector<uint64_t> kept;
  for (uint64_t v : state->on_disk) {
    const bool newest = v >= state->on_disk[state->on_disk.size() - keep];
    const bool serving = state->serving && state->serving->version == v;
    if (newest || serving || state->pinned == v || state->loading.count(v)) {
      kept.push_back(v);
      continue;
    }
    // Requests may still read it: unlinking a mapped file is safe, and the
    // mapping lasts until the version is reclaimed. roost-load publishes
    // versions read-only, so the directory is made writable first.
    const fs::path dir = VersionDir(*state, v);
    std::error_code ec;
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir, ec);
    if (ec) {
      Log("cannot remove ", dir.string(), ": ", ec.message());
      kept.push_back(v);
    } else {
      Log("removed ", state->entry->name, " ", VersionDirName(v),
          " (--keep-versions ", keep, ")");
    }
  }
  std::lock_guard lock(mu_);
  state->on_disk = std::move(kept);
}

void TableRegistry::RefreshResidentBytes() {
  for (auto& [name, state] : states_) {
    const uint64_t resident =
        state.serving ? ResidentBytes(state.serving->table().file_data()) : 0;
    std::lock_guard lock(mu_);
    state.resident_bytes = resident;
  }
}

}  // namespace roost
