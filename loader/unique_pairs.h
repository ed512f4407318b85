// UniquePairReader: an ExternalSorter's sorted pairs with equal keys
// resolved by a DuplicatePolicy, handed out in batches. With read_ahead, a
// thread fills the next batch (the sorter's reads, which miss the cache on
// every pair, and the copies) while the caller builds from this one.
//
// Example:
//   UniquePairReader pairs(&sorter, DuplicatePolicy::kKeepLast,
//                          [&](std::string_view key, uint64_t first,
//                              uint64_t second) { return ...; },
//                          /*read_ahead=*/true);
//   while (true) {
//     ROOST_ASSIGN_OR_RETURN(const PairBatch* batch, pairs.Next());
//     if (batch->empty()) break;  // the end
//     for (size_t i = 0; i < batch->size(); ++i) Use(batch->key(i), ...);
//   }
//   uint64_t dropped = pairs.duplicates();
#ifndef ROOST_LOADER_UNIQUE_PAIRS_H_
#define ROOST_LOADER_UNIQUE_PAIRS_H_

#include <cstdint>
#include <functional>
#include <future>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "loader/sorter.h"
#include "storage/cuckoo/cuckoo_table_builder.h"

namespace roost {

// Pairs in key order, their bytes in one buffer.
class PairBatch {
 public:
  size_t size() const { return pairs_.size(); }
  bool empty() const { return pairs_.empty(); }
  std::string_view key(size_t i) const {
    return {bytes_.data() + pairs_[i].offset, pairs_[i].key_size};
  }
  std::string_view value(size_t i) const {
    return {bytes_.data() + pairs_[i].offset + pairs_[i].key_size,
            pairs_[i].value_size};
  }

 private:
  friend class UniquePairReader;
  struct Pair {
    uint64_t offset;
    uint32_t key_size;
    uint32_t value_size;
  };
  void Clear() {
    bytes_.clear();
    pairs_.clear();
  }
  void Append(std::string_view key, std::string_view value) {
    pairs_.push_back({bytes_.size(), static_cast<uint32_t>(key.size()),
                      static_cast<uint32_t>(value.size())});
    bytes_.append(key);
    bytes_.append(value);
  }
  std::string bytes_;
  std::vector<Pair> pairs_;
};

class UniquePairReader {
 public:
  // The error of two equal keys under DuplicatePolicy::kError, given the
  // key and the sequence numbers (ExternalSorter's) of the two.
  using DuplicateErrorFn = std::function<absl::Status(
      std::string_view key, uint64_t first, uint64_t second)>;

  // `sorter` is finished and outlives the reader.
  UniquePairReader(ExternalSorter* sorter, DuplicatePolicy policy,
                   DuplicateErrorFn duplicate_error, bool read_ahead);
  // Waits for the batch being filled ahead.
  ~UniquePairReader();
  UniquePairReader(const UniquePairReader&) = delete;
  UniquePairReader& operator=(const UniquePairReader&) = delete;

  // The next pairs (an empty batch at the end), valid until the next call.
  // A duplicate under kError, or the sorter's error, comes after the pairs
  // before it, and again on every later call.
  absl::StatusOr<const PairBatch*> Next();

  // Pairs dropped as duplicates (kKeepFirst, kKeepLast), once Next() has
  // returned the end.
  uint64_t duplicates() const { return duplicates_; }

 private:
  // Fills `batch` with the next pairs; an error ends the stream.
  void Fill(PairBatch* batch);

  ExternalSorter* const sorter_;
  const DuplicatePolicy policy_;
  const DuplicateErrorFn duplicate_error_;
  const bool read_ahead_;

  // Filling state, touched by one fill at a time.
  std::string held_key_, held_value_;  // the last pair, not yet in a batch
  uint64_t held_sequence_ = 0;
  bool holding_ = false;
  bool ended_ = false;  // the sorter is done, or failed
  absl::Status status_;
  uint64_t duplicates_ = 0;

  PairBatch batches_[2];
  int next_ = 0;               // the batch Next() returns next
  std::future<void> filling_;  // filling batches_[next_], with read_ahead
};

}  // namespace roost

#endif  // ROOST_LOADER_UNIQUE_PAIRS_H_
