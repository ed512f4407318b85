#include "loader/unique_pairs.h"

#include <utility>

namespace roost {
namespace {

// A batch ends at whichever comes first (and holds at least one pair).
constexpr size_t kBatchPairs = 16384;
constexpr size_t kBatchBytes = 1 << 20;

}  // namespace

UniquePairReader::UniquePairReader(ExternalSorter* sorter,
                                   DuplicatePolicy policy,
                                   DuplicateErrorFn duplicate_error,
                                   bool read_ahead)
    : sorter_(sorter),
      policy_(policy),
      duplicate_error_(std::move(duplicate_error)),
      read_ahead_(read_ahead) {}

UniquePairReader::~UniquePairReader() {
  if (filling_.valid()) filling_.wait();
}

absl::StatusOr<const PairBatch*> UniquePairReader::Next() {
  PairBatch* batch = &batches_[next_];
  if (filling_.valid()) {
    filling_.get();
  } else {
    Fill(batch);
  }
  if (batch->empty() && !status_.ok()) return status_;
  next_ ^= 1;
  if (read_ahead_ && !ended_) {
    // The batch before this one is the caller's no more: fill it.
    filling_ = std::async(std::launch::async, &UniquePairReader::Fill, this,
                          &batches_[next_]);
  }
  return batch;
}

void UniquePairReader::Fill(PairBatch* batch) {
  batch->Clear();
  while (!ended_ && batch->size() < kBatchPairs &&
         batch->bytes_.size() < kBatchBytes) {
    std::string_view key, value;
    uint64_t sequence;
    absl::StatusOr<bool> more = sorter_->Next(&key, &value, &sequence);
    if (!more.ok()) {
      status_ = more.status();
      ended_ = true;
      return;
    }
    if (!*more) {
      if (holding_) batch->Append(held_key_, held_value_);
      holding_ = false;
      ended_ = true;
      return;
    }
    // Equal keys arrive together, in input order: keep one by the policy.
    if (holding_ && key == std::string_view(held_key_)) {
      if (policy_ == DuplicatePolicy::kError) {
        status_ = duplicate_error_(key, held_sequence_, sequence);
        ended_ = true;
        return;
      }
      ++duplicates_;
      if (policy_ == DuplicatePolicy::kKeepLast) {
        held_value_.assign(value);
        held_sequence_ = sequence;
      }
      continue;
    }
    if (holding_) batch->Append(held_key_, held_value_);
    held_key_.assign(key);
    held_value_.assign(value);
    held_sequence_ = sequence;
    holding_ = true;
  }
}

}  // namespace roost
