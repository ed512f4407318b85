// The gRPC client side of the end-to-end tests: channels of their own to
// the server under test, and assertions on the status of a call.
#ifndef ROOST_TESTS_HARNESS_GRPC_CLIENT_H_
#define ROOST_TESTS_HARNESS_GRPC_CLIENT_H_

#include <grpcpp/channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/status.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace roost::testing {

// A channel to `address` that takes answers of any size, on a connection
// of its own: plaintext, or with `credentials` (and, for TLS, the name the
// server's certificate must hold, when not the address's host).
std::shared_ptr<grpc::Channel> CreateTestChannel(
    const std::string& address,
    std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr,
    const std::string& server_name = "");

// ASSERT_OK / EXPECT_OK of a call (tests/harness/status_matchers.h): its code
// and message when it failed.
::testing::AssertionResult IsOk(const grpc::Status& status);

// `status` has `code` and exactly `message`.
::testing::AssertionResult IsError(const grpc::Status& status,
                                   grpc::StatusCode code,
                                   const std::string& message);

}  // namespace roost::testing

#endif  // ROOST_TESTS_HARNESS_GRPC_CLIENT_H_
