// A roost-server child process under test: started with the harness's
// flags on loopback ports read back from its log, waited on, signalled, and
// called through gRPC stubs of its own. Its process life is
// server_process.cc's, its calls server_calls.cc's.
//
// Example:
//   ServerProcess server({.data_dir = data}, scratch.File("server.log"));
//   ASSERT_TRUE(server.WaitReady());
//   v1::GetResponse response;
//   ASSERT_TRUE(server.Get("users", "k", &response).ok());
#ifndef ROOST_TESTS_HARNESS_SERVER_PROCESS_H_
#define ROOST_TESTS_HARNESS_SERVER_PROCESS_H_

#include <grpc/compression.h>
#include <grpcpp/security/credentials.h>
#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "grpc/health/v1/health.grpc.pb.h"
#include "roost/v1/admin.grpc.pb.h"
#include "roost/v1/lookup.grpc.pb.h"
#include "tests/harness/child_process.h"
#include "tests/harness/metrics_scrape.h"

namespace roost::testing {

// roost-server's flags, as the harness passes them.
struct ServerFlags {
  std::string data_dir;
  std::string listen = "127.0.0.1:0";
  // Empty turns the admin service off.
  std::string admin_listen = "127.0.0.1:0";
  // Off unless a test scrapes /metrics ("127.0.0.1:0").
  std::string metrics_listen;
  double poll_interval = 0.2;
  double drain_period = 0;
  // More flags, appended as given (they win over the ones above).
  std::vector<std::string> extra;
  // A command that runs the server (found on PATH), such as
  // {"prlimit", "--nofile=256:256", "--"}: it must exec the server, so that
  // its pid is the server's.
  std::vector<std::string> wrapper;
};

// A roost-server child process. Its stdout and stderr go to `log_path`.
// The destructor SIGKILLs it if it still runs, reaps it, and records a test
// failure if the log holds a sanitizer report.
class ServerProcess {
 public:
  ServerProcess(const ServerFlags& flags, std::string log_path);
  // Runs exactly `args` after the binary's path (for flag tests).
  ServerProcess(const std::vector<std::string>& args, std::string log_path);
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }
  // Everything logged so far.
  std::string Log() const;
  // Complete log lines so far that contain `text`.
  int CountLogLines(std::string_view text) const;

  // Waits for a complete log line containing `text`. Fails early if the
  // process exits first.
  ::testing::AssertionResult WaitForLog(
      std::string_view text, std::chrono::milliseconds timeout = kWaitTimeout);
  // Waits for the "listening on" lines of every service turned on, reads
  // the bound ports and connects the stubs.
  ::testing::AssertionResult WaitListening();
  // Drops the stubs and closes their channels (WaitListening() makes new
  // ones). An idle client connection holds a stopping roost-server for a
  // few seconds (up to --shutdown-timeout); tests that stop the server
  // without clients running disconnect first.
  void Disconnect();
  // WaitListening(), then waits for "roost-server: ready:".
  ::testing::AssertionResult WaitReady();
  // The credentials of the stubs WaitListening() makes from now on (and of
  // RawCall), for a server with TLS; nullptr is plaintext.
  void UseCredentials(std::shared_ptr<grpc::ChannelCredentials> credentials,
                      std::string server_name = "") {
    credentials_ = std::move(credentials);
    server_name_ = std::move(server_name);
  }

  void SendSignal(int signal);
  // SIGSTOP, then waits until the whole process has stopped. kill(2) only
  // starts a stop: one thread takes the signal and stops the others once
  // it is scheduled, and on a busy machine the others can go on answering
  // calls meanwhile, which made a "hung" replica answer.
  ::testing::AssertionResult Stop();
  // Whether the process still runs (reaps it when it has exited).
  bool Running();
  // Waits for the process to exit: its exit status (128 + N if killed by
  // signal N), or -1 if it still runs after `timeout`.
  int WaitExit(std::chrono::milliseconds timeout = kWaitTimeout);

  int lookup_port() const { return lookup_port_; }
  int admin_port() const { return admin_port_; }
  int metrics_port() const { return metrics_port_; }
  // The Redis front end's port (--redis-listen), from its log line; 0
  // until that line is logged.
  int redis_port() const { return PortFromLog("Redis front end"); }
  std::string lookup_address() const;
  std::string admin_address() const;

  // Stubs, valid after WaitListening(); safe to use from many threads.
  v1::Lookup::Stub& lookup() { return *lookup_stub_; }
  v1::Admin::Stub& admin() { return *admin_stub_; }
  grpc::health::v1::Health::Stub& health() { return *health_stub_; }

  // One call each, with a 10 s deadline.
  grpc::Status Get(const std::string& table, const std::string& key,
                   v1::GetResponse* response);
  grpc::Status MultiGet(const std::string& table,
                        const std::vector<std::string>& keys,
                        v1::MultiGetResponse* response);
  grpc::Status ListTables(v1::ListTablesResponse* response);
  grpc::Status Rollback(const std::string& table, const std::string& version,
                        v1::RollbackResponse* response);
  grpc::Status Unpin(const std::string& table, v1::UnpinResponse* response);
  grpc::Status HealthCheck(
      const std::string& service,
      grpc::health::v1::HealthCheckResponse::ServingStatus* status);

  // One call of `method` ("/roost.v1.Lookup/Get") with `request` as its
  // bytes, on the lookup port (the admin port with `admin`), optionally
  // compressed; *response gets the bytes of an OK answer.
  grpc::Status RawCall(
      const std::string& method, const std::string& request,
      std::string* response, bool admin = false,
      grpc_compression_algorithm compression = GRPC_COMPRESS_NONE);

  // `table`'s entry in ListTables, or nullopt (also when the call fails).
  std::optional<v1::TableInfo> Table(const std::string& table);
  // The version `table` serves ("" when none or unknown).
  std::string ServingVersion(const std::string& table);

  // Scrapes /metrics. Records a test failure and returns nothing when the
  // scrape fails.
  Metrics ScrapeMetrics();

 private:
  void Spawn(const std::vector<std::string>& args);
  // The port in the complete log line "roost-server: WHAT listening on
  // HOST:PORT", or 0.
  int PortFromLog(std::string_view what) const;
  std::string Describe() const;  // the log, for failure messages

  std::string log_path_;
  std::vector<std::string> wrapper_;
  bool admin_ = true;
  bool metrics_ = true;
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
  int lookup_port_ = 0;
  int admin_port_ = 0;
  int metrics_port_ = 0;
  std::shared_ptr<grpc::ChannelCredentials> credentials_;
  std::string server_name_;
  std::unique_ptr<v1::Lookup::Stub> lookup_stub_;
  std::unique_ptr<v1::Admin::Stub> admin_stub_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_stub_;
};

}  // namespace roost::testing

#endif  // ROOST_TESTS_HARNESS_SERVER_PROCESS_H_
