// TableVersions: one table's versions as the registry sees them (on disk,
// served, held after a swap, pinned, rolled back from, failed, loading, open
// for a writer), and the registry's rules over them: which version to load
// and serve, which to watch, which to remove, and what a rollback, a lease
// break or a repository's POINTER does. It decides; TableRegistry
// (table_registry.h) scans DATA_DIR, loads versions on its workers,
// publishes them to request handlers, and tells it what happened. No
// threads, files, gRPC or clock in here (the time is passed in), so every
// rule is tested directly (tests/server/table_versions_test.cc). Model:
// LevelDB's VersionSet.
//
// Thread-safety: none. The registry's thread owns each TableVersions; it
// changes what List() and the metrics collector read (the versions on disk,
// the pin, the versions rolled back from, the POINTER) under the registry's
// mutex, which they take to read it.
//
// Example:
//   TableVersions versions("users", {.keep_versions = 2});
//   versions.Listed({1, 2, 3}, {});   // a scan found these
//   if (const uint64_t v = versions.LoadNext()) {
//     const TableVersions::LoadPlan plan = versions.StartLoad(v);
//     ...  // the load, on a worker: leased, opened, checked
//     if (versions.Loaded(v, TableVersions::LoadResult::kLoaded).serve) {
//       ...  // published to the request handlers
//       versions.Served(v, plan.generation);
//     }
//   }
//   for (uint64_t v : versions.Prunable()) {
//     if (RemoveVersionDir(v)) versions.Removed(v);
//   }
//
// The rules, as roost-server has them:
// - Which version serves. The pinned one, if it is on disk and has not
//   failed; else the newest version on disk that is not rolled back from
//   and has not failed, never one older than the version served (a newer
//   one that fails leaves the served one serving).
// - With --repository the table's POINTER decides instead (a pin still
//   wins): nothing loads before the POINTERs are first read; a table with a
//   POINTER serves the version it names, forward or back, once the puller
//   says the copy on disk is the repository's, and loads it again when the
//   puller puts a new copy of that number in place; a copy the puller finds
//   to differ stops serving (and being held), unless pinned. A table
//   without a POINTER that had one, or whose versions were pulled
//   (DATA_DIR/T/REPOSITORY), keeps what it serves and loads no other.
// - Failures. A version that fails to load is skipped until its files
//   change (its fingerprint) or a rollback names it. A version whose table
//   file is open for writing has not failed: it is tried again when the
//   writer closes it (the registry watches it), not at once.
// - Writers. A served or held version whose lease a writer breaks stops
//   serving (is let go of) and is checked against its MANIFEST, every byte,
//   before it serves again; it stays the version to serve meanwhile (a
//   touch is not a rollback): intact, it serves again; changed, it fails.
// - Grace. A swap to a newer version holds the one replaced, unless a
//   writer opened it, for --version-grace; a rollback, a swap to an older
//   version, and the end of the grace let go of it.
// - Retention. With --keep-versions K, a scan removes the versions on disk
//   but the K newest, the one served, the pinned one, one being loaded and
//   the one the POINTER names; with --repository, none before the POINTERs
//   are read.
// - Rollback. To a version named, or to the newest one on disk older than
//   the served one that has not failed; a table that serves nothing has
//   nothing to roll back from, and a version not on disk is not rolled back
//   to. The version named is tried even if it failed; it serves without
//   holding the one rolled back from, which is marked rolled back from, and
//   is pinned. Unpinning gives the table back to the first rule.
// - Readiness. A table that had a complete version at the first scan holds
//   the server's readiness until it serves one (a table with nothing that
//   could load is named in the log); with --repository, until every table
//   with a POINTER serves the version it names, the copy the puller
//   matched, while tables from the repository without one hold nobody.
#ifndef ROOST_SERVER_TABLE_VERSIONS_H_
#define ROOST_SERVER_TABLE_VERSIONS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/rollback_file.h"

namespace roost {

// What a table repository says of a table, as RepositoryPuller tells
// TableRegistry::SetPointers.
struct RepositoryPointer {
  // The version the table's POINTER names.
  uint64_t version = 0;
  // Whether DATA_DIR/T/v<version> is the repository's version: unknown
  // until the puller has compared the two (or pulled it); matches once its
  // MANIFEST is the repository's byte for byte and it holds this server's
  // file; differs while it is not (another repository's, or one from before
  // the table was deleted and published again), until it is pulled afresh.
  enum class Local { kUnknown, kMatches, kDiffers };
  Local local = Local::kUnknown;
  // Changes each time the puller puts a copy of `version` in place: a
  // copy loaded under another value is loaded again, though its number is
  // the one served.
  uint64_t generation = 0;

