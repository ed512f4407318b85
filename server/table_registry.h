// TableRegistry: the tables roost-server serves, and the thread that keeps
// them current.
//
// The registry's thread scans DATA_DIR at start, whenever the watcher says
// something changed, and every poll interval. It loads versions (leased,
// opened, checked: version_loader.h) on worker threads, swaps them in
// (VersionSlots; the one replaced into a second slot for --version-grace),
// drops a version whose lease a writer breaks, removes versions past
// --keep-versions, and runs the admin commands (rollback, unpin). Which
// version serves, and what a failure, a writer, a rollback or a
// repository's POINTER does, are the rules of TableVersions
// (table_versions.h), which holds each table's versions: the registry
// tells it what it found and did, and asks it what to do. In short, each
// table serves its newest complete version (one with a MANIFEST) that is
// not rolled back from and has not failed, unless a rollback pins another
// (DATA_DIR/<table>/ROLLBACK); a version that fails is logged, counted and
// skipped until its files change while the current one keeps serving; a
// version a writer opens stops serving at once and serves again only once
// checked whole against its MANIFEST. The old version is unmapped once its
// last request is done.
// Every block table loaded puts its decompressed blocks into one cache the
// registry makes (--block-cache), whatever table or version it is.
//
// Request handlers call Tables() and TableIndex::Reader::Find(), then
// TableEntry::slots.Acquire(): no lock, no allocation. Everything else runs
// on the registry's thread or under its mutex.
//
// Example:
//   TableRegistry registry(options, {.on_ready = [] { SetHealth(SERVING); }});
//   registry.Start();
//   auto tables = registry.Tables();
//   if (TableEntry* t = tables.Find("users")) {
//     if (auto version = t->slots.Acquire()) version->table().Get(...);
//   }
#ifndef ROOST_SERVER_TABLE_REGISTRY_H_
#define ROOST_SERVER_TABLE_REGISTRY_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "prometheus/metric_family.h"
#include "server/metrics.h"
#include "server/server_options.h"
#include "server/table_index.h"
#include "server/table_versions.h"
#include "server/verified_files.h"
#include "server/version_loader.h"
#include "server/version_slots.h"
#include "server/watcher.h"
#include "storage/block/block_cache.h"

namespace roost {

// A table by name, for request handlers: valid while the TableIndex reader
// that found it lives.
struct TableEntry {
  explicit TableEntry(std::string n) : name(std::move(n)) {}
  const std::string name;
  VersionSlots<ServingVersion> slots;
  // The version `slots` served before the current one, for requests that
  // name it, during --version-grace after the swap; empty otherwise
  // (registry_grace.cc).
  VersionSlots<ServingVersion> previous;
  TableLookupMetrics lookups;
};

// What ListTables reports about a table.
struct TableStatus {
  std::string name;
  std::string format;
  std::string serving_version;
  std::string previous_version;  // held for --version-grace; "" when none
  // The newest version withdrawn that the serving one stands in for ("" when
  // none is): ServingVersion::withdrawn_through.
  std::string withdrawn_through;
  uint32_t shard = 0;
  uint32_t shard_count = 0;  // 0: unsharded
  uint64_t keys = 0;
  uint64_t file_size = 0;
  uint32_t max_key_length = 0;
  uint32_t key_width = 0;
  std::vector<std::string> versions_on_disk;
  bool pinned = false;
  std::vector<std::string> rolled_back;
  // With --repository: the version the table's POINTER names ("" when it
  // has none).
  std::string repository_version;
  // A table of rows: the serving version's schema as JSON (one line).
  std::string schema_json;
};

// DATA_DIR/<table>/REPOSITORY: the URI of the repository the table's
// versions were pulled from (written by RepositoryPuller).
inline constexpr std::string_view kRepositoryFileName = "REPOSITORY";

class TableRegistry {
 public:
  struct Callbacks {
    // Once, when every table that had a complete version at the first scan
    // serves one (a table whose directory goes away no longer counts). A
    // table with no complete version holds nobody back.
    std::function<void()> on_ready;
    // Whenever `table` starts or stops serving, appears or goes away.
    std::function<void(const std::string& table)> on_table_change;
  };
  // Both callbacks run on the registry's thread.
  TableRegistry(const ServerOptions& options, Callbacks callbacks);
  ~TableRegistry();  // Stop()s

