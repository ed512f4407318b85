#include "server/table_registry.h"

#include <malloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>

#include "server/log.h"
#include "server/rollback_file.h"
#include "storage/data_dir.h"
#include "util/escape.h"
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

// "v000003" or "3" as a version number.
std::optional<uint64_t> ParseVersionText(std::string_view text) {
  if (auto v = ParseVersionDirName(text)) return v;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v == 0) {
    return std::nullopt;
  }
  return v;
}

// Why a version was refused, as the `reason` label of
// roost_table_load_failures_total. "incomplete": its files had not all
// arrived; "modified": a writer changed its file while it was served.
constexpr const char* kFailureReasons[] = {
    "manifest", "open", "corrupt", "unsupported", "incomplete", "modified"};
std::string FailureReason(const absl::Status& status) {
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

// Bytes of `data` resident in memory, from mincore(2).
uint64_t ResidentBytes(std::string_view data) {
  if (data.empty()) return 0;
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin =
      reinterpret_cast<uintptr_t>(data.data()) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(data.data()) + data.size();
  const size_t pages = (end - begin + page - 1) / page;
  std::vector<unsigned char> vec(pages);
  if (::mincore(reinterpret_cast<void*>(begin), end - begin, vec.data()) != 0) {
    return 0;
  }
  uint64_t resident = 0;
  for (unsigned char c : vec) resident += c & 1;
  return std::min<uint64_t>(resident * page, data.size());
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
  const std::string reason = FailureReason(status);
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

void TableRegistry::LoadRollbackState(TableState* state) {
  std::string problem;
  RollbackState rollback = ReadRollbackFile(state->dir, &problem);
  if (!problem.empty())
    Log("ignoring ROLLBACK of ", state->entry->name, ": ", problem);
  std::lock_guard lock(mu_);
  state->pinned = rollback.pinned;
  state->rolled_back = std::move(rollback.rolled_back);
}

absl::Status TableRegistry::SaveRollbackState(const TableState& state) {
  return WriteRollbackFile(state.dir, {state.pinned, state.rolled_back});
}

void TableRegistry::Rollback(std::string table, std::string version,
                             RollbackDone done) {
  {
    std::lock_guard lock(commands_mu_);
    commands_.push_back([this, table = std::move(table),
                         version = std::move(version),
                         done = std::move(done)]() mutable {
      DoRollback(table, version, std::move(done));
    });
  }
  watcher_->Wake();
}

void TableRegistry::Unpin(std::string table, UnpinDone done) {
  {
    std::lock_guard lock(commands_mu_);
    commands_.push_back(
        [this, table = std::move(table), done = std::move(done)]() mutable {
          DoUnpin(table, std::move(done));
        });
  }
  watcher_->Wake();
}

void TableRegistry::RunCommands() {
  for (;;) {
    std::function<void()> command;
    {
      std::lock_guard lock(commands_mu_);
      if (commands_.empty()) return;
      command = std::move(commands_.front());
      commands_.pop_front();
    }
    command();
  }
}

void TableRegistry::DoRollback(const std::string& table,
                               const std::string& version_text,
                               RollbackDone done) {
  TableState* state = Present(table);
  if (state == nullptr) {
    return done(
        absl::NotFoundError(StrCat("no table ", PrintableKey(table, 128))));
  }
  ScanTable(state);  // the versions on disk now
  if (!state->serving) {
    return done(absl::FailedPreconditionError(
        StrCat("table \"", table, "\" serves no version to roll back from")));
  }
  const uint64_t current = state->serving->version;
  uint64_t target = 0;
  if (version_text.empty()) {
    for (uint64_t v : state->on_disk) {
      if (v < current && !state->failed.count(v)) target = v;
    }
    if (target == 0) {
      return done(absl::FailedPreconditionError(
          StrCat("table \"", table, "\" has no complete version older than ",
                 VersionDirName(current), " on disk")));
    }
  } else {
    auto v = ParseVersionText(version_text);
    if (!v) {
      return done(absl::InvalidArgumentError(
          StrCat("bad version ", PrintableKey(version_text, 64),
                 " (expected v000003 or 3)")));
    }
    target = *v;
  }
  if (!std::binary_search(state->on_disk.begin(), state->on_disk.end(),
                          target)) {
    return done(absl::NotFoundError(
        StrCat("table \"", table, "\" has no complete version ",
               VersionDirName(target), " on disk")));
  }
  // Pins `target`, now served, and marks what was served before it.
  auto pin = [this, table, target](TableState* s, uint64_t previous,
                                   RollbackDone& done) {
    {
      std::lock_guard lock(mu_);
      if (target != previous) s->rolled_back.insert(previous);
      s->rolled_back.erase(target);
      s->pinned = target;
    }
    Log("rolled ", table, " back to ", VersionDirName(target), " from ",
        VersionDirName(previous), "; pinned");
    if (absl::Status st = SaveRollbackState(*s); !st.ok()) {
      return done(absl::InternalError(
          StrCat("serving ", VersionDirName(target),
                 ", but the pin will not survive a restart: ", st.message())));
    }
    done(std::make_pair(VersionDirName(target), VersionDirName(previous)));
  };
  if (target == current) return pin(state, current, done);
  state->failed.erase(target);  // asked for by name: try it again
  StartLoad(
      state, target,
      [this, table, id = state->id, target, pin,
       done = std::move(done)](Loaded& loaded) mutable {
        TableState* s = Present(table);
        if (s == nullptr || s->id != id) {
          return done(
              absl::NotFoundError(StrCat("table \"", table, "\" was removed")));
        }
        const auto& v = loaded.outcome.version;
        if (!v.ok()) {
          return done(absl::FailedPreconditionError(
              StrCat("cannot load ", table, " ", VersionDirName(target), ": ",
                     v.status().message())));
        }
        const uint64_t previous = s->serving ? s->serving->version : 0;
        switch (Serve(s, *v)) {
          case ServeResult::kServed:
            return pin(s, previous, done);
          case ServeResult::kBusy:
            return done(absl::UnavailableError(
                "older versions are still in use by requests; try "
                "again"));
          case ServeResult::kStale:
            return done(absl::UnavailableError(StrCat(
                VersionDirName(target), " is being written to; try again")));
        }
      });
}

void TableRegistry::DoUnpin(const std::string& table, UnpinDone done) {
  TableState* state = Present(table);
  if (state == nullptr) {
    return done(
        absl::NotFoundError(StrCat("no table ", PrintableKey(table, 128))));
  }
  {
    std::lock_guard lock(mu_);
    state->pinned.reset();
  }
  if (absl::Status s = SaveRollbackState(*state); !s.ok()) return done(s);
  Log("unpinned ", table);
  ScanTable(state);
  const uint64_t target = Target(*state);
  if (target == 0) {
    return done(state->serving ? state->serving->version_name : std::string());
  }
  // Answers once the version to serve now has loaded (or failed to).
  StartLoad(state, target,
            [this, table, id = state->id,
             done = std::move(done)](Loaded& loaded) mutable {
              TableState* s = Present(table);
              if (s == nullptr || s->id != id) {
                return done(absl::NotFoundError(
                    StrCat("table \"", table, "\" was removed")));
              }
              const auto& v = loaded.outcome.version;
              if (v.ok() && Target(*s) == loaded.version &&
                  Serve(s, *v) == ServeResult::kBusy) {
                s->waiting = *v;
              }
              done(s->serving ? s->serving->version_name : std::string());
            });
}

std::vector<TableStatus> TableRegistry::List() const {
  std::lock_guard lock(mu_);
  std::vector<TableStatus> out;
  for (const auto& [name, state] : states_) {
    TableStatus t;
    t.name = name;
    if (const auto& v = state.serving) {
      t.format = std::string(TableFormatName(v->table().format()));
      t.serving_version = v->version_name;
      t.keys = v->table().num_keys();
      t.file_size = v->file_size;
      t.max_key_length = v->max_key_length;
      t.key_width = v->key_width;
    }
    for (uint64_t v : state.on_disk) {
      t.versions_on_disk.push_back(VersionDirName(v));
    }
    t.pinned = state.pinned.has_value();
    for (uint64_t v : state.rolled_back) {
      t.rolled_back.push_back(VersionDirName(v));
    }
    out.push_back(std::move(t));
  }
  return out;
}

void TableRegistry::CollectMetrics(
    std::vector<prometheus::MetricFamily>* out) const {
  using prometheus::MetricType;
  auto lookups =
      MakeFamily("roost_lookups_total", "Keys looked up, by table and result.",
                 MetricType::Counter);
  auto probes =
      MakeFamily("roost_lookup_probes",
                 "Cuckoo blocks (cache lines) touched per lookup, by table.",
                 MetricType::Histogram);
  auto info = MakeFamily("roost_table_info",
                         "The version and format each table serves (1).",
                         MetricType::Gauge);
  auto serving = MakeFamily(
      "roost_table_serving",
      "1 while the table serves a version, 0 while it has none to serve.",
      MetricType::Gauge);
  auto keys = MakeFamily("roost_table_keys", "Keys in the served version.",
                         MetricType::Gauge);
  auto mapped = MakeFamily("roost_table_mapped_bytes",
                           "Bytes of the served version mapped in memory.",
                           MetricType::Gauge);
  auto resident = MakeFamily(
      "roost_table_resident_bytes",
      "Bytes of the served version resident in RAM (mincore, refreshed "
      "every --resident-refresh).",
      MetricType::Gauge);
  auto swaps = MakeFamily("roost_table_swaps_total",
                          "Versions swapped in (success) or refused (failure).",
                          MetricType::Counter);
  auto failures = MakeFamily(
      "roost_table_load_failures_total",
      "Versions that failed to load or were dropped, by reason (manifest, "
      "open, corrupt, unsupported, incomplete, modified).",
      MetricType::Counter);
  auto pinned = MakeFamily("roost_table_pinned",
                           "1 while a rollback pins the table's version.",
                           MetricType::Gauge);
  auto leased = MakeFamily(
      "roost_table_leased",
      "1 while the served version's file is protected by a read lease "
      "(writers are held off until it is unmapped).",
      MetricType::Gauge);
  auto tables = MakeFamily("roost_tables",
                           "Table directories served (at most --max-tables).",
                           MetricType::Gauge);
  auto ignored = MakeFamily(
      "roost_tables_ignored",
      "Table directories not served because --max-tables are served.",
      MetricType::Gauge);
  auto stalled = MakeFamily(
      "roost_registry_stalled",
      "1 while the registry's thread has not come round its loop for "
      "--stall-timeout (new versions are not picked up).",
      MetricType::Gauge);
  auto load_age = MakeFamily(
      "roost_registry_oldest_load_seconds",
      "How long the longest-running version load has been running (0: none).",
      MetricType::Gauge);
  std::lock_guard lock(mu_);
  AddMetric(&tables, {}).gauge.value = static_cast<double>(states_.size());
  AddMetric(&ignored, {}).gauge.value =
      static_cast<double>(refused_tables_.size());
  AddMetric(&stalled, {}).gauge.value = Stalled() ? 1 : 0;
  AddMetric(&load_age, {}).gauge.value =
      std::chrono::duration<double>(workers_.OldestRunning()).count();
  for (const auto& [name, state] : states_) {
    const TableLookupMetrics& m = state.entry->lookups;
    AddMetric(&lookups, {{"result", "hit"}, {"table", name}}).counter.value =
        static_cast<double>(m.hits());
    AddMetric(&lookups, {{"result", "miss"}, {"table", name}}).counter.value =
        static_cast<double>(m.misses());
    const auto& v = state.serving;
    AddMetric(&serving, {{"table", name}}).gauge.value = v ? 1 : 0;
    if (v && v->table().counts_blocks_touched()) {
      auto& h = AddMetric(&probes, {{"table", name}}).histogram;
      uint64_t cumulative = 0;
      double sum = 0;
      for (int n = 0; n <= kMaxProbes + 1; ++n) {
        const uint64_t count = m.probes(n);
        cumulative += count;
        sum += static_cast<double>(count) * n;
        if (n <= kMaxProbes) {
          h.bucket.push_back({cumulative, static_cast<double>(n)});
        }
      }
      h.bucket.push_back({cumulative, std::numeric_limits<double>::infinity()});
      h.sample_count = cumulative;
      h.sample_sum = sum;
    }
    if (v) {
      AddMetric(&info,
                {{"format", std::string(TableFormatName(v->table().format()))},
                 {"table", name},
                 {"version", v->version_name}})
          .gauge.value = 1;
      AddMetric(&keys, {{"table", name}}).gauge.value =
          static_cast<double>(v->table().num_keys());
      AddMetric(&mapped, {{"table", name}}).gauge.value =
          static_cast<double>(v->file_size);
      AddMetric(&resident, {{"table", name}}).gauge.value =
          static_cast<double>(state.resident_bytes);
      AddMetric(&leased, {{"table", name}}).gauge.value = v->lease ? 1 : 0;
    }
    AddMetric(&swaps, {{"result", "success"}, {"table", name}}).counter.value =
        static_cast<double>(state.swaps_ok);
    AddMetric(&swaps, {{"result", "failure"}, {"table", name}}).counter.value =
        static_cast<double>(state.swaps_failed);
    // Every reason has a series from the start, so that increase() sees
    // the first failure.
    for (const char* reason : kFailureReasons) {
      auto it = state.failures.find(reason);
      AddMetric(&failures, {{"reason", reason}, {"table", name}})
          .counter.value =
          static_cast<double>(it == state.failures.end() ? 0 : it->second);
    }
    AddMetric(&pinned, {{"table", name}}).gauge.value = state.pinned ? 1 : 0;
  }
  for (auto* f :
       {&lookups, &probes, &info, &serving, &keys, &mapped, &resident, &swaps,
        &failures, &pinned, &leased, &tables, &ignored, &stalled, &load_age}) {
    out->push_back(std::move(*f));
  }
}

}  // namespace roost
