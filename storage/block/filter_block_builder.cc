#include "storage/block/filter_block_builder.h"

namespace roost {

FilterBlockBuilder::FilterBlockBuilder(uint64_t num_lines,
                                       uint32_t bits_per_key)
    : num_lines_(num_lines),
      bits_per_key_(bits_per_key),
      num_probes_(FilterProbes(bits_per_key)),
      lines_(num_lines * kFilterLineSize, '\0') {}

char* FilterBlockBuilder::LineFor(uint64_t hash) {
  return lines_.data() +
         FilterBlock::LineOf(hash, num_lines_) * kFilterLineSize;
}

void FilterBlockBuilder::SetBits(uint64_t hash) {
  char* line = LineFor(hash);
  uint32_t h = static_cast<uint32_t>(hash);
  for (int i = 0; i < num_probes_; ++i) {
    const uint32_t bit = h >> 23;
    line[bit >> 3] = static_cast<char>(line[bit >> 3] | (1 << (bit & 7)));
    h *= FilterBlock::kProbeMultiplier;
  }
}

std::string FilterBlockBuilder::Finish() {
  for (uint64_t i = added_ > kPending ? added_ - kPending : 0; i < added_;
       ++i) {
    SetBits(pending_[i % kPending]);
  }
  added_ = 0;
  std::string out = std::move(lines_);
  out.push_back(static_cast<char>(kFilterKindBlockedBloom));
  out.push_back(static_cast<char>(num_probes_));
  out.push_back(static_cast<char>(bits_per_key_));
  out.append(kFilterParamsSize - 3, '\0');
  return out;
}

}  // namespace roost
