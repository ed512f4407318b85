// TableRegistry: the tables roost-server serves, and the thread that keeps
// them current.
//
// The registry's thread scans DATA_DIR at start, whenever the watcher says
// something changed, and every poll interval. For each table it serves the
// newest complete version (one with a MANIFEST) that is not rolled back
// from, unless a rollback pins another. A new version is opened, checked
// against its MANIFEST, verified (checksums, unless turned off) and only then
// swapped in; one that fails is logged, counted and skipped, and the current
// one keeps serving. The old version is unmapped once its last request is
// done (VersionSlots). Rollback state lives in DATA_DIR/<table>/ROLLBACK.
//
// Request handlers call Find() and TableEntry::slots.Acquire(): no lock, no
// allocation. Everything else runs on the registry's thread or under its
// mutex.
//
// Example:
//   TableRegistry registry(options, [] { SetHealth(SERVING); });
//   registry.Start();
//   if (TableEntry* t = registry.Find("users")) {
//     if (auto version = t->slots.Acquire()) version->file->Get(...);
//   }
#ifndef ROOST_SERVER_TABLE_REGISTRY_H_
#define ROOST_SERVER_TABLE_REGISTRY_H_

#include <atomic>
#include <condition_variable>
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
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "prometheus/metric_family.h"
#include "server/metrics.h"
#include "server/server_options.h"
#include "server/version_slots.h"
#include "server/watcher.h"
#include "storage/manifest.h"
#include "storage/table_file.h"

namespace roost {

// One opened, verified version of a table. Immutable once published.
struct ServingVersion {
  uint64_t version = 0;
  std::string version_name;  // "v000003"
  std::unique_ptr<TableFile> file;
  Manifest manifest;
  // A fixed-width table's key width (the cuckoo inline layout); 0 when
  // keys may have any length up to max_key_length.
  uint32_t key_width = 0;
  // No key is longer.
  uint32_t max_key_length = 0;
  uint64_t file_size = 0;
};

// A table by name. Created the first time its directory is seen and kept
// for the life of the registry (a removed table just stops serving), so
// handlers may hold the pointer.
struct TableEntry {
  explicit TableEntry(std::string n) : name(std::move(n)) {}
  const std::string name;
  VersionSlots<ServingVersion> slots;
  TableLookupMetrics lookups;
  // Whether DATA_DIR/<name> exists.
  std::atomic<bool> present{true};
};

// What ListTables reports about a table.
struct TableStatus {
  std::string name;
  std::string format;
  std::string serving_version;
  uint64_t keys = 0;
  uint64_t file_size = 0;
  uint32_t max_key_length = 0;
  uint32_t key_width = 0;
  std::vector<std::string> versions_on_disk;
  bool pinned = false;
  std::vector<std::string> rolled_back;
};

class TableRegistry {
 public:
  // `on_ready` runs on the registry's thread, once, when every table found
  // by the first scan serves a version (a table whose directory goes away
  // no longer counts). Until then the server is not ready: a table with no
  // version that loads holds it back until a good one is published.
  TableRegistry(const ServerOptions& options, std::function<void()> on_ready);
  ~TableRegistry();  // Stop()s

  // Starts the thread: the first scan, then watching.
  absl::Status Start();
  void Stop();

  // Any thread, no lock: the table named `name`, or null.
  TableEntry* Find(const std::string& name) const;

  // Any thread. A snapshot of every present table, by name.
  std::vector<TableStatus> List() const;

  // Pins `table` to `version` ("v000003", "3", or empty for the newest
  // complete version older than the serving one), after opening and
  // verifying it; the version served until now is marked as rolled back
  // from. `done` runs on the registry's thread with the outcome (the served
  // and the previous version names), so a handler never waits.
  using RollbackDone = std::function<void(
      absl::StatusOr<std::pair<std::string, std::string>> served_previous)>;
  void Rollback(std::string table, std::string version, RollbackDone done);
  // Removes the pin; the table goes back to its newest version not rolled
  // back from. `done` gets the version then served.
  using UnpinDone = std::function<void(absl::StatusOr<std::string> served)>;
  void Unpin(std::string table, UnpinDone done);

  // The per-table metric families, for the /metrics collector.
  void CollectMetrics(std::vector<prometheus::MetricFamily>* out) const;

 private:
  // Registry-thread state of one table.
  struct TableState {
    TableEntry* entry;
    std::string dir;
    // The version being served (also held by entry->slots); written by the
    // registry's thread under mu_.
    std::shared_ptr<const ServingVersion> serving;
    std::optional<uint64_t> pinned;
    std::set<uint64_t> rolled_back;
    std::set<uint64_t> failed;      // tried and refused; not tried again
    std::vector<uint64_t> on_disk;  // complete versions, oldest first
    uint64_t resident_bytes = 0;
    // Counters shown on /metrics.
    uint64_t swaps_ok = 0;
    uint64_t swaps_failed = 0;
    std::map<std::string, uint64_t> failures;  // by reason
  };

  void Run();
  void Scan();
  // Runs on_ready_ if it has not run and every table of the first scan is
  // served; otherwise logs (once) which ones are not.
  void CheckReady();
  void ScanTable(TableState* state);
  // Opens and checks one version; logs and counts a failure.
  absl::StatusOr<std::shared_ptr<const ServingVersion>> Load(TableState* state,
                                                             uint64_t version);
  bool Serve(TableState* state, std::shared_ptr<const ServingVersion> v);
  void PruneVersions(TableState* state);
  void RefreshResidentBytes();
  absl::Status SaveRollbackState(const TableState& state);
  void LoadRollbackState(TableState* state);
  TableState* StateFor(const std::string& name);  // creates
  void RunCommands();
  absl::StatusOr<std::pair<std::string, std::string>> DoRollback(
      const std::string& table, const std::string& version);
  absl::StatusOr<std::string> DoUnpin(const std::string& table);

  const ServerOptions options_;
  std::function<void()> on_ready_;
  bool ready_ = false;
  bool waiting_logged_ = false;
  std::vector<std::string> initial_tables_;  // found by the first scan

  // Lookups by name: an immutable map replaced whole when a table appears.
  // Old maps are kept (they are small and tables rarely appear), so a
  // handler's Find() never races with a free.
  using TableMap = std::unordered_map<std::string, TableEntry*>;
  std::atomic<const TableMap*> map_{nullptr};
  std::vector<std::unique_ptr<const TableMap>> maps_;
  std::vector<std::unique_ptr<TableEntry>> entries_;

  mutable std::mutex mu_;  // guards states_ for List() and metrics
  std::map<std::string, TableState> states_;

  // Commands from admin handlers, run on the registry's thread.
  std::mutex commands_mu_;
  std::deque<std::function<void()>> commands_;

  std::unique_ptr<Watcher> watcher_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
};

}  // namespace roost

#endif  // ROOST_SERVER_TABLE_REGISTRY_H_
