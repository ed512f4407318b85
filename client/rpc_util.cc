#include "client/rpc_util.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>

#include "storage/str_cat.h"

namespace roost {

std::string StatusCodeName(grpc::StatusCode code) {
  // In the order of the codes' values, 0 to 16.
  static constexpr std::array<const char*, 17> kNames = {
      "OK",
      "CANCELLED",
      "UNKNOWN",
      "INVALID_ARGUMENT",
      "DEADLINE_EXCEEDED",
      "NOT_FOUND",
      "ALREADY_EXISTS",
      "PERMISSION_DENIED",
      "RESOURCE_EXHAUSTED",
      "FAILED_PRECONDITION",
      "ABORTED",
      "OUT_OF_RANGE",
      "UNIMPLEMENTED",
      "INTERNAL",
      "UNAVAILABLE",
      "DATA_LOSS",
      "UNAUTHENTICATED",
  };
  const int value = static_cast<int>(code);
  if (value >= 0 && value < static_cast<int>(kNames.size())) {
    return kNames[value];
  }
  return StrCat("CODE_", value);
}

int ReportRpcError(std::string_view program, const grpc::Status& status) {
  std::fflush(stdout);
  const std::string line =
      StrCat(program, ": ", StatusCodeName(status.error_code()), ": ",
             status.error_message(), "\n");
  std::fputs(line.c_str(), stderr);
  return kExitRpcFailed;
}

int ReportUsageError(std::string_view program, std::string_view message) {
  const std::string line = StrCat(program, ": ", message,
                                  "\nRun with --help for more information.\n");
  std::fputs(line.c_str(), stderr);
  return kExitUsage;
}

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& addr) {
  grpc::ChannelArguments args;
  // A MultiGet of many large values may well pass gRPC's default 4 MiB.
  args.SetMaxReceiveMessageSize(-1);
  return grpc::CreateCustomChannel(addr, grpc::InsecureChannelCredentials(),
                                   args);
}

void SetTimeout(grpc::ClientContext* context, double seconds) {
  // Past about 292 years a system_clock time point overflows; a year is
  // as good as forever here.
  seconds = std::min(seconds, 365.0 * 24 * 3600);
  context->set_deadline(
      std::chrono::system_clock::now() +
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::duration<double>(seconds)));
}

}  // namespace roost
