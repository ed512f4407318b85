// End-to-end test harness for roost-server: tables built by the real
// roost-load, the real roost-server started as a child process on loopback,
// and real gRPC clients (Lookup, Admin, Health) talking to it. /metrics is
// fetched over a plain socket and its Prometheus text parsed.
//
// Nothing here is mocked: a test drives the same binaries an operator does.
// Waits are polls with generous timeouts (kWaitTimeout) that fail with the
// server's log attached, never assertions about speed.
//
// Example:
//   ScratchDir scratch;
//   const std::string data = scratch.File("data");
//   ASSERT_NE(BuildTable(data, "users", {{"k", "v"}}), "");
//   ServerProcess server({.data_dir = data}, scratch.File("server.log"));
//   ASSERT_TRUE(server.WaitReady());
//   v1::GetResponse response;
//   ASSERT_TRUE(server.Get("users", "k", &response).ok());
#ifndef ROOST_TESTS_SERVER_HARNESS_H_
#define ROOST_TESTS_SERVER_HARNESS_H_

#include <grpcpp/security/credentials.h>
#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "grpc/health/v1/health.grpc.pb.h"
#include "roost/v1/admin.grpc.pb.h"
#include "roost/v1/lookup.grpc.pb.h"
#include "tests/metrics_scrape.h"
#include "tests/status_matchers.h"
#include "tests/test_util.h"

namespace roost::testing {

// How long any wait in these tests may take before it fails. Generous: the
// suite also runs under AddressSanitizer on a busy two-core machine.
inline constexpr std::chrono::milliseconds kWaitTimeout{20000};

// The binaries under test: the ones built beside the tests, or those that
// ROOST_TEST_LOAD_BINARY, ROOST_TEST_SERVER_BINARY, ROOST_TEST_GET_BINARY
// and ROOST_TEST_ADMIN_BINARY name (to show that a test fails against an
// earlier build).
const char* RoostLoadBinary();
const char* RoostServerBinary();
const char* RoostGetBinary();
const char* RoostAdminBinary();

// A channel to `address` that takes answers of any size, on a connection
// of its own: plaintext, or with `credentials` (and, for TLS, the name the
// server's certificate must hold, when not the address's host).
std::shared_ptr<grpc::Channel> CreateTestChannel(
    const std::string& address,
    std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr,
    const std::string& server_name = "");

// The memory a process uses now and at its peak, from /proc/PID/status.
struct ProcessMemory {
  uint64_t rss = 0;
  uint64_t peak_rss = 0;
};
ProcessMemory MemoryOf(pid_t pid);

// Polls `condition` every 10 ms until it holds (true) or `timeout` passes
// (false).
bool WaitFor(const std::function<bool()>& condition,
             std::chrono::milliseconds timeout = kWaitTimeout);

// A finished child process.
struct ProcessResult {
  // The exit status; 128 + N when killed by signal N; -1 when it could not
  // be started.
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `argv` (argv[0] is a path) to completion, stdin from /dev/null,
// capturing stdout and stderr.
ProcessResult RunProcess(const std::vector<std::string>& argv);

// Keys and values of a table, as given to roost-load.
using KeyValues = std::map<std::string, std::string>;

// Writes `kvs` to `path` as TSV with hex-encoded keys and values, so that
// any bytes (tabs, newlines, zeros) survive; read it with
// `--key-encoding hex --value-encoding hex`.
void WriteHexTsv(const std::string& path, const KeyValues& kvs);

// Publishes `kvs` as the next version of DATA_DIR/`table` with
// `roost-load build --format FORMAT FLAGS...` (input: a hex TSV written
// beside `data_dir`). Returns the new version's directory
// (DATA_DIR/TABLE/v00000N), or "" after recording a test failure with the
// loader's output.
std::string BuildTable(const std::string& data_dir, const std::string& table,
                       const KeyValues& kvs,
                       const std::string& format = "cuckoo",
                       const std::vector<std::string>& flags = {});

// The version directories (v000001...) under a table directory, sorted.
std::vector<std::string> VersionDirs(const std::string& table_dir);

// roost-server's flags, as the harness passes them.
struct ServerFlags {
  std::string data_dir;
  std::string listen = "127.0.0.1:0";
  // Empty turns the admin service off.
  std::string admin_listen = "127.0.0.1:0";
  // Off unless a test scrapes /metrics ("127.0.0.1:0"): prometheus-cpp's
  // exposer takes about 2 s to stop.
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
  // Whether the process still runs (reaps it when it has exited).
  bool Running();
  // Waits for the process to exit: its exit status (128 + N if killed by
  // signal N), or -1 if it still runs after `timeout`.
  int WaitExit(std::chrono::milliseconds timeout = kWaitTimeout);

  int lookup_port() const { return lookup_port_; }
  int admin_port() const { return admin_port_; }
  int metrics_port() const { return metrics_port_; }
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

// A test with its own scratch directory and data directory (made by the
// first BuildTable, or by the test).
class ServerFixture : public ::testing::Test {
 protected:
  // The harness's defaults, serving data_.
  ServerFlags Flags() const {
    ServerFlags flags;
    flags.data_dir = data_;
    return flags;
  }
  // A log file in the scratch directory.
  std::string LogFile(const std::string& name = "server") const {
    return scratch_.File(name + ".log");
  }
  std::string TableDir(const std::string& table = "t") const {
    return data_ + "/" + table;
  }

  ScratchDir scratch_;
  const std::string data_ = scratch_.File("data");
};

// ASSERT_OK / EXPECT_OK of a call (tests/status_matchers.h): its code and
// message when it failed.
::testing::AssertionResult IsOk(const grpc::Status& status);

// `status` has `code` and exactly `message`.
::testing::AssertionResult IsError(const grpc::Status& status,
                                   grpc::StatusCode code,
                                   const std::string& message);

// Tables whose every value names its version: "VERSION:KEY".
//
// Example:
//   BuildTable(data, "t", Versioned(2, Keys(100)));
//   EXPECT_TRUE(ServesVersion(server, Keys(100), 2));
std::vector<std::string> Keys(int n);  // distinct, of different lengths
KeyValues Versioned(int version, const std::vector<std::string>& keys);
// The version a value "VERSION:KEY" names, or -1 when it is not `key`'s.
int VersionOf(const std::string& value, const std::string& key);
// Every key of `keys` answers version `version` in one MultiGet, and the
// first one in a Get.
::testing::AssertionResult ServesVersion(ServerProcess& server,
                                         const std::vector<std::string>& keys,
                                         int version,
                                         const std::string& table = "t");

using Names = std::vector<std::string>;
inline Names Strings(
    const google::protobuf::RepeatedPtrField<std::string>& field) {
  return Names(field.begin(), field.end());
}

// What client threads saw go wrong: a count and the first 20 descriptions.
// Thread-safe.
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

#endif  // ROOST_TESTS_SERVER_HARNESS_H_
