// roost-server end to end: its life as a process. Flags, config files and
// busy ports, health before it is ready, and SIGTERM: the drain and the
// shutdown. See tests/harness/server_harness.h.

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <random>
#include <thread>

#include "tests/harness/server_harness.h"
#include "tests/harness/test_util.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

namespace fs = std::filesystem;
using grpc::StatusCode;
using HealthStatus = grpc::health::v1::HealthCheckResponse;

class LifecycleTest : public ServerFixture {};

TEST_F(LifecycleTest, RefusesBadFlagsAndBusyPorts) {
  // No --data-dir: a usage error.
  {
    ServerProcess server(std::vector<std::string>{"--listen", "127.0.0.1:0"},
                         LogFile("no-data-dir"));
    EXPECT_EQ(server.WaitExit(), 64);
    EXPECT_NE(server.Log().find("--data-dir is required"), std::string::npos)
        << server.Log();
  }
  // A --data-dir that is not there.
  {
    ServerFlags flags = Flags();
    flags.data_dir = scratch_.File("nonexistent");
    ServerProcess server(flags, LogFile("missing-dir"));
    EXPECT_EQ(server.WaitExit(), 1);
    EXPECT_NE(server.Log().find("data directory " + flags.data_dir +
                                " does not exist or is not a directory"),
              std::string::npos)
        << server.Log();
  }
  fs::create_directories(data_);
  {
    ServerFlags flags = Flags();
    flags.extra = {"--load-mode", "bogus"};
    ServerProcess server(flags, LogFile("load-mode"));
    EXPECT_EQ(server.WaitExit(), 64);
    EXPECT_NE(server.Log().find("roost-server: --load-mode"), std::string::npos)
        << server.Log();
  }
  {
    ServerFlags flags = Flags();
    flags.extra = {"--max-message-size", "2147483648"};
    ServerProcess server(flags, LogFile("message-size"));
    EXPECT_EQ(server.WaitExit(), 64);
    EXPECT_NE(server.Log().find("--max-message-size"), std::string::npos)
        << server.Log();
  }
  // Busy ports: a second server on the first one's lookup port, then on its
  // admin port.
  ServerProcess first(Flags(), LogFile("first"));
  ASSERT_TRUE(first.WaitReady());
  {
    ServerFlags flags = Flags();
    flags.listen = first.lookup_address();
    ServerProcess second(flags, LogFile("second"));
    EXPECT_EQ(second.WaitExit(), 1);
    EXPECT_EQ(
        second.CountLogLines("roost-server: cannot listen on " +
                             first.lookup_address() + " (lookup service)"),
        1)
        << second.Log();
  }
  {
    ServerFlags flags = Flags();
    flags.admin_listen = first.admin_address();
    ServerProcess second(flags, LogFile("second-admin"));
    EXPECT_EQ(second.WaitExit(), 1);
    EXPECT_EQ(second.CountLogLines("roost-server: cannot listen on " +
                                   first.admin_address() + " (admin service)"),
              1)
        << second.Log();
  }
  // The metrics port, held by a plain listening socket.
  {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
    ASSERT_EQ(::listen(fd, 1), 0);
    ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    const std::string busy = StrCat("127.0.0.1:", ntohs(addr.sin_port));
    ServerFlags flags = Flags();
    flags.metrics_listen = busy;
    ServerProcess second(flags, LogFile("second-metrics"));
    EXPECT_EQ(second.WaitExit(), 1);
    EXPECT_EQ(second.CountLogLines("roost-server: cannot listen on " + busy +
                                   " (metrics)"),
              1)
        << second.Log();
    ::close(fd);
  }
  // The first server was never disturbed.
  v1::ListTablesResponse list;
  EXPECT_OK(first.ListTables(&list));

  const ProcessResult help = RunProcess({RoostServerBinary(), "--help"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* flag :
       {"--config", "--data-dir", "--listen", "--admin-listen",
        "--metrics-listen", "--load-mode", "--mmap-random",
        "--verify-checksums", "--poll-interval", "--inotify", "--keep-versions",
        "--max-batch", "--max-key-size", "--max-message-size", "--drain-period",
        "--shutdown-timeout", "--resident-refresh", "--reflection"}) {
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag << help.out;
  }
}

// The first scan is held up on purpose: the MANIFEST of the only version is
// a FIFO, so the server's read of it blocks until the test writes the real
// MANIFEST into it. Until then the server listens but is not ready.
// Holds back the first version of a table: builds `kvs` as
// DATA_DIR/TABLE/v000001 and keeps its table file open for writing, as a
// copy still in progress would, so that the server cannot take its lease and
// does not load it until Release() closes the file.
class HeldScan {
 public:
  HeldScan(const ScratchDir& /*scratch*/, const std::string& data_dir,
           const std::string& table, const KeyValues& kvs) {
    const std::string built = BuildTable(data_dir, table, kvs);
    if (built.empty()) return;
    const std::string file = built + "/table.sst";
    ::chmod(file.c_str(), 0644);  // published read-only
    fd_ = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
  }
  ~HeldScan() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return fd_ >= 0; }

  ::testing::AssertionResult Release() {
    if (fd_ < 0) return ::testing::AssertionFailure() << "not held";
    ::close(fd_);
    fd_ = -1;
    return ::testing::AssertionSuccess();
  }

 private:
  int fd_ = -1;
};

