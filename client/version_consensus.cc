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

void VersionConsensus::Answered(size_t part, std::string version,
                                uint32_t shard,
                                std::string_view withdrawn_through) {
  if (monotonic_ != nullptr) {
    monotonic_->Answered(table_, shard, version, withdrawn_through);
  }
  Answered(part, std::move(version));
}

std::string VersionConsensus::Common() const {
  std::string common;
  for (size_t i = 0; i < answers_.size(); ++i) {
    const std::string& v = answers_[i];
    if (v.empty()) continue;
    if (common.empty()) {
      common = v;
    } else if (!SameVersion(v, common)) {
      return std::string();
    }
  }
  return common;
}

uint64_t VersionConsensus::MonotonicPin() const {
  const uint64_t target = monotonic_->Target(table_);
  if (!forward_) return target;
  // Forward: the newest readable version a part answered, never older
  // than the target.
  uint64_t pin = target;
  for (const std::string& v : answers_) {
    const std::optional<uint64_t> n = VersionNumber(v);
    if (n.has_value() && *n > pin && monotonic_->Readable(table_, *n)) {
      pin = *n;
    }
  }
  return pin;
}

void VersionConsensus::Settle() const {
  if (monotonic_ == nullptr) return;
  if (const std::optional<uint64_t> n = VersionNumber(version())) {
    monotonic_->Settled(table_, *n);
  }
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
  if (monotonic_ != nullptr) {
    const bool any =
        std::any_of(answers_.begin(), answers_.end(),
                    [](const std::string& v) { return !v.empty(); });
    const std::string common = Common();
    if (!any) return true;  // servers too old to say: taken as they are
    if (common.empty()) return false;
    const std::optional<uint64_t> n = VersionNumber(common);
    if (!n.has_value()) return true;  // not a roost version: nothing to order
    const uint64_t target = monotonic_->Target(table_);
    return monotonic_->Readable(table_, *n) &&
           (forward_ ? *n >= target : *n == target);
  }
  const std::string oldest = Extreme(false);
  return std::all_of(answers_.begin(), answers_.end(), [&](const auto& v) {
    return v.empty() || SameVersion(v, oldest);
  });
}

std::string VersionConsensus::version() const {
  return monotonic_ != nullptr ? Common() : Extreme(false);
}

VersionConsensus::Round VersionConsensus::Next() const {
  Round round;
  if (monotonic_ != nullptr) {
    const uint64_t pin = MonotonicPin();
    round.pin = pin != 0 ? std::to_string(pin) : Extreme(forward_);
  } else {
    round.pin = Extreme(forward_);
  }
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
