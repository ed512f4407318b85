#include "server/table_registry.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>

#include "server/log.h"
#include "storage/data_dir.h"
#include "storage/json.h"
#include "storage/str_cat.h"

namespace roost {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kRollbackFileName = "ROLLBACK";

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
// roost_table_load_failures_total.
constexpr const char* kFailureReasons[] = {"manifest", "open", "corrupt",
                                           "unsupported"};
std::string FailureReason(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kDataLoss:
      return "corrupt";
    case absl::StatusCode::kFailedPrecondition:
      return "unsupported";
    case absl::StatusCode::kInvalidArgument:
      return "manifest";
    default:
      return "open";
  }
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

TableRegistry::TableRegistry(const ServerOptions& options,
                             std::function<void()> on_ready)
    : options_(options), on_ready_(std::move(on_ready)) {
  maps_.push_back(std::make_unique<const TableMap>());
  map_.store(maps_.back().get());
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

void TableRegistry::Stop() {
  if (!thread_.joinable()) return;
  stop_.store(true);
  watcher_->Wake();
  thread_.join();
}

TableEntry* TableRegistry::Find(const std::string& name) const {
  const TableMap* map = map_.load(std::memory_order_acquire);
  auto it = map->find(name);
  return it == map->end() ? nullptr : it->second;
}

void TableRegistry::Run() {
  watcher_->Watch(options_.data_dir);
  Scan();
  for (const auto& [name, state] : states_) initial_tables_.push_back(name);
  RefreshResidentBytes();
  CheckReady();
  const auto poll = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(options_.poll_interval_seconds));
  const auto refresh = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(options_.resident_refresh_seconds));
  auto next_poll = Clock::now() + poll;
  auto next_refresh = Clock::now() + refresh;
  bool reclaim_pending = false;
  while (!stop_.load()) {
    auto wake_at = std::min(next_poll, next_refresh);
    // Old versions still read by requests are checked for often, so that
    // they are unmapped soon after their last request.
    if (reclaim_pending) {
      wake_at = std::min(wake_at, Clock::now() + std::chrono::milliseconds(20));
    }
    const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
        wake_at - Clock::now());
    const bool woke =
        watcher_->Wait(std::max(timeout, std::chrono::milliseconds(0)));
    if (stop_.load()) break;
    RunCommands();
    if (woke || Clock::now() >= next_poll) {
      Scan();
      next_poll = Clock::now() + poll;
      CheckReady();
    }
    if (Clock::now() >= next_refresh) {
      RefreshResidentBytes();
      next_refresh = Clock::now() + refresh;
    }
    reclaim_pending = false;
    for (auto& [name, state] : states_) {
      if (state.entry->slots.Reclaim() > 0) reclaim_pending = true;
    }
  }
}

void TableRegistry::CheckReady() {
  if (ready_) return;
  std::string waiting;
  for (const std::string& name : initial_tables_) {
    const TableState& state = states_.at(name);
    if (state.entry->present.load() && state.serving == nullptr) {
      waiting += StrCat(waiting.empty() ? "" : ", ", name);
    }
  }
  if (!waiting.empty()) {
    if (!waiting_logged_) {
      Log("not ready: waiting for a version of ", waiting,
          " that loads (health stays NOT_SERVING)");
      waiting_logged_ = true;
    }
    return;
  }
  ready_ = true;
  if (on_ready_) on_ready_();
}

void TableRegistry::Scan() {
  std::error_code ec;
  std::set<std::string> seen;
  for (const auto& item : fs::directory_iterator(options_.data_dir, ec)) {
    const std::string name = item.path().filename().string();
    std::error_code type_ec;
    if (!item.is_directory(type_ec) || !ValidateTableName(name).ok()) continue;
    seen.insert(name);
    ScanTable(StateFor(name));
  }
  if (ec) {
    Log("cannot list ", options_.data_dir, ": ", ec.message());
    return;
  }
  for (auto& [name, state] : states_) {
    if (seen.count(name) || !state.entry->present.load()) continue;
    Log("table ", name, " removed from ", options_.data_dir);
    state.entry->present.store(false);
    state.entry->slots.Clear();
    std::lock_guard lock(mu_);
    state.serving.reset();
    state.on_disk.clear();
  }
}

