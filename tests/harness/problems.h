// What client threads saw go wrong, for tests that hammer a server from
// many threads and report at the end.
//
// Example:
//   Problems problems;
//   ... on each thread: if (!s.ok()) problems.Add(s.error_message());
//   EXPECT_EQ(problems.count(), 0) << problems.Describe();
#ifndef ROOST_TESTS_HARNESS_PROBLEMS_H_
#define ROOST_TESTS_HARNESS_PROBLEMS_H_

#include <mutex>
#include <string>
#include <vector>

namespace roost::testing {

// A count and the first 20 descriptions. Thread-safe.
class Problems {
 public:
  void Add(std::string problem);
  int count() const;
  std::string Describe() const;

 private:
  mutable std::mutex mu_;
  int count_ = 0;
  std::vector<std::string> first_;
};

}  // namespace roost::testing

#endif  // ROOST_TESTS_HARNESS_PROBLEMS_H_
