#include "storage/block/filter_block.h"

#include <cmath>

#include "storage/format.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// FilterProbes' table, by bits per key from 1: computed from
// FilterFalsePositiveRate for 1 to 30 probes, keeping the fewest within 1%
// of the best. Written into every filter, so it may change without
// changing what a reader does.
constexpr int kProbesForBits[kMaxFilterBitsPerKey] = {
    1,  1,  2,  3,  3,  4,  5,  5,  6,  6,  7,  7,  8,  8,  9,  9,
    10, 10, 11, 11, 11, 12, 12, 12, 13, 13, 13, 14, 14, 14, 14, 15};

}  // namespace

uint64_t FilterLines(uint64_t keys, uint32_t bits_per_key) {
  const unsigned __int128 bits =
      static_cast<unsigned __int128>(keys) * bits_per_key;
  const unsigned __int128 lines =
      (bits + kFilterLineSize * 8 - 1) / (kFilterLineSize * 8);
  return lines == 0 ? 1 : static_cast<uint64_t>(lines);
}

int FilterProbes(uint32_t bits_per_key) {
  if (bits_per_key == 0) return 1;
  if (bits_per_key > kMaxFilterBitsPerKey) bits_per_key = kMaxFilterBitsPerKey;
  return kProbesForBits[bits_per_key - 1];
}

double FilterFalsePositiveRate(uint64_t keys, uint64_t num_lines,
                               int num_probes) {
  if (num_lines == 0) return 1;
  constexpr double kBits = kFilterLineSize * 8;
  const double lambda = static_cast<double>(keys) / num_lines;
  // Poisson(j; lambda) from j = 0 up, in logs so that a large lambda does
  // not underflow exp(-lambda).
  double rate = 0;
  const double limit = lambda + 12 * std::sqrt(lambda) + 50;
  for (double j = 0; j <= limit; ++j) {
    const double log_p =
        -lambda + j * std::log(lambda > 0 ? lambda : 1) - std::lgamma(j + 1);
    if (lambda == 0 && j > 0) break;
    const double set = 1 - std::pow(1 - 1 / kBits, j * num_probes);
    rate += std::exp(log_p) * std::pow(set, num_probes);
  }
  return rate;
}

absl::StatusOr<FilterBlock> FilterBlock::Parse(std::string_view path,
                                               std::string_view contents) {
  if (contents.size() < kFilterLineSize + kFilterParamsSize ||
      (contents.size() - kFilterParamsSize) % kFilterLineSize != 0) {
    return CorruptionError(path, "bad filter block size");
  }
  const char* params = contents.data() + contents.size() - kFilterParamsSize;
  const auto kind = static_cast<uint8_t>(params[0]);
  if (kind != kFilterKindBlockedBloom) {
    return CorruptionError(path, StrCat("unknown filter kind ", kind));
  }
  const auto probes = static_cast<uint8_t>(params[1]);
  if (probes < 1 || probes > kMaxFilterProbes) {
    return CorruptionError(
        path, StrCat("bad filter probe count ", probes, " (expected 1 to ",
                     kMaxFilterProbes, ")"));
  }
  FilterBlock f;
  f.lines_ = contents.data();
  f.num_lines_ = (contents.size() - kFilterParamsSize) / kFilterLineSize;
  f.num_probes_ = probes;
  f.bits_per_key_ = static_cast<uint8_t>(params[2]);
  return f;
}

}  // namespace roost
