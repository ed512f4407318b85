// RepositoryPuller: roost-server's side of a table repository
// (--repository URI, repository/repository.h). Its thread reads the POINTER
// of every table at the repository's root every --repository-poll seconds,
// tells the registry (TableRegistry::SetPointers: the pointer decides what
// serves, forward or back), and makes sure the data directory holds the
// repository's copy of each pointed version (PullVersion: this server's
// --shard of it, staged, verified, renamed in), one download at a time.
// The registry then loads it as any version.
//
// A version on disk is the repository's only if its MANIFEST is the
// repository's byte for byte (the MANIFEST names every file's size and
// XXH3-64) and it holds this server's file: a copy from another repository
// (--repository changed, the data directory kept), from before the table
// was deleted and published again under the same numbers, or pulled for
// another --shard, is not. Each is compared once per reading of the
// POINTERs: a HEAD of the repository's MANIFEST, and a GET of it only when
// its ETag or the local copy changed since they last matched. A copy that
// is not the repository's is logged, counted
// (roost_repository_local_mismatches_total), reported to the registry
// (which stops serving it) and pulled afresh over it. Each table directory
// pulled into holds a REPOSITORY file naming the repository.
//
// Failures are logged and counted by reason, and never stop the thread: a
// repository that cannot be read is tried again after a backoff (doubling
// from --repository-poll up to 32 times it, with jitter); a version that
// cannot be pulled (missing, corrupt, no space...) likewise, per table,
// while the version served until then keeps serving.
//
// Thread-safety: Notify and CollectMetrics may be called from any thread.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(auto puller,
//                          RepositoryPuller::Create(options, &registry));
//   puller->Start();
//   ...
//   puller->Stop();
#ifndef ROOST_SERVER_REPOSITORY_PULLER_H_
#define ROOST_SERVER_REPOSITORY_PULLER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "prometheus/metric_family.h"
#include "repository/aws_credentials.h"
#include "repository/object_store.h"
#include "server/server_options.h"
#include "server/table_registry.h"

namespace roost {

class RepositoryPuller {
 public:
  // Opens options.repository.uri; InvalidArgument for a bad URI or AWS_*
  // environment. `registry` must outlive the puller.
  static absl::StatusOr<std::unique_ptr<RepositoryPuller>> Create(
      const ServerOptions& options, TableRegistry* registry);
  ~RepositoryPuller();  // Stop()s

  // Starts the thread (after the registry's).
  void Start();
  // Stops it: a download (paced or not) or a POINTER reading under way
  // ends within about a second, its staging directory removed.
  void Stop();

  // A table's serving version may have changed: looked at soon (for the
  // seconds-to-serving histogram and the lag).
  void Notify();

  // The roost_repository_* families.
  void CollectMetrics(std::vector<prometheus::MetricFamily>* out) const;

 private:
  using Clock = std::chrono::steady_clock;
  struct TableState {
    uint64_t pointer = 0;
    uint64_t serving = 0;
    // When this server first saw the pointer name `pointer`, and whether
    // the seconds until it served it were observed.
    Clock::time_point pointer_seen;
    bool observed = false;
    // The pointed version's failed pulls, and when to try again.
    int failures = 0;
    Clock::time_point retry_at;
    // The copy of `pointer` on disk, as last compared with the repository's
    // (RepositoryPointer::Local), and the generation told with it.
    RepositoryPointer::Local local = RepositoryPointer::Local::kUnknown;
    uint64_t generation = 0;
    // What the last match was found with: the version, the ETag of its
    // MANIFEST in the repository and the local copy's VersionFingerprint.
    // A look that finds all three unchanged needs no GET.
    uint64_t matched_version = 0;
    std::string matched_etag;
    std::string matched_local;
    // Set by each reading of the POINTERs: the copy is compared again.
    bool look_due = true;
    // Whether DATA_DIR/T/REPOSITORY was looked at (and a change of
    // repository logged).
    bool origin_checked = false;
    // Counters.
    uint64_t pulled = 0;
    uint64_t bytes = 0;
    std::map<std::string, uint64_t> failures_by_reason;
    std::map<std::string, uint64_t> mismatches;  // by reason
    // The seconds from pointer move to serving: bucket counts, sum.
    std::vector<uint64_t> seconds_buckets;
    uint64_t seconds_count = 0;
    double seconds_sum = 0;
  };

  RepositoryPuller(const ServerOptions& options, TableRegistry* registry);
  void Run();
  // Reads the POINTERs and hands them to the registry; an error when the
  // repository (or one pointer) could not be read.
  absl::Status ReadPointers();
  // Compares the copies of the pointed versions on disk with the
  // repository's where due (Look), pulling those missing or not the
  // repository's whose retry time has come; returns the earliest retry time
  // still ahead.
  Clock::time_point Reconcile();
  // Compares `table`'s copy of `version` with the repository's; pulls it
  // when it is missing or differs. True when what the registry is told of
  // the table changed.
  bool Look(const std::string& table, uint64_t version);
  // Pulls `version` (`replace`: over a copy that is not the repository's);
  // true when it was pulled.
  bool Pull(const std::string& table, uint64_t version, bool replace);
  // Counts and logs a failed pull or comparison; retried with backoff.
  void Refused(const std::string& table, uint64_t version,
               const std::string& reason, const absl::Status& status);
  // Logs a repository other than the one DATA_DIR/T/REPOSITORY names (once
  // per table), and writes the file naming this one once a version of the
  // table on disk is this repository's.
  void CheckOrigin(const std::string& table);
  void NoteOrigin(const std::string& table);
  // Tells the registry the POINTERs and the state of their local copies.
  void TellRegistry();
  // Records what the registry serves: lag, and seconds to serving.
  void LookAtServing();
  // `base` times 2^(failures-1), at most 32 times, with jitter (0.75-1.25).
  Clock::duration Backoff(int failures);
  void CountPollFailure(const std::string& reason);

  const ServerOptions options_;
  TableRegistry* const registry_;
  // Declared before store_, which reads it (ObjectStoreOptions::stop).
  std::atomic<bool> stop_{false};
  std::unique_ptr<ObjectStore> store_;  // set by Create, then never again
  // The AWS credentials an s3:// store signs with (null for a local one),
  // for their expiry and renewal failures; set by Create.
  std::shared_ptr<AwsCredentialsProvider> credentials_;
  std::mt19937_64 random_{std::random_device{}()};
  bool pointers_told_ = false;  // SetPointers was called (thread only)
  std::string poll_problem_;    // the last listing error logged (thread only)

  mutable std::mutex mu_;  // guards what follows
  std::condition_variable wake_;
  bool notified_ = false;
  std::map<std::string, TableState> tables_;
  std::map<std::string, uint64_t> poll_failures_;  // by reason

  std::thread thread_;
};

}  // namespace roost

#endif  // ROOST_SERVER_REPOSITORY_PULLER_H_
