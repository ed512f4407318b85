// roost-server: serves published tables over gRPC. See server/README.md
// and docs/operations.md. The server itself is server/server.h; this is the
// process around it: flags, signals, malloc and the libraries' logs.
#include <google/protobuf/stubs/logging.h>
#include <grpc/support/log.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>

#include "repository/aws_credentials.h"
#include "server/file_lease.h"
#include "server/log.h"
#include "server/server.h"
#include "server/server_options.h"
#include "util/mutex_mode.h"

namespace roost {
namespace {

// Sleeps `seconds`, or less if one of `signals` comes.
void SleepUnlessSignalled(const sigset_t& signals, double seconds) {
  if (seconds <= 0) return;
  timespec ts;
  ts.tv_sec = static_cast<time_t>(seconds);
  ts.tv_nsec = static_cast<long>((seconds - std::floor(seconds)) * 1e9);
  while (sigtimedwait(&signals, nullptr, &ts) < 0 && errno == EINTR) {
  }
}

// libprotobuf's own error lines (a request that does not parse, say),
// through the server's log at a bounded rate.
void ProtobufLog(google::protobuf::LogLevel /*level*/, const char* /*file*/,
                 int /*line*/, const std::string& message) {
  static LogLimiter limiter;
  if (uint64_t dropped = 0; limiter.Allow(&dropped)) {
    Log("protobuf: ", message, LogLimiter::Suppressed(dropped));
  }
}

// gRPC's own error lines (a failed TLS handshake, say: any client can cause
// one), through the server's log at a bounded rate.
void GrpcLog(gpr_log_func_args* args) {
  static LogLimiter limiter;
  if (uint64_t dropped = 0; limiter.Allow(&dropped)) {
    Log("grpc: ", args->message, LogLimiter::Suppressed(dropped));
  }
}

int Main(int argc, char** argv) {
  TurnOffMutexDeadlockDetection();
  ServerOptions options;
  if (auto rc = ParseServerOptions(argc, argv, &options)) return *rc;
  // Which source of the AWS chain gave the repository's credentials, and
  // renewals that failed.
  SetAwsCredentialsLog([](const std::string& line) { Log(line); });

  // gRPC's, the exporter's and the registry's threads inherit this mask:
  // SIGTERM and SIGINT reach only the sigtimedwait below, and lease breaks
  // only the registry's signalfd.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigset_t blocked = signals;
  sigaddset(&blocked, LeaseSignal());
  sigaddset(&blocked, SIGIO);
  pthread_sigmask(SIG_BLOCK, &blocked, nullptr);
  // A client that hangs up mid-answer makes a write fail with EPIPE rather
  // than end the server: OpenSSL writes /metrics' TLS with write(2), which
  // raises SIGPIPE (civetweb, which served plaintext /metrics before,
  // ignored it for the whole process).
  ::signal(SIGPIPE, SIG_IGN);

  // Response buffers of 1 MiB and more are mapped and unmapped whole, so
  // that a burst of large responses gives its memory back (glibc would
  // otherwise raise this threshold after the first, and keep the memory).
  ::mallopt(M_MMAP_THRESHOLD, 1 << 20);
  google::protobuf::SetLogHandler(ProtobufLog);
  gpr_set_log_function(GrpcLog);

  auto server = Server::Create(options);
  if (!server.ok()) {
    Log(server.status().message());
    return 1;
  }
  if (absl::Status s = (*server)->Start(); !s.ok()) {
    Log(s.message());
    return 1;
  }

  int signal = 0;
  for (;;) {
    const timespec second = {1, 0};
    signal = sigtimedwait(&signals, nullptr, &second);
    if (signal == SIGINT || signal == SIGTERM) break;
    (*server)->Tick();
  }
  Log("draining (", signal == SIGTERM ? "SIGTERM" : "SIGINT", "): health ",
      "NOT_SERVING for ", options.drain_seconds, " s");
  (*server)->Drain();
  SleepUnlessSignalled(signals, options.drain_seconds);
  const bool loads_finished = (*server)->Shutdown();
  Log("stopped");
  if (!loads_finished) {
    // A load stuck in the filesystem still runs: leave without running
    // destructors it may depend on.
    std::fflush(stderr);
    ::_exit(0);
  }
  return 0;
}

}  // namespace
}  // namespace roost

int main(int argc, char** argv) { return roost::Main(argc, argv); }