  bool operator==(const RepositoryPointer&) const = default;
};

// Why a version was refused, as the `reason` label of
// roost_table_load_failures_total: "manifest" (InvalidArgument), "corrupt"
// (DataLoss), "unsupported" (FailedPrecondition), "incomplete" (Unavailable:
// its files had not all arrived) or "open" (anything else).
std::string LoadFailureReason(const absl::Status& status);

class TableVersions {
 public:
  using Clock = std::chrono::steady_clock;

  struct Options {
    // --keep-versions: versions kept on disk; 0 keeps every one. The
    // default value is 0.
    size_t keep_versions = 0;
    // --version-grace: how long a version replaced by a newer one still
    // answers the requests that name it. The default value is zero (not
    // at all).
    Clock::duration version_grace{};
    // --repository: the tables' POINTERs decide what serves. The default
    // value is false.
    bool repository = false;
  };

  // A version that failed to load.
  struct Failure {
    std::string reason;       // LoadFailureReason's
    std::string fingerprint;  // of the version's files when it failed
  };
  // The version served, and which copy of its number (with --repository:
  // RepositoryPointer::generation when its load began).
  struct Serving {
    uint64_t version = 0;
    uint64_t generation = 0;
  };
  // The version replaced last, held for --version-grace until `until`.
  struct Held {
    uint64_t version = 0;
    Clock::time_point until;
  };

  // `table` names the table in error messages.
  TableVersions(std::string table, Options options);

  const std::string& table() const { return table_; }
  // The complete versions on disk (with a MANIFEST), oldest first.
  const std::vector<uint64_t>& on_disk() const { return on_disk_; }
  const std::optional<Serving>& serving() const { return serving_; }
  // The version served; 0 when none is.
  uint64_t serving_version() const { return serving_ ? serving_->version : 0; }
  const std::optional<Held>& held() const { return held_; }
  const std::optional<uint64_t>& pinned() const { return pinned_; }
  const std::set<uint64_t>& rolled_back() const { return rolled_back_; }
  const std::map<uint64_t, Failure>& failed() const { return failed_; }
  // Whether a load is in flight.
  bool loading() const { return !loading_.empty(); }
  // With --repository: what the puller says of the table's POINTER;
  // nullptr when it has none, or the POINTERs have not been read yet.
  const RepositoryPointer* pointer() const {
    return pointer_ ? &*pointer_ : nullptr;
  }
  // The version the POINTER names; 0 for none.
  uint64_t pointer_version() const { return pointer_ ? pointer_->version : 0; }
  bool from_repository() const { return from_repository_; }

  // Which version serves: the version to load and serve now, or 0 when the
  // one it serves is it (or nothing can serve).
  uint64_t Next() const;
  // Next(), unless a load is in flight (0 then).
  uint64_t LoadNext() const;

  // ---- A scan

  // The complete versions a scan listed, oldest first, and the fingerprint
  // now of each failed version among them (which the registry reads
  // first): a failed version whose files changed since is forgotten (tried
  // again).
  void Listed(std::vector<uint64_t> complete,
              const std::map<uint64_t, std::string>& fingerprints);
  // Whether `version` failed with files of this `fingerprint` (a version
  // that cannot be listed, say, need not fail again).
  bool FailedAlike(uint64_t version, std::string_view fingerprint) const;
  // The versions the registry watches for the close of a file: those still
  // being copied in (`incomplete`, from the scan), and complete ones that
  // failed as incomplete or that a writer has open (a load found it so, or
  // it was served when one came).
  std::set<uint64_t> Watched(std::set<uint64_t> incomplete) const;
  // `version` failed to load (its files' fingerprint then); skipped until
  // they change.
  void Failed(uint64_t version, Failure failure);

  // ---- Loads

  // What a load of a version needs to know.
  struct LoadPlan {
    // Every byte checked against the MANIFEST's whole-file checksum (a
    // writer opened it while it served: another table's file, copied over
    // it, would pass every check of its own).
    bool check_file_checksum = false;
    // The copy of the number the POINTER names (RepositoryPointer's), 0
    // for any other version.
    uint64_t generation = 0;
  };
  // A load of `version` starts.
  LoadPlan StartLoad(uint64_t version);
  enum class LoadResult {
    kLoaded,  // opened and checked
    kBusy,    // its table file is open for writing (Aborted)
    kFailed,  // anything else; the registry then calls Failed()
  };
  struct AfterLoad {
    // It was checked whole after a writer (LoadPlan::check_file_checksum):
    // intact when kLoaded, changed when kFailed.
    bool rechecked = false;
    // kBusy for the first time since it last loaded (the registry says
    // so, once).
    bool first_busy = false;
    // kLoaded and the version to serve: publish it.
    bool serve = false;
    // Whether to ask LoadNext() now, once it is published: not after a
    // busy load, or the writer would be asked again and again while it
    // writes (its close wakes a scan).
    bool load_next = false;
  };
  // A load of `version` ended with `result`.
  AfterLoad Loaded(uint64_t version, LoadResult result);