TableRegistry::TableState* TableRegistry::StateFor(const std::string& name) {
  auto it = states_.find(name);
  if (it != states_.end()) {
    if (!it->second.entry->present.load()) {
      // The directory was removed and made again: the kernel dropped the
      // old watch with it.
      it->second.entry->present.store(true);
      it->second.failed.clear();
      LoadRollbackState(&it->second);
      watcher_->Watch(it->second.dir);
    }
    return &it->second;
  }
  entries_.push_back(std::make_unique<TableEntry>(name));
  TableEntry* entry = entries_.back().get();
  auto map = std::make_unique<TableMap>(*map_.load());
  (*map)[name] = entry;
  maps_.push_back(std::move(map));
  map_.store(maps_.back().get(), std::memory_order_release);

  TableState state;
  state.entry = entry;
  state.dir = (fs::path(options_.data_dir) / name).string();
  TableState* s;
  {
    std::lock_guard lock(mu_);
    s = &states_.emplace(name, std::move(state)).first->second;
  }
  LoadRollbackState(s);
  watcher_->Watch(s->dir);
  return s;
}

void TableRegistry::ScanTable(TableState* state) {
  auto versions = ListVersions(state->dir);
  if (!versions.ok()) return;  // removed while scanning; the next scan sees
  std::vector<uint64_t> complete;
  for (const TableVersion& v : *versions) {
    if (v.complete) complete.push_back(v.version);
  }
  {
    std::lock_guard lock(mu_);
    state->on_disk = complete;
  }
  const uint64_t current = state->serving ? state->serving->version : 0;
  const auto on_disk = [&](uint64_t v) {
    return std::binary_search(complete.begin(), complete.end(), v);
  };
  if (state->pinned && on_disk(*state->pinned) &&
      !state->failed.count(*state->pinned)) {
    if (*state->pinned != current) {
      if (auto v = Load(state, *state->pinned); v.ok()) Serve(state, *v);
    }
  } else {
    // The newest version that loads, never going back past the current one.
    for (auto it = complete.rbegin(); it != complete.rend(); ++it) {
      if (*it <= current) break;
      if (state->rolled_back.count(*it) || state->failed.count(*it)) continue;
      auto v = Load(state, *it);
      // A version that loaded but could not be swapped in yet is tried
      // again on the next scan, not passed over for an older one.
      if (v.ok()) {
        Serve(state, *v);
        break;
      }
    }
  }
  PruneVersions(state);
}

absl::StatusOr<std::shared_ptr<const ServingVersion>> TableRegistry::Load(
    TableState* state, uint64_t version) {
  const std::string name = state->entry->name;
  auto sv = std::make_shared<ServingVersion>();
  sv->version = version;
  sv->version_name = VersionDirName(version);
  const fs::path dir = fs::path(state->dir) / sv->version_name;
  absl::Status status = [&]() -> absl::Status {
    const std::string manifest_path = (dir / std::string(kManifestName));
    auto text = ReadWholeFile(manifest_path);
    if (!text.ok()) return text.status();
    auto manifest = Manifest::Parse(*text);
    if (!manifest.ok()) {
      return absl::InvalidArgumentError(StrCat(
          "bad MANIFEST ", manifest_path, ": ", manifest.status().message()));
    }
    sv->manifest = std::move(*manifest);
    const Manifest& m = sv->manifest;
    if (m.table != name || m.version != version) {
      return absl::InvalidArgumentError(StrCat("MANIFEST ", manifest_path,
                                               " is for table \"", m.table,
                                               "\" version ", m.version));
    }
    TableReadOptions read;
    read.verify_checksums = options_.verify_checksums;
    read.load_mode = options_.load_mode;
    const std::string table_path = (dir / std::string(kTableFileName));
    auto file = TableFile::Open(table_path, read);
    if (!file.ok()) return file.status();
    sv->file = std::move(*file);
    const std::string_view format = TableFormatName(sv->file->format());
    if (m.format != format || m.keys != sv->file->num_keys()) {
      return absl::InvalidArgumentError(
          StrCat("MANIFEST says ", m.keys, " keys in a ", m.format, " table; ",
                 table_path, " holds ", sv->file->num_keys(), " keys in a ",
                 format, " table"));
    }
    sv->file_size = sv->file->file_data().size();
    for (const ManifestFile& f : m.files) {
      if (f.name == kTableFileName && f.size != sv->file_size) {
        return absl::InvalidArgumentError(
            StrCat("MANIFEST says ", table_path, " has ", f.size,
                   " bytes; it has ", sv->file_size));
      }
    }
    // Only the cuckoo format's inline layout fixes the key width; any other
    // table whose keys merely happen to share a length answers a shorter
    // key with a miss.
    const CuckooTable* cuckoo = sv->file->cuckoo();
    sv->key_width = cuckoo ? cuckoo->header().key_width : 0;
    sv->max_key_length = sv->file->max_key_length();
    return absl::OkStatus();
  }();
  if (status.ok()) return std::shared_ptr<const ServingVersion>(std::move(sv));

  Log("cannot load ", name, " ", sv->version_name, ": ", status.message());
  std::lock_guard lock(mu_);
  state->failed.insert(version);
  state->failures[FailureReason(status)]++;
  state->swaps_failed++;
  return status;
}

