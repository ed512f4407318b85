// What roost-get and roost-admin share around a gRPC call: exit codes,
// channels, deadlines, and the report of a failed call.
//
// Example:
//   ChannelSecurity security;  // AddSecurityOptions (security_flags.h)
//   auto channel = MakeChannel(addr, security);
//   if (!channel.ok()) return ReportUsageError(...);
//   auto stub = v1::Lookup::NewStub(*channel);
//   grpc::ClientContext context;
//   PrepareCall(&context, timeout_seconds, security);
//   grpc::Status status = stub->Get(&context, request, &response);
//   if (!status.ok()) return ReportRpcError("roost-get", status);
#ifndef ROOST_CLIENT_RPC_UTIL_H_
#define ROOST_CLIENT_RPC_UTIL_H_

#include <grpcpp/grpcpp.h>
#include <sysexits.h>

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace roost {

// Exit codes of the clients, after sysexits.h where one fits.
constexpr int kExitOk = 0;
constexpr int kExitNotFound = 1;      // roost-get: some key is not in the table
constexpr int kExitRpcFailed = 2;     // a call failed, or its answer was bad
constexpr int kExitUsage = EX_USAGE;  // bad flags or arguments

// The default addresses of roost-server's two services.
inline constexpr char kDefaultLookupAddr[] = "127.0.0.1:50051";
inline constexpr char kDefaultAdminAddr[] = "127.0.0.1:50052";
// The default deadline of every call, in seconds.
constexpr double kDefaultTimeoutSeconds = 10;

// Holds the gRPC library for main's whole run. Destroyed (declare it
// first in main, so it goes after every channel) it drops that hold and
// waits, up to `wait_seconds`, until gRPC has shut down and joined its
// threads. A gRPC thread still alive as the process exits keeps OpenSSL 3's
// per-thread error state, which LeakSanitizer then reports as leaked
// (grpc/grpc#38539): this happened when the last channel's end was left to
// a gRPC thread.
class GrpcLibraryScope {
 public:
  explicit GrpcLibraryScope(double wait_seconds = 2);
  ~GrpcLibraryScope();
  GrpcLibraryScope(const GrpcLibraryScope&) = delete;
  GrpcLibraryScope& operator=(const GrpcLibraryScope&) = delete;

 private:
  const double wait_seconds_;
};

// The canonical name of `code`, as gRPC documents it: "NOT_FOUND",
// "UNAVAILABLE". A code outside the known range gives "CODE_<n>".
std::string StatusCodeName(grpc::StatusCode code);

// Prints "PROGRAM: CODE: MESSAGE" to stderr (stdout is flushed first, to
// keep the order on a terminal) and returns kExitRpcFailed.
int ReportRpcError(std::string_view program, const grpc::Status& status);

// Prints "PROGRAM: MESSAGE" and a pointer to --help to stderr and returns
// kExitUsage.
int ReportUsageError(std::string_view program, std::string_view message);

// How a client proves who it talks to and who it is: TLS (with the
// server's CA, and a client certificate for mutual TLS) and a bearer token.
struct ChannelSecurity {
  bool tls = false;         // TLS with the system's CAs unless `ca`
  std::string ca;           // PEM file of the CA(s) the server's cert is from
  std::string cert;         // PEM client certificate (mutual TLS)
  std::string key;          // its PEM private key
  std::string server_name;  // the name the server's cert must hold
  std::string token;        // sent as "authorization: Bearer TOKEN"
};

// Whether a channel made with `security` speaks TLS (MakeChannel).
bool UsesTls(const ChannelSecurity& security);

// What to add to the error of a call that failed as calls in the wrong
// security do, or "". Plaintext to a TLS port (the connection closed in
// the handshake, "Socket closed") gives "(is the server using TLS? try
// --tls)"; TLS to a plaintext port (the handshake's "wrong version
// number") "(is the server plaintext? ...)", each after a space. `tls`
// says whether the call spoke TLS, and `layout` that its security came from
// a cluster layout file's "tls" rather than from the --tls flags.
std::string TlsHint(const grpc::Status& status, bool tls, bool layout = false);

// ReportRpcError, the message followed by TlsHint's hint.
int ReportRpcError(std::string_view program, const grpc::Status& status,
                   const ChannelSecurity& security);

// The text of the small file at `path` (at most 16 MiB), named by the
// command-line flag `flag`: an error names both ("cannot read --tls-ca
// PATH: ...").
absl::StatusOr<std::string> ReadFlagFile(const std::string& path,
                                         std::string_view flag);

// A channel to `addr` (HOST:PORT, or any gRPC target such as unix:PATH),
// taking answers of any size: plaintext, or TLS as `security` says, and
// balancing over the addresses the target resolves to with `lb_policy`
// ("round_robin"; empty: gRPC's default, pick_first). An error names a file
// that cannot be read.
absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(
    const std::string& addr, const ChannelSecurity& security,
    const std::string& lb_policy = "");

// Sets the deadline of the call made with `context` to `seconds` from now.
void SetTimeout(grpc::ClientContext* context, double seconds);

// The deadline, and the bearer token of `security` if it has one.
void PrepareCall(grpc::ClientContext* context, double seconds,
                 const ChannelSecurity& security);

}  // namespace roost

#endif  // ROOST_CLIENT_RPC_UTIL_H_