  // Starts the thread: the first scan, then watching.
  absl::Status Start();
  // Stops the thread, and waits up to --shutdown-timeout for loads in
  // progress; false when some were still running (then the process should
  // exit without running destructors of what they may use).
  bool Stop();

  // Any thread: the files RepositoryPuller verified as it pulled them, which
  // loads then trust (verified_files.h).
  VerifiedFiles* verified_files() { return verified_.get(); }

  // Any thread, no lock: the tables by name.
  TableIndex<TableEntry>::Reader Tables() const { return index_.Read(); }

  // Any thread. A snapshot of every table, by name.
  std::vector<TableStatus> List() const;

  // Any thread: whether the registry's thread has not come round its loop
  // for --stall-timeout (it is stuck on the filesystem, say).
  bool Stalled() const;

  // Pins `table` to `version` ("v000003", "3", or empty for the newest
  // complete version older than the serving one), after loading it; the
  // version served until now is marked as rolled back from. `done` runs on
  // the registry's thread with the outcome (the served and the previous
  // version names), so a handler never waits.
  using RollbackDone = std::function<void(
      absl::StatusOr<std::pair<std::string, std::string>> served_previous)>;
  void Rollback(std::string table, std::string version, RollbackDone done);
  // Removes the pin; the table goes back to its newest version not rolled
  // back from. `done` gets the version then served.
  using UnpinDone = std::function<void(absl::StatusOr<std::string> served)>;
  void Unpin(std::string table, UnpinDone done);

  // With --repository (repository_puller.h), any thread: the version each
  // table's POINTER names. A table named here serves that version once the
  // puller says its copy on disk is the repository's (Local::kMatches) and
  // it loads (an admin rollback pin still wins), whatever is newer; until
  // then it keeps what it serves, but stops serving a copy of that number
  // that differs (kDiffers: not the version its name says). A table not
  // named (no POINTER) that had one, or whose versions were pulled
  // (DATA_DIR/T/REPOSITORY), keeps what it serves and loads no other
  // version; a table never in the repository serves as in a plain data
  // directory. Readiness waits for the first call, then for every table
  // named to serve its version.
  void SetPointers(std::map<std::string, RepositoryPointer> pointers);

  // The per-table and registry metric families, the shard served and the
  // data directory's free space, for the /metrics collector.
  void CollectMetrics(std::vector<prometheus::MetricFamily>* out) const;

 private:
  // Registry-thread state of one table.
  struct TableState {
    explicit TableState(TableVersions v) : versions(std::move(v)) {}
    // Its versions and the rules over them (table_versions.h); what List()
    // and the collector read of it is written under mu_.
    TableVersions versions;
    uint64_t id = 0;  // tells a table from one made again under its name
    TableEntry* entry = nullptr;
    std::string dir;
    int watch = -1;
    // The version being served (also held by entry->slots, and told to
    // `versions`); written by the registry's thread under mu_.
    std::shared_ptr<const ServingVersion> serving;
    // Loaded, waiting for a free slot to be swapped in.
    std::shared_ptr<const ServingVersion> waiting;
    // The version replaced last (also held by entry->previous, and told to
    // `versions`, which knows until when); written by the registry's thread
    // under mu_.
    std::shared_ptr<const ServingVersion> previous;
    std::map<uint64_t, int> copying;  // versions watched: wd
    std::string list_problem;         // the last listing error logged
    bool lease_problem_logged = false;
    uint64_t resident_bytes = 0;
    // Counters shown on /metrics.
    uint64_t swaps_ok = 0;
    uint64_t swaps_failed = 0;
    std::map<std::string, uint64_t> failures;  // by reason
    std::map<std::string, uint64_t> rechecks;  // by result: intact, changed
  };
  // A finished load, handed from a worker to the registry's thread.
  struct Loaded {
    std::string table;
    uint64_t table_id;
    uint64_t version;
    std::string fingerprint;
    LoadOutcome outcome;
    // For a rollback: called with the outcome instead of serving it.
    std::function<void(Loaded&)> then;
  };
  struct Inbox {
    std::mutex mu;
    std::deque<Loaded> loaded;
  };

