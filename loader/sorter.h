// ExternalSorter: sorts key/value pairs by key, then by the order they were
// added, in bounded memory. Pairs are kept in memory up to a limit; past it
// each batch is sorted and spilled as a run file to a temporary directory,
// and Finish() merges the runs.
//
// Example:
//   ExternalSorter sorter({.memory_limit = 64 << 20, .temp_dir = "/tmp"});
//   for (...) ROOST_RETURN_IF_ERROR(sorter.Add(key, value));
//   ROOST_RETURN_IF_ERROR(sorter.Finish());
//   std::string_view key, value;
//   uint64_t sequence;
//   while (true) {
//     ROOST_ASSIGN_OR_RETURN(bool more, sorter.Next(&key, &value, &sequence));
//     if (!more) break;
//     ...  // keys ascend bytewise; equal keys come in the order added
//   }
//
// Memory: the pairs held plus a fixed overhead per pair stay under
// memory_limit while adding; merging holds one read buffer per run.
#ifndef ROOST_LOADER_SORTER_H_
#define ROOST_LOADER_SORTER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace roost {

struct SorterOptions {
  // Bytes of pairs (plus bookkeeping) held in memory before spilling a run.
  // The default value is 1 GiB.
  uint64_t memory_limit = uint64_t{1} << 30;
  // Where run files go (a fresh subdirectory is made and removed). The
  // default value is "" (the system temporary directory).
  std::string temp_dir;
  // Threads that sort a batch in memory: it is cut into ranges of keys,
  // each sorted by one. The order is the same for any count. The default
  // value is 1.
  int threads = 1;
};

class ExternalSorter {
 public:
  explicit ExternalSorter(SorterOptions options);
  // Removes the run files.
  ~ExternalSorter();
  ExternalSorter(const ExternalSorter&) = delete;
  ExternalSorter& operator=(const ExternalSorter&) = delete;

  // Adds a pair; its sequence number is the number of pairs added before it.
  absl::Status Add(std::string_view key, std::string_view value);
  // Ends input. Next() then yields every pair in (key, sequence) order.
  absl::Status Finish();
  // The next pair: true with views valid until the next call, false at the
  // end. I/O errors name the run file.
  absl::StatusOr<bool> Next(std::string_view* key, std::string_view* value,
                            uint64_t* sequence);

  uint64_t num_added() const;
  // Runs written to disk (0 when everything fit in memory).
  uint64_t runs_spilled() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace roost

#endif  // ROOST_LOADER_SORTER_H_