TEST_F(LifecycleTest, HealthIsNotServingUntilTheTablesFoundAtStartLoad) {
  HeldScan held(scratch_, data_, "t", {{"k", "v"}});
  ASSERT_TRUE(held.ok());
  ServerProcess server(Flags(), LogFile());
  ASSERT_TRUE(server.WaitListening());
  ASSERT_TRUE(server.WaitForLog("not loading t v000001 yet: "));

  HealthStatus::ServingStatus status;
  ASSERT_OK(server.HealthCheck("roost.v1.Lookup", &status));
  EXPECT_EQ(status, HealthStatus::NOT_SERVING);
  ASSERT_OK(server.HealthCheck("", &status));
  EXPECT_EQ(status, HealthStatus::NOT_SERVING);
  // The table is known as soon as the scan reaches it, but has no version
  // to serve yet; so says its own health service name.
  ASSERT_OK(server.HealthCheck("roost.v1.Lookup/t", &status));
  EXPECT_EQ(status, HealthStatus::NOT_SERVING);
  v1::GetResponse g;
  grpc::Status s;
  ASSERT_TRUE(WaitFor([&] {
    s = server.Get("t", "k", &g);
    return s.error_code() != StatusCode::NOT_FOUND;
  })) << s.error_message();
  EXPECT_TRUE(IsError(s, StatusCode::UNAVAILABLE,
                      "table \"t\" has no servable version"));
  EXPECT_EQ(server.CountLogLines("roost-server: ready:"), 0);
  EXPECT_EQ(server.ServingVersion("t"), "");

  ASSERT_TRUE(held.Release());
  ASSERT_TRUE(server.WaitReady());
  ASSERT_OK(server.HealthCheck("roost.v1.Lookup", &status));
  EXPECT_EQ(status, HealthStatus::SERVING);
  ASSERT_OK(server.HealthCheck("", &status));
  EXPECT_EQ(status, HealthStatus::SERVING);
  ASSERT_OK(server.HealthCheck("roost.v1.Lookup/t", &status));
  EXPECT_EQ(status, HealthStatus::SERVING);
  EXPECT_EQ(server.HealthCheck("no.such.Service", &status).error_code(),
            StatusCode::NOT_FOUND);
  EXPECT_EQ(server.HealthCheck("roost.v1.Lookup/nope", &status).error_code(),
            StatusCode::NOT_FOUND);
  ASSERT_OK(server.Get("t", "k", &g));
  EXPECT_EQ(g.value(), "v");
  // One table, not "1 tables" (issue 30, item 24).
  EXPECT_TRUE(server.WaitForLog("roost-server: ready: "));
  EXPECT_EQ(server.CountLogLines("roost-server: ready: 1 table"), 1);
  EXPECT_EQ(server.CountLogLines("roost-server: ready: 1 tables"), 0)
      << server.Log();
}