  void Run();
  void Scan();
  void ScanTable(TableState* state);
  // Runs on_ready if it has not run and every table that must serve does.
  void CheckReady();
  // With --repository: whether pointers are known and every table with one
  // serves its version (logs the ones waited for when that changes).
  bool PointersServed();
  // With --repository, once the POINTERs were read: `table`'s, if it has
  // one.
  std::optional<RepositoryPointer> PointerFor(const std::string& table) const;
  // With --repository, after new pointers are taken: stops serving (and
  // holding for --version-grace) copies the puller found not to be the
  // repository's version of their number, unless pinned.
  void DropStaleCopies();
  void StartLoad(TableState* state, uint64_t version,
                 std::function<void(Loaded&)> then = nullptr);
  void TakeLoaded();
  void Apply(Loaded& loaded);
  // Records a failed version: logs, counts.
  void Fail(TableState* state, uint64_t version, const absl::Status& status,
            const std::string& fingerprint);
  enum class ServeResult { kServed, kBusy, kStale };
  // kBusy: every other slot still has readers (try again after a reclaim);
  // kStale: a writer opened the file since it was checked. With
  // `hold_previous`, a version replaced by a newer one stays answerable
  // for --version-grace (registry_grace.cc); a rollback passes false, and
  // the version it rolls back from as `withdrawing` (answers of `v` then
  // name it in withdrawn_through, as TableVersions::WithdrawnThrough's).
  ServeResult Serve(TableState* state, std::shared_ptr<const ServingVersion> v,
                    bool hold_previous = true, uint64_t withdrawing = 0);
  // registry_grace.cc: the previous version, held after a swap, let go of.
  struct Held {
    std::shared_ptr<const ServingVersion> version;
    std::optional<TableVersions::Held> held;
  };
  // Before a Publish() of `replacing` to entry->slots: holds the version
  // served until now as the previous one when `hold` and it is older and
  // unmodified, else lets go of the one held. Returns what was held before.
  Held HoldPrevious(TableState* state, const ServingVersion& replacing,
                    bool hold);
  // After that Publish() failed: holds `before` again.
  void RestorePrevious(TableState* state, Held before);
  void ReleasePrevious(TableState* state);
  // Lets go of held versions whose grace has ended; every loop round.
  void ExpirePrevious();
  // Stops serving `state`'s version, saying `why`.
  void StopServing(TableState* state, const std::string& why);
  void OnLeaseBreaks(const WatchEvents& events);
  void PruneVersions(TableState* state);
  void RefreshResidentBytes();
  void LoadRollbackState(TableState* state);
  absl::Status SaveRollbackState(const TableState& state);
  TableState* StateFor(const std::string& name);  // creates; null when full
  void RemoveTable(const std::string& name);
  TableState* Present(const std::string& table);
  bool Reclaim();  // true while old versions wait for their readers
  void RunCommands();
  void DoRollback(const std::string& table, const std::string& version,
                  RollbackDone done);
  void DoUnpin(const std::string& table, UnpinDone done);
  std::string VersionDir(const TableState& state, uint64_t version) const;
  void Changed(const std::string& table);

  const ServerOptions options_;
  const Callbacks callbacks_;
  bool ready_ = false;
  std::string waiting_logged_;  // the tables last logged as holding readiness
  // Tables that had a complete version at the first scan.
  std::set<std::string> must_serve_;
  uint64_t next_table_id_ = 1;
  std::set<std::string> refused_tables_;  // over --max-tables, logged

  TableIndex<TableEntry> index_;

  mutable std::mutex mu_;  // guards states_ for List() and metrics
  std::map<std::string, TableState> states_;

  // Commands from admin handlers, run on the registry's thread.
  std::mutex commands_mu_;
  std::deque<std::function<void()>> commands_;

  // --repository: pointers as SetPointers gives them (under mu_), and as
  // the registry's thread last took them.
  std::optional<std::map<std::string, RepositoryPointer>> incoming_pointers_;
  std::optional<std::map<std::string, RepositoryPointer>> pointers_;
  std::string pointers_waiting_logged_;

  std::shared_ptr<Inbox> inbox_ = std::make_shared<Inbox>();
  const std::shared_ptr<VerifiedFiles> verified_ =
      std::make_shared<VerifiedFiles>();
  // The one cache of decompressed blocks every block table loaded shares
  // (--block-cache); a load holds it too, and may outlive the registry.
  const std::shared_ptr<BlockCache> block_cache_ =
      std::make_shared<BlockCache>(options_.block_cache_bytes);
  std::shared_ptr<Watcher> watcher_;
  LoadWorkers workers_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  // steady_clock nanoseconds when the thread last came round its loop.
  std::atomic<int64_t> heartbeat_{0};
};

}  // namespace roost

#endif  // ROOST_SERVER_TABLE_REGISTRY_H_
