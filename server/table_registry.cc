// TableRegistry's loop and scan: the registry thread wakes on a change in
// the data directory (or the poll interval), finds each table's versions
// and the one to serve, and hands loads to the workers. Its other rooms: a
// version's load, serving, drop and pruning (registry_versions.cc), admin
// commands and rollback pins (registry_admin.cc), the Prometheus collector
// and resident bytes (registry_metrics.cc).
#include "server/table_registry.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "server/log.h"
#include "storage/version/data_dir.h"
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

TableVersions::Options VersionsOptions(const ServerOptions& options) {
  return {.keep_versions = options.keep_versions,
          .version_grace = Seconds(options.version_grace_seconds),
          .repository = options.repository.enabled()};
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
    if (!state.versions.on_disk().empty()) must_serve_.insert(name);
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
    ExpirePrevious();
    reclaim_pending = Reclaim();
  }
}

bool TableRegistry::Reclaim() {
  bool waiting = index_.Reclaim() > 0;
  for (auto& [name, state] : states_) {
    if (state.entry->slots.Reclaim() > 0) waiting = true;
    if (state.entry->previous.Reclaim() > 0) waiting = true;
    if (state.waiting && Serve(&state, state.waiting) != ServeResult::kBusy) {
      state.waiting.reset();
    }
  }
  return waiting;
}

void TableRegistry::CheckReady() {
  if (ready_) return;
  if (options_.repository.enabled() && !PointersServed()) return;
  bool waiting = false;
  std::string stuck;  // tables with nothing loading that could serve
  for (const std::string& name : must_serve_) {
    auto it = states_.find(name);
    if (it == states_.end()) continue;
    switch (it->second.versions.Ready()) {
      case TableVersions::Readiness::kServes:
      case TableVersions::Readiness::kElsewhere:  // PointersServed's
        continue;
      case TableVersions::Readiness::kStuck:
        stuck += StrCat(stuck.empty() ? "" : ", ", name);
        [[fallthrough]];
      case TableVersions::Readiness::kWaiting:
        waiting = true;
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
  bool new_pointers = false;
  {
    std::lock_guard lock(mu_);
    if (incoming_pointers_) {
      pointers_ = std::move(*incoming_pointers_);
      new_pointers = true;
      for (auto& [name, state] : states_) {
        state.versions.SetPointer(PointerFor(name));
      }
    }
    incoming_pointers_.reset();
  }
  if (new_pointers) DropStaleCopies();
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
        Log("ignoring table ", name, ": ", Count(index_.size(), "table"),
            index_.size() == 1 ? " is" : " are",
            " served already (--max-tables ", options_.max_tables, ")");
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
  TableState state(TableVersions(name, VersionsOptions(options_)));
  if (pointers_) state.versions.SetPointer(PointerFor(name));
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
  entry->previous.Clear();
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
  if (options_.repository.enabled() && !state->versions.from_repository()) {
    std::error_code ec;
    if (fs::exists(fs::path(state->dir) / kRepositoryFileName, ec)) {
      state->versions.NoteFromRepository();
    }
  }
  std::vector<uint64_t> complete;
  std::set<uint64_t> incomplete;
  for (const TableVersion& v : *versions) {
    if (v.complete) {
      complete.push_back(v.version);
    } else if (!v.problem.empty()) {
      // A version directory that cannot be searched, say: a failed
      // version (reason "open"), tried again if that changes.
      const std::string fingerprint = VersionFingerprint(v.path);
      if (!state->versions.FailedAlike(v.version, fingerprint)) {
        Fail(state, v.version, absl::PermissionDeniedError(v.problem),
             fingerprint);
      }
    } else {
      incomplete.insert(v.version);
    }
  }
  // Failed versions whose files changed since are tried again: their
  // files now.
  std::map<uint64_t, std::string> fingerprints;
  for (const auto& [v, failure] : state->versions.failed()) {
    if (std::binary_search(complete.begin(), complete.end(), v)) {
      fingerprints[v] = VersionFingerprint(VersionDir(*state, v));
    }
  }
  {
    std::lock_guard lock(mu_);
    state->versions.Listed(complete, fingerprints);
  }
  // Versions still being copied in, failed ones that were incomplete, and
  // ones a writer has open are watched for their files: the writer's close
  // is when they are tried again.
  const std::set<uint64_t> watched =
      state->versions.Watched(std::move(incomplete));
  for (auto it = state->copying.begin(); it != state->copying.end();) {
    if (watched.count(it->first)) {
      ++it;
      continue;
    }
    watcher_->Unwatch(it->second);
    it = state->copying.erase(it);
  }
  for (uint64_t v : watched) {
    if (!state->copying.count(v)) {
      state->copying[v] = watcher_->Watch(VersionDir(*state, v), true);
    }
  }
  if (const uint64_t target = state->versions.LoadNext()) {
    StartLoad(state, target);
  }
  PruneVersions(state);
}

}  // namespace roost