TEST_F(LifecycleTest, SignalBeforeReadyNeverTurnsServing) {
  HeldScan held(scratch_, data_, "t", {{"k", "v"}});
  ASSERT_TRUE(held.ok());
  ServerFlags flags = Flags();
  flags.drain_period = 0.5;
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitListening());
  server.SendSignal(SIGINT);
  ASSERT_TRUE(server.WaitForLog("roost-server: draining (SIGINT)"));
  // The scan ends during (or after) the drain; it must not turn health
  // SERVING nor log "ready".
  ASSERT_TRUE(held.Release());
  EXPECT_EQ(server.WaitExit(), 0);
  EXPECT_EQ(server.CountLogLines("roost-server: ready:"), 0) << server.Log();
  EXPECT_EQ(server.CountLogLines("roost-server: stopped"), 1) << server.Log();
}

TEST_F(LifecycleTest, NotReadyUntilEveryTableFoundAtStartServes) {
  const std::vector<std::string> keys = Keys(100);
  ASSERT_NE(BuildTable(data_, "ok", Versioned(1, keys)), "");
  const std::string bad = BuildTable(data_, "t", Versioned(1, keys));
  ASSERT_NE(bad, "");
  std::string bytes = ReadFile(bad + "/table.sst");
  bytes[bytes.size() / 2] ^= 0x20;
  WriteFile(bad + "/table.sst", bytes);
  ServerProcess server(Flags(), LogFile());
  ASSERT_TRUE(server.WaitListening());
  ASSERT_TRUE(server.WaitForLog(
      "roost-server: not ready: waiting for a version of t that loads "
      "(health stays NOT_SERVING)"));
  HealthStatus::ServingStatus status;
  ASSERT_OK(server.HealthCheck("roost.v1.Lookup", &status));
  EXPECT_EQ(status, HealthStatus::NOT_SERVING);
  ASSERT_OK(server.HealthCheck("", &status));
  EXPECT_EQ(status, HealthStatus::NOT_SERVING);
  // The good table serves meanwhile; the bad one has nothing to serve.
  EXPECT_TRUE(ServesVersion(server, keys, 1, "ok"));
  v1::GetResponse g;
  EXPECT_TRUE(IsError(server.Get("t", keys[0], &g), StatusCode::UNAVAILABLE,
                      "table \"t\" has no servable version"));
  EXPECT_EQ(server.CountLogLines("roost-server: ready:"), 0);

  ASSERT_NE(BuildTable(data_, "t", Versioned(2, keys)), "");
  ASSERT_TRUE(server.WaitForLog("roost-server: ready: 2 tables"));
  ASSERT_OK(server.HealthCheck("roost.v1.Lookup", &status));
  EXPECT_EQ(status, HealthStatus::SERVING);
  EXPECT_TRUE(ServesVersion(server, keys, 2));
  EXPECT_EQ(server.CountLogLines("not ready:"), 1);
}

// docs/operations/reference.md: "empty (`--admin-listen=`) turns it off".
TEST_F(LifecycleTest, EmptyAddressAfterEqualsTurnsAServiceOff) {
  fs::create_directories(data_);
  ServerProcess server(
      std::vector<std::string>{"--data-dir", data_, "--listen", "127.0.0.1:0",
                               "--admin-listen=", "--metrics-listen="},
      LogFile());
  ASSERT_TRUE(server.WaitReady());
  EXPECT_EQ(server.CountLogLines("admin service listening"), 0);
  EXPECT_EQ(server.CountLogLines("metrics listening"), 0);
}

