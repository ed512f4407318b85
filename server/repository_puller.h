// RepositoryPuller: roost-server's side of a table repository
// (--repository URI, repository/repository.h). Its thread reads the POINTER
// of every table at the repository's root every --repository-poll seconds,
// tells the registry (TableRegistry::SetPointers: the pointer decides what
// serves, forward or back), and pulls each pointed version that is not
// complete in the data directory (PullVersion: this server's --shard of
// it, staged, verified, renamed in), one download at a time. The registry
// then loads it as any version.
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
    // Counters.
    uint64_t pulled = 0;
    uint64_t bytes = 0;
    std::map<std::string, uint64_t> failures_by_reason;
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
  // Pulls the pointed versions missing from the data directory whose
  // retry time has come; returns the earliest retry time still ahead.
  Clock::time_point PullMissing();
  void Pull(const std::string& table, uint64_t version);
  // Records what the registry serves: lag, and seconds to serving.
  void LookAtServing();
  // `base` times 2^(failures-1), at most 32 times, with jitter (0.75-1.25).
  Clock::duration Backoff(int failures);
  void CountPollFailure(const std::string& reason);
  bool LocallyComplete(const std::string& table, uint64_t version) const;

  const ServerOptions options_;
  TableRegistry* const registry_;
  // Declared before store_, which reads it (ObjectStoreOptions::stop).
  std::atomic<bool> stop_{false};
  std::unique_ptr<ObjectStore> store_;  // set by Create, then never again
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
