#include "tests/harness/problems.h"

#include <utility>

namespace roost::testing {

void Problems::Add(std::string problem) {
  std::lock_guard lock(mu_);
  if (++count_ <= 20) first_.push_back(std::move(problem));
}

int Problems::count() const {
  std::lock_guard lock(mu_);
  return count_;
}

std::string Problems::Describe() const {
  std::lock_guard lock(mu_);
  std::string out;
  for (const std::string& p : first_) out += p + "\n";
  return out;
}

}  // namespace roost::testing