TEST_F(LifecycleTest, ConfigFileSetsFlagsAndTheCommandLineWins) {
  ASSERT_NE(BuildTable(data_, "t", Versioned(1, Keys(10))), "");
  const std::string config = scratch_.File("server.toml");
  WriteFile(config, "data-dir = \"" + data_ +
                        "\"\nlisten = \"127.0.0.1:0\"\n"
                        "admin-listen = \"\"\nmetrics-listen = \"\"\n"
                        "max-batch = 3\n");
  const std::vector<std::string> four(4, "k");
  v1::MultiGetResponse m;
  {
    ServerProcess server(std::vector<std::string>{"--config", config},
                         LogFile("config"));
    ASSERT_TRUE(server.WaitReady());
    EXPECT_TRUE(IsError(server.MultiGet("t", four, &m),
                        StatusCode::INVALID_ARGUMENT,
                        "MultiGet of 4 keys exceeds --max-batch 3"));
  }
  {
    ServerProcess server(
        std::vector<std::string>{"--config", config, "--max-batch", "4"},
        LogFile("config-and-flag"));
    ASSERT_TRUE(server.WaitReady());
    EXPECT_OK(server.MultiGet("t", four, &m));
  }
  // A misspelt key, and a file that is not there: usage errors.
  const std::string misspelt = scratch_.File("misspelt.toml");
  WriteFile(misspelt, "data-dir = \"" + data_ + "\"\nmax_batch = 3\n");
  {
    ServerProcess server(std::vector<std::string>{"--config", misspelt},
                         LogFile("misspelt"));
    EXPECT_EQ(server.WaitExit(), 64);
    EXPECT_NE(server.Log().find("max_batch"), std::string::npos)
        << server.Log();
  }
  {
    ServerProcess server(
        std::vector<std::string>{"--config", scratch_.File("nothing.toml")},
        LogFile("no-config"));
    EXPECT_EQ(server.WaitExit(), 64);
  }
}

