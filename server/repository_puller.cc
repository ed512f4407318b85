// RepositoryPuller's thread: read the POINTERs, tell the registry, pull
// what is missing, watch what serves. See repository_puller.h.
#include "server/repository_puller.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "repository/repository.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/version_pull.h"
#include "storage/version/data_dir.h"
#include "util/owned_dir.h"
#include "util/str_cat.h"

namespace roost {
namespace {

namespace fs = std::filesystem;

// Upper bounds of the seconds-to-serving histogram's buckets.
constexpr double kSecondsBuckets[] = {0.5, 1,   2,   5,   10,   30,
                                      60,  120, 300, 600, 1800, 3600};

// Every reason of roost_repository_pull_failures_total, so that each has a
// series from the first scrape.
constexpr const char* kPullReasons[] = {"unreachable", "denied",   "missing",
                                        "corrupt",     "manifest", "shard",
                                        "no_space",    "local"};

// Every reason of roost_repository_local_mismatches_total: a copy on disk
// whose MANIFEST is not the repository's, or that lacks this server's file.
constexpr const char* kMismatchReasons[] = {"manifest", "file"};

// The reason a POINTER could not be read: a pointer that holds no version
// name is "pointer".
std::string PointerFailureReason(const absl::Status& status) {
  return absl::IsDataLoss(status) ? "pointer" : StoreFailureReason(status);
}

// Removes DATA_DIR/*/.staging-<own pid>-*: left by an earlier server that
// had this pid (a container's), so certainly debris now. Those of other
// dead processes go when a pull makes its staging directory.
void RemoveOwnStagingDebris(const std::string& data_dir) {
  const std::string prefix = StrCat(".staging-", ::getpid(), "-");
  std::error_code ec;
  for (const auto& table : fs::directory_iterator(data_dir, ec)) {
    std::error_code inner;
    for (const auto& entry : fs::directory_iterator(table.path(), inner)) {
      if (entry.path().filename().string().rfind(prefix, 0) == 0) {
        Log("removing ", entry.path().string(),
            ": a download an earlier server did not finish");
        RemoveTree(entry.path().string());
      }
    }
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<RepositoryPuller>> RepositoryPuller::Create(
    const ServerOptions& options, TableRegistry* registry) {
  std::unique_ptr<RepositoryPuller> puller(
      new RepositoryPuller(options, registry));
  // Every request of the store ends when Stop() sets stop_: a download,
  // however large, and a store that stopped answering hold up no shutdown.
  ObjectStoreOptions store_options;
  store_options.stop = &puller->stop_;
  absl::StatusOr<std::unique_ptr<ObjectStore>> store =
      OpenObjectStore(options.repository.uri, store_options);
  if (!store.ok()) {
    return absl::InvalidArgumentError(StrCat("--repository ",
                                             options.repository.uri, ": ",
                                             store.status().message()));
  }
  puller->store_ = *std::move(store);
  if (options.repository.uri.rfind("s3://", 0) == 0) {
    puller->credentials_ = DefaultAwsCredentialsIfFound();
  }
  return puller;
}

RepositoryPuller::RepositoryPuller(const ServerOptions& options,
                                   TableRegistry* registry)
    : options_(options), registry_(registry) {}

RepositoryPuller::~RepositoryPuller() { Stop(); }

void RepositoryPuller::Start() {
  Log("pulling ",
      options_.shard ? StrCat("shard ", *options_.shard) : "unsharded tables",
      " from ", store_->uri(), " every ", options_.repository.poll_seconds,
      " s",
      options_.repository.download_rate
          ? StrCat(", at most ", options_.repository.download_rate, " bytes/s")
          : std::string());
  thread_ = std::thread([this] { Run(); });
}

void RepositoryPuller::Stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stop_.store(true);
  }
  wake_.notify_all();
  thread_.join();
}

void RepositoryPuller::Notify() {
  {
    std::lock_guard lock(mu_);
    notified_ = true;
  }
  wake_.notify_all();
}

RepositoryPuller::Clock::duration RepositoryPuller::Backoff(int failures) {
  const double base = options_.repository.poll_seconds;
  const double factor = std::pow(2.0, std::min(std::max(failures, 1) - 1, 5));
  std::uniform_real_distribution<double> jitter(0.75, 1.25);
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(base * factor * jitter(random_)));
}

void RepositoryPuller::Run() {
  RemoveOwnStagingDebris(options_.data_dir);
  int poll_failures = 0;
  Clock::time_point next_poll = Clock::now();
  while (!stop_.load()) {
    if (Clock::now() >= next_poll) {
      if (ReadPointers().ok()) {
        poll_failures = 0;
        next_poll = Clock::now() + Backoff(1);
      } else {
        next_poll = Clock::now() + Backoff(++poll_failures);
      }
    }
    const Clock::time_point retry = Reconcile();
    LookAtServing();
    // Wake for the next poll or retry, a Notify(), or once a second.
    std::unique_lock lock(mu_);
    wake_.wait_until(
        lock,
        std::min({next_poll, retry, Clock::now() + std::chrono::seconds(1)}),
        [&] { return stop_.load() || notified_; });
    notified_ = false;
  }
}

absl::Status RepositoryPuller::ReadPointers() {
  // The tables: the "T/" prefixes at the repository's root.
  std::vector<std::string> names;
  ListOptions list;
  list.group_by_slash = true;
  absl::Status status;
  for (;;) {
    absl::StatusOr<ListPage> page = store_->List(list);
    if (!page.ok()) {
      status = page.status();
      break;
    }
    for (std::string prefix : page->common_prefixes) {
      if (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
      if (ValidateTableName(prefix).ok()) names.push_back(std::move(prefix));
    }
    if (page->next_page_token.empty()) break;
    list.page_token = page->next_page_token;
  }
  if (stop_.load()) return absl::CancelledError("stopping");
  const bool listed = status.ok();
  std::map<std::string, uint64_t> pointers;
  std::set<std::string> unread;  // tables whose pointer could not be read
  TableRepository repository(store_.get());
  for (const std::string& table :
       status.ok() ? names : std::vector<std::string>{}) {
    if (stop_.load()) return absl::CancelledError("stopping");
    absl::StatusOr<std::optional<Pointer>> pointer =
        repository.ReadPointer(table);
    if (stop_.load()) return absl::CancelledError("stopping");
    if (!pointer.ok()) {
      unread.insert(table);
      const std::string reason = PointerFailureReason(pointer.status());
      if (status.ok()) status = pointer.status();
      std::lock_guard lock(mu_);
      tables_[table].failures_by_reason[reason]++;
      continue;
    }
    if (*pointer) pointers[table] = (*pointer)->version;
  }
  if (!status.ok()) {
    const std::string problem(status.message());
    CountPollFailure(PointerFailureReason(status));
    if (problem != poll_problem_) {
      Log("cannot read the POINTERs of ", store_->uri(), ": ", problem,
          " (tables keep serving what they serve; trying again with "
          "backoff)");
      poll_problem_ = problem;
    }
    // Before the first full reading the registry waits (not ready). After
    // it, every table keeps the last POINTER read when the tables could not
    // be listed, and so does a table whose POINTER could not be read.
    if (!pointers_told_ || !listed) return status;
  } else if (!poll_problem_.empty()) {
    Log("reading the POINTERs of ", store_->uri(), " again");
    poll_problem_.clear();
  }
  {
    std::lock_guard lock(mu_);
    const auto now = Clock::now();
    for (auto& [table, state] : tables_) {
      if (!pointers.count(table) && unread.count(table) && state.pointer) {
        pointers[table] = state.pointer;
      }
    }
    for (const auto& [table, version] : pointers) {
      TableState& state = tables_[table];
      state.look_due = true;
      if (state.pointer != version) {
        if (state.pointer != 0 || pointers_told_) {
          Log("the POINTER of ", table, " names ", VersionDirName(version),
              state.pointer
                  ? StrCat(" (was ", VersionDirName(state.pointer), ")")
                  : std::string());
        }
        state.pointer = version;
        state.pointer_seen = now;
        state.observed = false;
        state.failures = 0;
        state.retry_at = now;
        state.local = RepositoryPointer::Local::kUnknown;
      }
    }
    for (auto& [table, state] : tables_) {
      if (pointers.count(table) || state.pointer == 0) continue;
      // Deleted (a table wiped, to be published again, say): nothing on
      // disk is known to be the repository's any more, and the registry
      // takes up no other version meanwhile (TableRegistry::SetPointers).
      Log(table, " has no POINTER in ", store_->uri(),
          " any more: it keeps serving what it serves, and takes up no "
          "other version until a POINTER names one");
      state.pointer = 0;
      state.local = RepositoryPointer::Local::kUnknown;
    }
  }
  pointers_told_ = true;
  TellRegistry();
  return status;
}

void RepositoryPuller::TellRegistry() {
  std::map<std::string, RepositoryPointer> told;
  {
    std::lock_guard lock(mu_);
    for (const auto& [table, state] : tables_) {
      if (state.pointer == 0) continue;
      told[table] = {state.pointer, state.local, state.generation};
    }
  }
  registry_->SetPointers(std::move(told));
}

void RepositoryPuller::CountPollFailure(const std::string& reason) {
  std::lock_guard lock(mu_);
  poll_failures_[reason]++;
}

RepositoryPuller::Clock::time_point RepositoryPuller::Reconcile() {
  Clock::time_point earliest = Clock::time_point::max();
  std::vector<std::pair<std::string, uint64_t>> due;
  {
    std::lock_guard lock(mu_);
    const auto now = Clock::now();
    for (const auto& [table, state] : tables_) {
      if (state.pointer == 0) continue;
      if (!state.look_due &&
          state.local == RepositoryPointer::Local::kMatches) {
        continue;
      }
      if (state.retry_at > now) {
        earliest = std::min(earliest, state.retry_at);
        continue;
      }
      due.emplace_back(table, state.pointer);
    }
  }
  bool changed = false;
  for (const auto& [table, version] : due) {
    if (stop_.load()) break;
    changed |= Look(table, version);
    std::lock_guard lock(mu_);
    const TableState& state = tables_[table];
    if (state.retry_at > Clock::now()) {
      earliest = std::min(earliest, state.retry_at);
    }
  }
  if (changed && !stop_.load()) TellRegistry();
  return earliest;
}

bool RepositoryPuller::Pull(const std::string& table, uint64_t version,
                            bool replace) {
  const std::string name = VersionDirName(version);
  Log("pulling ", table, " ", name, " from ", store_->uri());
  PullJob job;
  job.store = store_.get();
  job.table = table;
  job.version = version;
  job.data_dir = options_.data_dir;
  job.shard = options_.shard;
  job.rate = options_.repository.download_rate;
  job.min_free_bytes = options_.repository.min_free_bytes;
  job.stop = &stop_;
  job.verified = registry_->verified_files();
  job.replace = replace;
  job.on_bytes = [this, table](uint64_t bytes) {
    std::lock_guard lock(mu_);
    tables_[table].bytes += bytes;
  };
  const auto started = Clock::now();
  const PullOutcome outcome = PullVersion(job);
  if (stop_.load() && absl::IsCancelled(outcome.status)) return false;
  if (!outcome.status.ok()) {
    Refused(table, version, outcome.reason, outcome.status);
    return false;
  }
  {
    std::lock_guard lock(mu_);
    TableState& state = tables_[table];
    state.pulled++;
    state.failures = 0;
    if (state.pointer == version) {
      // A new copy in place: loaded again though a copy of the same number
      // may serve. Compared with the repository again at the next look.
      state.local = RepositoryPointer::Local::kMatches;
      state.generation++;
      state.look_due = false;
      state.matched_version = 0;
    }
  }
  Log("pulled ", table, " ", name, " in ",
      SecondsText(
          std::chrono::duration<double>(Clock::now() - started).count()));
  NoteOrigin(table);
  return true;
}

void RepositoryPuller::Refused(const std::string& table, uint64_t version,
                               const std::string& reason,
                               const absl::Status& status) {
  std::lock_guard lock(mu_);
  TableState& state = tables_[table];
  state.failures_by_reason[reason]++;
  if (state.pointer == version) {
    state.failures++;
    state.retry_at = Clock::now() + Backoff(state.failures);
  }
  Log("refused ", table, " ", VersionDirName(version), " (", reason,
      "): ", status.message(), "; ",
      state.serving ? StrCat(VersionDirName(state.serving), " keeps serving")
                    : std::string("nothing serves yet"),
      "; trying again in ",
      SecondsText(std::chrono::duration<double>(state.retry_at - Clock::now())
                      .count()));
}

void RepositoryPuller::LookAtServing() {
  std::map<std::string, uint64_t> serving;
  for (const TableStatus& t : registry_->List()) {
    if (auto v = ParseVersionDirName(t.serving_version)) serving[t.name] = *v;
  }
  std::lock_guard lock(mu_);
  const auto now = Clock::now();
  for (auto& [table, state] : tables_) {
    auto it = serving.find(table);
    state.serving = it == serving.end() ? 0 : it->second;
    if (state.pointer == 0 || state.observed ||
        state.serving != state.pointer) {
      continue;
    }
    state.observed = true;
    const double seconds =
        std::chrono::duration<double>(now - state.pointer_seen).count();
    if (state.seconds_buckets.empty()) {
      state.seconds_buckets.assign(std::size(kSecondsBuckets), 0);
    }
    for (size_t i = 0; i < std::size(kSecondsBuckets); ++i) {
      if (seconds <= kSecondsBuckets[i]) state.seconds_buckets[i]++;
    }
    state.seconds_count++;
    state.seconds_sum += seconds;
  }
}

void RepositoryPuller::CollectMetrics(
    std::vector<prometheus::MetricFamily>* out) const {
  using prometheus::MetricType;
  auto pulled = MakeFamily("roost_repository_versions_pulled_total",
                           "Versions pulled from the repository, by table.",
                           MetricType::Counter);
  auto bytes = MakeFamily("roost_repository_pull_bytes_total",
                          "Bytes downloaded from the repository, by table.",
                          MetricType::Counter);
  auto failures = MakeFamily(
      "roost_repository_pull_failures_total",
      "Pulls and POINTER reads that failed, by table and reason "
      "(unreachable, denied, missing, corrupt, manifest, shard, no_space, "
      "local, pointer).",
      MetricType::Counter);
  auto mismatches = MakeFamily(
      "roost_repository_local_mismatches_total",
      "Copies of a pointed version on disk found not to be the repository's, "
      "by table and reason (manifest: its MANIFEST differs, as after the "
      "table was deleted and published again or --repository changed; file: "
      "it lacks this server's file), each pulled afresh.",
      MetricType::Counter);
  auto polls = MakeFamily(
      "roost_repository_poll_failures_total",
      "Readings of the repository's POINTERs that failed, by reason.",
      MetricType::Counter);
  auto pointer = MakeFamily(
      "roost_repository_pointer_version",
      "The version the table's POINTER names (as this server last read it).",
      MetricType::Gauge);
  auto lag = MakeFamily(
      "roost_repository_lag_versions",
      "The POINTER's version minus the version served (0 when serving it; "
      "negative after a rollback until the old version serves).",
      MetricType::Gauge);
  auto seconds = MakeFamily(
      "roost_repository_pointer_to_serving_seconds",
      "Seconds from when this server first saw a POINTER name a version to "
      "when that version served.",
      MetricType::Histogram);
  std::lock_guard lock(mu_);
  for (const auto& [reason, n] : poll_failures_) {
    AddMetric(&polls, {{"reason", reason}}).counter.value =
        static_cast<double>(n);
  }
  for (const auto& [table, state] : tables_) {
    AddMetric(&pulled, {{"table", table}}).counter.value =
        static_cast<double>(state.pulled);
    AddMetric(&bytes, {{"table", table}}).counter.value =
        static_cast<double>(state.bytes);
    std::map<std::string, uint64_t> by_reason = state.failures_by_reason;
    for (const char* reason : kPullReasons) by_reason[reason] += 0;
    for (const auto& [reason, n] : by_reason) {
      AddMetric(&failures, {{"reason", reason}, {"table", table}})
          .counter.value = static_cast<double>(n);
    }
    std::map<std::string, uint64_t> mismatched = state.mismatches;
    for (const char* reason : kMismatchReasons) mismatched[reason] += 0;
    for (const auto& [reason, n] : mismatched) {
      AddMetric(&mismatches, {{"reason", reason}, {"table", table}})
          .counter.value = static_cast<double>(n);
    }
    if (state.pointer == 0) continue;
    AddMetric(&pointer, {{"table", table}}).gauge.value =
        static_cast<double>(state.pointer);
    AddMetric(&lag, {{"table", table}}).gauge.value =
        static_cast<double>(state.pointer) - static_cast<double>(state.serving);
    auto& h = AddMetric(&seconds, {{"table", table}}).histogram;
    for (size_t i = 0; i < std::size(kSecondsBuckets); ++i) {
      h.bucket.push_back(
          {state.seconds_buckets.empty() ? 0 : state.seconds_buckets[i],
           kSecondsBuckets[i]});
    }
    h.bucket.push_back(
        {state.seconds_count, std::numeric_limits<double>::infinity()});
    h.sample_count = state.seconds_count;
    h.sample_sum = state.seconds_sum;
  }
  for (auto* f : {&pulled, &bytes, &failures, &mismatches, &polls, &pointer,
                  &lag, &seconds}) {
    out->push_back(std::move(*f));
  }
  if (credentials_ == nullptr) return;
  auto renewals = MakeFamily(
      "roost_repository_credentials_refresh_failures_total",
      "Renewals of the repository's temporary AWS credentials that failed "
      "(the old ones serve until they expire).",
      MetricType::Counter);
  AddMetric(&renewals, {}).counter.value =
      static_cast<double>(credentials_->refresh_failures());
  out->push_back(std::move(renewals));
  if (const double expiry = credentials_->expiry_unix_seconds(); expiry > 0) {
    auto expires = MakeFamily(
        "roost_repository_credentials_expiry_timestamp_seconds",
        "When the repository's temporary AWS credentials expire, in seconds "
        "since the Unix epoch (absent for long-lived keys).",
        MetricType::Gauge);
    AddMetric(&expires, {}).gauge.value = expiry;
    out->push_back(std::move(expires));
  }
}

}  // namespace roost
