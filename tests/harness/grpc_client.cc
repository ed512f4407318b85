#include "tests/harness/grpc_client.h"

#include <grpcpp/grpcpp.h>

namespace roost::testing {

std::shared_ptr<grpc::Channel> CreateTestChannel(
    const std::string& address,
    std::shared_ptr<grpc::ChannelCredentials> credentials,
    const std::string& server_name) {
  grpc::ChannelArguments args;
  if (!server_name.empty()) args.SetSslTargetNameOverride(server_name);
  // The server bounds what it sends (--max-message-size); the tests take
  // whatever it sends.
  args.SetMaxReceiveMessageSize(-1);
  // A connection of its own, not one shared with other channels.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(
      address,
      credentials != nullptr ? credentials : grpc::InsecureChannelCredentials(),
      args);
}

::testing::AssertionResult IsOk(const grpc::Status& status) {
  if (status.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "not OK: " << status.error_code() << ": " << status.error_message();
}

::testing::AssertionResult IsError(const grpc::Status& status,
                                   grpc::StatusCode code,
                                   const std::string& message) {
  if (status.error_code() == code && status.error_message() == message) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "got code " << status.error_code() << " \""
         << status.error_message() << "\", want code " << code << " \""
         << message << "\"";
}

}  // namespace roost::testing