  // ---- Serving, and the version held for --version-grace

  // `version` (the copy `generation`) is published to request handlers.
  void Served(uint64_t version, uint64_t generation);
  // Request handlers no longer find the version served.
  void StoppedServing();
  // Whether a swap to `replacing` holds the version served until now for
  // --version-grace: a step forward (`forward`: not a rollback, and an
  // older version) whose old file a writer has not opened (`unmodified`).
  bool HoldsOnSwap(uint64_t replacing, bool forward, bool unmodified) const;
  // The version served is held from `now` for --version-grace.
  void Hold(Clock::time_point now);
  // The version held is let go of.
  void Release() { held_.reset(); }
  // Holds what was held before a swap that did not happen.
  void Restore(std::optional<Held> held) { held_ = held; }
  // The version held whose grace has ended by `now`; 0 for none.
  uint64_t Expired(Clock::time_point now) const;

  // ---- Writers

  // A writer broke the lease of `version`, served or held: it is checked
  // whole before it serves again. Stopping serving it (StoppedServing) or
  // letting go of it (Release) is the registry's.
  void Modified(uint64_t version);

  // ---- Retention

  // The versions on disk to remove now (--keep-versions).
  std::vector<uint64_t> Prunable() const;
  // `version` was removed from disk.
  void Removed(uint64_t version);

  // ---- Rollback

  // The version a rollback to `version_text` ("v000003", "3", or "" for
  // the newest older than the one served) goes to: FailedPrecondition when
  // the table serves nothing or has no older version, InvalidArgument for
  // text that names no version, NotFound when it is not on disk.
  absl::StatusOr<uint64_t> RollbackTarget(std::string_view version_text) const;
  // `version`, named by a rollback, is tried again even if it failed.
  void Retry(uint64_t version) { failed_.erase(version); }
  // A rollback to `target` is done (it serves, after `previous`): pinned,
  // and `previous` is rolled back from.
  void Pin(uint64_t target, uint64_t previous);
  void Unpin() { pinned_.reset(); }
  // The pin and versions rolled back from, as DATA_DIR/T/ROLLBACK keeps
  // them.
  RollbackState rollback_state() const { return {pinned_, rolled_back_}; }
  void SetRollbackState(RollbackState state);

  // ---- A repository's POINTER

  // The POINTERs were read: `pointer` is the table's, std::nullopt when it
  // has none. From the first call on, the table loads what Next() says.
  void SetPointer(std::optional<RepositoryPointer> pointer);
  // Its versions came from the repository: a POINTER named it, or
  // DATA_DIR/T/REPOSITORY says so. Without a POINTER it then loads no
  // version.
  void NoteFromRepository() { from_repository_ = true; }
  // The version number whose copy must stop serving (and being held)
  // because the puller found it is not the repository's; 0 for none.
  uint64_t StaleCopy() const;
  // Whether it serves the version its POINTER names, the copy the puller
  // matched.
  bool ServesPointer() const;

  // ---- Withdrawn versions

  // The newest version after `serving` that was withdrawn, 0 for none:
  // rolled back from (roost-admin rollback), or, with --repository, a
  // complete version on disk after the one the POINTER names (the POINTER
  // moved back). Answers of `serving` name it (monotonic clients read
  // `serving` again after it, client/README.md).
  uint64_t WithdrawnThrough(uint64_t serving) const;

  // ---- Readiness

  enum class Readiness {
    kServes,     // serves a version
    kElsewhere,  // with --repository, its POINTER (or none) decides
    kWaiting,    // waits for a version that is loading or to load
    kStuck,      // nothing loads, and nothing could (the log names it)
  };
  // How a table that had a complete version at the first scan stands.
  Readiness Ready() const;

 private:
  bool Usable(uint64_t version) const;

  const std::string table_;
  const Options options_;
  std::vector<uint64_t> on_disk_;
  std::optional<Serving> serving_;
  std::optional<Held> held_;
  std::optional<uint64_t> pinned_;
  std::set<uint64_t> rolled_back_;
  std::map<uint64_t, Failure> failed_;
  std::multiset<uint64_t> loading_;  // loads in flight
  std::set<uint64_t> busy_;          // found open for writing, said so
  // Versions a writer opened while served or held: checked against the
  // MANIFEST's whole-file checksum before they serve again.
  std::set<uint64_t> recheck_;
  bool pointers_read_ = false;
  std::optional<RepositoryPointer> pointer_;
  bool from_repository_ = false;
};

}  // namespace roost

#endif  // ROOST_SERVER_TABLE_VERSIONS_H_
