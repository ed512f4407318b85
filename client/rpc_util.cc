#include "client/rpc_util.h"

#include <grpc/grpc.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <thread>
#include <tuple>

#include "util/file.h"
#include "util/str_cat.h"

namespace roost {

GrpcLibraryScope::GrpcLibraryScope(double wait_seconds)
    : wait_seconds_(wait_seconds) {
  grpc_init();
}

GrpcLibraryScope::~GrpcLibraryScope() {
  // The last hold ends here, on a thread of no gRPC call, and gRPC then
  // shuts down on it before returning. When a gRPC thread still holds the
  // library (a channel ending there), that thread shuts it down: wait.
  grpc_shutdown();
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(wait_seconds_);
  while (grpc_is_initialized() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

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

bool UsesTls(const ChannelSecurity& s) {
  return s.tls || !s.ca.empty() || !s.cert.empty() || !s.server_name.empty();
}

std::string TlsHint(const grpc::Status& status, bool tls, bool layout) {
  // UNAVAILABLE, or DEADLINE_EXCEEDED from a client that kept retrying.
  if (status.ok()) return "";
  const std::string& message = status.error_message();
  const auto has = [&](std::string_view text) {
    return message.find(text) != std::string::npos;
  };
  // A TLS server reads a plaintext client's HTTP/2 preface as a bad
  // ClientHello and closes the connection: gRPC says no more than that.
  if (!tls && (has("Socket closed") || has("Connection reset by peer"))) {
    return layout ? " (is the server using TLS? give the layout file a "
                    "\"tls\")"
                  : " (is the server using TLS? try --tls)";
  }
  // A plaintext server answers a ClientHello with HTTP/2 bytes.
  if (tls && has("wrong version number")) {
    return layout ? " (is the server plaintext? the layout file has a "
                    "\"tls\")"
                  : " (is the server plaintext? leave out --tls and "
                    "--tls-*)";
  }
  return "";
}

int ReportRpcError(std::string_view program, const grpc::Status& status,
                   const ChannelSecurity& security) {
  return ReportRpcError(
      program, grpc::Status(status.error_code(),
                            StrCat(status.error_message(),
                                   TlsHint(status, UsesTls(security)))));
}

int ReportUsageError(std::string_view program, std::string_view message) {
  const std::string line = StrCat(program, ": ", message,
                                  "\nRun with --help for more information.\n");
  std::fputs(line.c_str(), stderr);
  return kExitUsage;
}

absl::StatusOr<std::string> ReadFlagFile(const std::string& path,
                                         std::string_view flag) {
  absl::StatusOr<std::string> text = ReadRegularFile(path, 16 << 20);
  if (!text.ok()) {
    return absl::Status(
        text.status().code(),
        StrCat("cannot read ", flag, " ", path, ": ", text.status().message()));
  }
  return text;
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(
    const std::string& addr, const ChannelSecurity& s,
    const std::string& lb_policy) {
  if (s.cert.empty() != s.key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  grpc::ChannelArguments args;
  // A MultiGet of many large values may well pass gRPC's default 4 MiB.
  args.SetMaxReceiveMessageSize(-1);
  // A failed connection's subchannel lives until its first retry, and
  // gRPC shuts down only then (GrpcLibraryScope waits for it as a tool
  // exits): 100 ms instead of gRPC's 1 s, growing from there as gRPC's.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  if (!lb_policy.empty()) args.SetLoadBalancingPolicyName(lb_policy);
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (UsesTls(s)) {
    grpc::SslCredentialsOptions ssl;
    for (auto [path, flag, out] :
         {std::tuple{&s.ca, "--tls-ca", &ssl.pem_root_certs},
          std::tuple{&s.cert, "--tls-cert", &ssl.pem_cert_chain},
          std::tuple{&s.key, "--tls-key", &ssl.pem_private_key}}) {
      if (path->empty()) continue;
      absl::StatusOr<std::string> text = ReadFlagFile(*path, flag);
      if (!text.ok()) return text.status();
      *out = std::move(*text);
    }
    if (!s.server_name.empty()) {
      args.SetSslTargetNameOverride(s.server_name);
    }
    credentials = grpc::SslCredentials(ssl);
  } else {
    credentials = grpc::InsecureChannelCredentials();
  }
  return grpc::CreateCustomChannel(addr, credentials, args);
}

void PrepareCall(grpc::ClientContext* context, double seconds,
                 const ChannelSecurity& security) {
  SetTimeout(context, seconds);
  if (!security.token.empty()) {
    context->AddMetadata("authorization", StrCat("Bearer ", security.token));
  }
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