bool TableRegistry::Serve(TableState* state,
                          std::shared_ptr<const ServingVersion> v) {
  if (!state->entry->slots.Publish(v)) {
    Log("cannot swap in ", state->entry->name, " ", v->version_name,
        " yet: older versions are still in use; will retry");
    return false;
  }
  Log("serving ", state->entry->name, " ", v->version_name, " (",
      TableFormatName(v->file->format()), ", ", v->file->num_keys(), " keys)");
  std::lock_guard lock(mu_);
  state->serving = std::move(v);
  state->swaps_ok++;
  return true;
}

void TableRegistry::PruneVersions(TableState* state) {
  const size_t keep = options_.keep_versions;
  if (keep == 0 || state->on_disk.size() <= keep) return;
  std::vector<uint64_t> kept;
  for (uint64_t v : state->on_disk) {
    const bool newest = v >= state->on_disk[state->on_disk.size() - keep];
    const bool serving = state->serving && state->serving->version == v;
    if (newest || serving || state->pinned == v) {
      kept.push_back(v);
      continue;
    }
    // Requests may still read it: unlinking a mapped file is safe, and the
    // mapping lasts until the version is reclaimed.
    const fs::path dir = fs::path(state->dir) / VersionDirName(v);
    std::error_code ec;
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
        state.serving ? ResidentBytes(state.serving->file->file_data()) : 0;
    std::lock_guard lock(mu_);
    state.resident_bytes = resident;
  }
}

void TableRegistry::LoadRollbackState(TableState* state) {
  std::optional<uint64_t> pinned;
  std::set<uint64_t> rolled_back;
  const std::string path =
      (fs::path(state->dir) / std::string(kRollbackFileName)).string();
  std::error_code ec;
  if (fs::exists(path, ec)) {
    auto text = ReadWholeFile(path);
    auto json = text.ok() ? ParseJson(*text) : text.status();
    if (json.ok() && json->is_object()) {
      pinned = JsonUint64(*json, "pinned");
      if (auto it = json->find("rolled_back");
          it != json->end() && it->is_array()) {
        for (const Json& v : *it) {
          if (v.is_number_unsigned()) rolled_back.insert(v.get<uint64_t>());
        }
      }
    } else {
      Log("ignoring ", path, ": ",
          json.ok() ? "not a JSON object" : json.status().message());
    }
  }
  std::lock_guard lock(mu_);
  state->pinned = pinned;
  state->rolled_back = std::move(rolled_back);
}

absl::Status TableRegistry::SaveRollbackState(const TableState& state) {
  OrderedJson json;
  json["pinned"] = state.pinned ? OrderedJson(*state.pinned) : OrderedJson();
  json["rolled_back"] = state.rolled_back;
  const fs::path path = fs::path(state.dir) / std::string(kRollbackFileName);
  const fs::path tmp = fs::path(state.dir) / ".ROLLBACK.tmp";
  const std::string text = DumpJson(json) + "\n";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr ||
      std::fwrite(text.data(), 1, text.size(), f) != text.size() ||
      std::fflush(f) != 0 || ::fsync(::fileno(f)) != 0) {
    if (f != nullptr) std::fclose(f);
    return absl::InternalError(StrCat("cannot write ", tmp.string()));
  }
  std::fclose(f);
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    return absl::InternalError(
        StrCat("cannot rename ", tmp.string(), ": ", ec.message()));
  }
  return absl::OkStatus();
}

void TableRegistry::Rollback(std::string table, std::string version,
                             RollbackDone done) {
  {
    std::lock_guard lock(commands_mu_);
    commands_.push_back(
        [this, table = std::move(table), version = std::move(version),
         done = std::move(done)] { done(DoRollback(table, version)); });
  }
  watcher_->Wake();
}

