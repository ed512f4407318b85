#include "client/version_consensus.h"

#include <algorithm>

namespace roost {

std::optional<uint64_t> VersionNumber(std::string_view version) {
  if (!version.empty() && version[0] == 'v') version.remove_prefix(1);
  if (version.empty() || version.size() > 19) return std::nullopt;
  uint64_t n = 0;
  for (char c : version) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

bool SameVersion(std::string_view a, std::string_view b) {
  if (a == b) return true;
  const std::optional<uint64_t> x = VersionNumber(a);
  return x.has_value() && x == VersionNumber(b);
}

namespace {

// Orders versions by number; a version that is not a number (no roost
// server sends one) sorts before every number, by its text.
bool Older(const std::string& a, const std::string& b) {
  const std::optional<uint64_t> x = VersionNumber(a);
  const std::optional<uint64_t> y = VersionNumber(b);
  if (x.has_value() != y.has_value()) return !x.has_value();
  if (x.has_value() && *x != *y) return *x < *y;
  return !x.has_value() && a < b;
}

}  // namespace

void VersionConsensus::Answered(size_t part, std::string version) {
  if (!version.empty() &&
      std::none_of(seen_.begin(), seen_.end(), [&](const std::string& v) {
        return SameVersion(v, version);
      })) {
    seen_.push_back(version);
  }
  answers_[part] = std::move(version);
  lost_[part] = false;
}

std::string VersionConsensus::Extreme(bool newest) const {
  std::string best;
  for (size_t i = 0; i < answers_.size(); ++i) {
    const std::string& v = answers_[i];
    if (v.empty() || lost_[i]) continue;
    if (best.empty() || (newest ? Older(best, v) : Older(v, best))) best = v;
  }
  return best;
}

bool VersionConsensus::Agreed() const {
  if (std::find(lost_.begin(), lost_.end(), true) != lost_.end()) {
    return false;
  }
  const std::string oldest = Extreme(false);
  return std::all_of(answers_.begin(), answers_.end(), [&](const auto& v) {
    return v.empty() || SameVersion(v, oldest);
  });
}

std::string VersionConsensus::version() const { return Extreme(false); }

VersionConsensus::Round VersionConsensus::Next() const {
  Round round;
  round.pin = Extreme(forward_);
  for (size_t i = 0; i < answers_.size(); ++i) {
    if (lost_[i] ||
        (!answers_[i].empty() && !SameVersion(answers_[i], round.pin))) {
      round.parts.push_back(i);
    }
  }
  return round;
}

std::string VersionConsensus::Seen() const {
  std::vector<std::string> sorted = seen_;
  std::sort(sorted.begin(), sorted.end(), Older);
  std::string out;
  for (const std::string& v : sorted) {
    if (!out.empty()) out += ", ";
    out += v;
  }
  return out;
}

}  // namespace roost