// Client threads that Get random keys of table "t" (values "1:KEY") in a
// loop until stopped, counting the outcomes by status code.
class GetLoop {
 public:
  GetLoop(ServerProcess* server, const std::vector<std::string>& keys,
          int threads) {
    for (int i = 0; i < threads; ++i) {
      threads_.emplace_back([this, server, &keys, i] {
        std::mt19937_64 rng(i);
        while (!stop_.load()) {
          const std::string& key = keys[rng() % keys.size()];
          v1::GetResponse g;
          const grpc::Status s = server->Get("t", key, &g);
          counts_[std::min<int>(s.error_code(), 16)].fetch_add(1);
          if (s.ok() && VersionOf(g.value(), key) != 1) {
            problems_.Add(StrCat("wrong answer for ", key, ": ", g.value()));
          } else if (!s.ok() && s.error_code() != StatusCode::UNAVAILABLE) {
            problems_.Add(StrCat("Get: code ", s.error_code(), " \"",
                                 s.error_message(), "\""));
          }
        }
      });
    }
  }
  ~GetLoop() { Stop(); }
  void Stop() {
    stop_.store(true);
    for (auto& t : threads_) t.join();
    threads_.clear();
  }
  int count(StatusCode code) const { return counts_[code].load(); }
  // Answers other than OK with the right value, or UNAVAILABLE.
  int problems() const { return problems_.count(); }
  std::string Describe() const {
    std::string out = "calls by code:";
    for (int c = 0; c <= 16; ++c) {
      if (counts_[c].load() > 0) out += StrCat(" ", c, ":", counts_[c].load());
    }
    return out + "\n" + problems_.Describe();
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> counts_[17] = {};
  Problems problems_;
  std::vector<std::thread> threads_;
};

TEST_F(LifecycleTest, SigtermDrainsWhileServingThenStops) {
  const std::vector<std::string> keys = Keys(100);
  ASSERT_NE(BuildTable(data_, "t", Versioned(1, keys)), "");
  ServerFlags flags = Flags();
  // Long enough for a health check and a Get inside it, even under ASan.
  flags.drain_period = 2;
  flags.extra = {"--shutdown-timeout", "5"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  GetLoop clients(&server, keys, 2);
  EXPECT_TRUE(WaitFor([&] { return clients.count(StatusCode::OK) >= 20; }));

  server.SendSignal(SIGTERM);
  ASSERT_TRUE(server.WaitForLog("roost-server: draining"));
  HealthStatus::ServingStatus status;
  EXPECT_OK(server.HealthCheck("roost.v1.Lookup", &status));
  EXPECT_EQ(status, HealthStatus::NOT_SERVING);
  EXPECT_OK(server.HealthCheck("", &status));
  EXPECT_EQ(status, HealthStatus::NOT_SERVING);
  // Still answering while it drains.
  v1::GetResponse g;
  EXPECT_OK(server.Get("t", keys[7], &g));
  EXPECT_EQ(VersionOf(g.value(), keys[7]), 1);

  EXPECT_EQ(server.WaitExit(), 0) << server.Log();
  EXPECT_TRUE(
      WaitFor([&] { return clients.count(StatusCode::UNAVAILABLE) > 0; }));
  clients.Stop();
  // No wrong answers, and no failures but UNAVAILABLE once it stopped
  // accepting, and CANCELLED for calls that reached the server but no
  // handler as the shutdown began: gRPC 1.51 cancels those
  // (https://github.com/grpc/grpc/issues/41785); clients should retry both.
  EXPECT_EQ(clients.problems(), clients.count(StatusCode::CANCELLED))
      << clients.Describe();
  const std::string log = server.Log();
  const std::string last = "roost-server: stopped\n";
  EXPECT_TRUE(log.size() >= last.size() &&
              log.compare(log.size() - last.size(), last.size(), last) == 0)
      << log;
}

TEST_F(LifecycleTest, ASecondSignalEndsTheDrainAtOnce) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", "v"}}), "");
  ServerFlags flags = Flags();
  flags.drain_period = 600;
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  server.SendSignal(SIGTERM);
  ASSERT_TRUE(server.WaitForLog("roost-server: draining (SIGTERM)"));
  server.SendSignal(SIGINT);
  // Well inside the 600 s drain.
  EXPECT_EQ(server.WaitExit(), 0) << server.Log();
  EXPECT_EQ(server.CountLogLines("roost-server: stopped"), 1);
}

TEST_F(LifecycleTest, AnOpenStreamIsCancelledWhenTheShutdownTimesOut) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", "v"}}), "");
  ServerFlags flags = Flags();
  flags.extra = {"--shutdown-timeout", "1"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(60));
  auto stream = server.lookup().StreamMultiGet(&context);
  v1::MultiGetRequest request;
  request.set_table("t");
  request.add_keys("k");
  v1::MultiGetResponse response;
  ASSERT_TRUE(stream->Write(request) && stream->Read(&response));
  EXPECT_EQ(response.results(0).value(), "v");
  // The stream stays open: the server waits --shutdown-timeout for it, then
  // cancels it, and exits.
  server.SendSignal(SIGTERM);
  EXPECT_EQ(server.WaitExit(), 0) << server.Log();
  EXPECT_FALSE(stream->Read(&response));
  // What the client sees of the cancellation is gRPC's: UNAVAILABLE
  // "Cancelling all calls" (docs/operations/reference.md's retry table says
  // CANCELLED); either way an error, never a clean end.
  const grpc::Status s = stream->Finish();
  EXPECT_TRUE(s.error_code() == StatusCode::UNAVAILABLE ||
              s.error_code() == StatusCode::CANCELLED)
      << s.error_code() << " " << s.error_message();
}

}  // namespace
}  // namespace roost::testing