void TableRegistry::Unpin(std::string table, UnpinDone done) {
  {
    std::lock_guard lock(commands_mu_);
    commands_.push_back([this, table = std::move(table),
                         done = std::move(done)] { done(DoUnpin(table)); });
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

absl::StatusOr<std::pair<std::string, std::string>> TableRegistry::DoRollback(
    const std::string& table, const std::string& version_text) {
  auto it = states_.find(table);
  if (table.empty() || it == states_.end() || !it->second.entry->present) {
    return absl::NotFoundError(StrCat("no table \"", table, "\""));
  }
  TableState* state = &it->second;
  ScanTable(state);  // the versions on disk now
  if (!state->serving) {
    return absl::FailedPreconditionError(
        StrCat("table \"", table, "\" serves no version to roll back from"));
  }
  const uint64_t current = state->serving->version;
  uint64_t target = 0;
  if (version_text.empty()) {
    for (uint64_t v : state->on_disk) {
      if (v < current && !state->failed.count(v)) target = v;
    }
    if (target == 0) {
      return absl::FailedPreconditionError(
          StrCat("table \"", table, "\" has no complete version older than ",
                 VersionDirName(current), " on disk"));
    }
  } else {
    auto v = ParseVersionText(version_text);
    if (!v) {
      return absl::InvalidArgumentError(
          StrCat("bad version \"", version_text, "\" (expected v000003 or 3)"));
    }
    target = *v;
  }
  if (!std::binary_search(state->on_disk.begin(), state->on_disk.end(),
                          target)) {
    return absl::NotFoundError(StrCat("table \"", table,
                                      "\" has no complete version ",
                                      VersionDirName(target), " on disk"));
  }
  if (target != current) {
    state->failed.erase(target);  // asked for by name: try it again
    auto v = Load(state, target);
    if (!v.ok()) {
      return absl::FailedPreconditionError(StrCat("cannot load ", table, " ",
                                                  VersionDirName(target), ": ",
                                                  v.status().message()));
    }
    if (!Serve(state, *v)) {
      return absl::UnavailableError(
          "older versions are still in use by requests; try again");
    }
  }
  {
    std::lock_guard lock(mu_);
    if (target != current) state->rolled_back.insert(current);
    state->rolled_back.erase(target);
    state->pinned = target;
  }
  Log("rolled ", table, " back to ", VersionDirName(target), " from ",
      VersionDirName(current), "; pinned");
  if (absl::Status s = SaveRollbackState(*state); !s.ok()) {
    return absl::InternalError(
        StrCat("serving ", VersionDirName(target),
               ", but the pin will not survive a restart: ", s.message()));
  }
  return std::make_pair(VersionDirName(target), VersionDirName(current));
}

absl::StatusOr<std::string> TableRegistry::DoUnpin(const std::string& table) {
  auto it = states_.find(table);
  if (table.empty() || it == states_.end() || !it->second.entry->present) {
    return absl::NotFoundError(StrCat("no table \"", table, "\""));
  }
  TableState* state = &it->second;
  {
    std::lock_guard lock(mu_);
    state->pinned.reset();
  }
  if (absl::Status s = SaveRollbackState(*state); !s.ok()) return s;
  ScanTable(state);
  Log("unpinned ", table);
  return state->serving ? state->serving->version_name : std::string();
}

std::vector<TableStatus> TableRegistry::List() const {
  std::lock_guard lock(mu_);
  std::vector<TableStatus> out;
  for (const auto& [name, state] : states_) {
    if (!state.entry->present.load()) continue;
    TableStatus t;
    t.name = name;
    if (const auto& v = state.serving) {
      t.format = std::string(TableFormatName(v->file->format()));
      t.serving_version = v->version_name;
      t.keys = v->file->num_keys();
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
  auto failures =
      MakeFamily("roost_table_load_failures_total",
                 "Versions that failed to load, by reason (manifest, open, "
                 "corrupt, unsupported).",
                 MetricType::Counter);
  auto pinned = MakeFamily("roost_table_pinned",
                           "1 while a rollback pins the table's version.",
                           MetricType::Gauge);
  std::lock_guard lock(mu_);
  for (const auto& [name, state] : states_) {
    if (!state.entry->present.load()) continue;
    const TableLookupMetrics& m = state.entry->lookups;
    AddMetric(&lookups, {{"result", "hit"}, {"table", name}}).counter.value =
        static_cast<double>(m.hits());
    AddMetric(&lookups, {{"result", "miss"}, {"table", name}}).counter.value =
        static_cast<double>(m.misses());
    const auto& v = state.serving;
    if (v && v->file->format() == TableFormat::kCuckoo) {
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
                {{"format", std::string(TableFormatName(v->file->format()))},
                 {"table", name},
                 {"version", v->version_name}})
          .gauge.value = 1;
      AddMetric(&keys, {{"table", name}}).gauge.value =
          static_cast<double>(v->file->num_keys());
      AddMetric(&mapped, {{"table", name}}).gauge.value =
          static_cast<double>(v->file_size);
      AddMetric(&resident, {{"table", name}}).gauge.value =
          static_cast<double>(state.resident_bytes);
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
  for (auto* f : {&lookups, &probes, &info, &keys, &mapped, &resident, &swaps,
                  &failures, &pinned}) {
    out->push_back(std::move(*f));
  }
}

}  // namespace roost
