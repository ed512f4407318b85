// Assertions on statuses that say what the status was when they fail:
// ASSERT_OK / EXPECT_OK for absl::Status, absl::StatusOr and grpc::Status
// (the last where tests/harness/server_harness.h is included), and the gMock
// matcher StatusIs for a code and, optionally, words of the message.
//
// Example:
//   ASSERT_OK(builder.Add("k", "v"));
//   ASSERT_OK(table);  // an absl::StatusOr<...>: its status on failure
//   EXPECT_THAT(table->Get("k", &v).status(),
//               StatusIs(absl::StatusCode::kDataLoss, HasSubstr("block 3")));
#ifndef ROOST_TESTS_HARNESS_STATUS_MATCHERS_H_
#define ROOST_TESTS_HARNESS_STATUS_MATCHERS_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace roost::testing {

inline const absl::Status& StatusOf(const absl::Status& status) {
  return status;
}
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

template <typename S>
::testing::AssertionResult IsOk(const S& s) {
  const absl::Status& status = StatusOf(s);
  if (status.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "not OK: " << status;
}

MATCHER_P2(StatusIsMatcher, code, message_matcher, "") {
  const absl::Status& status = StatusOf(arg);
  *result_listener << "which is " << status;
  return status.code() == code &&
         ::testing::ExplainMatchResult(
             message_matcher, std::string(status.message()), result_listener);
}

// Matches an absl::Status or absl::StatusOr whose code is `code` and whose
// message matches `message` (a matcher or a whole string).
template <typename MessageMatcher>
auto StatusIs(absl::StatusCode code, MessageMatcher message) {
  return StatusIsMatcher(code, ::testing::MatcherCast<std::string>(message));
}
inline auto StatusIs(absl::StatusCode code) {
  return StatusIs(code, ::testing::A<std::string>());
}

}  // namespace roost::testing

#define ASSERT_OK(expr) ASSERT_TRUE(::roost::testing::IsOk(expr))
#define EXPECT_OK(expr) EXPECT_TRUE(::roost::testing::IsOk(expr))

#endif  // ROOST_TESTS_HARNESS_STATUS_MATCHERS_H_
