// roost-server end to end: its ports and its command line. Running out of
// file descriptors never stops a listener, an idle connection never blinds
// /metrics, and the command line checks what it can before a port is taken.
// See tests/harness/server_harness.h.

#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <thread>

#include "tests/harness/pki.h"
#include "tests/harness/server_harness.h"
#include "tests/harness/test_util.h"
#include "util/build_info.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

namespace fs = std::filesystem;
using grpc::StatusCode;

class ListenerTest : public ServerFixture {};

// Opens a plain TCP connection to 127.0.0.1:PORT; -1 on failure.
int Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// A Get on a connection made now, not on the harness's channel (which was
// connected before anything went wrong).
grpc::Status FreshGet(const ServerProcess& server, v1::GetResponse* response) {
  auto stub = v1::Lookup::NewStub(CreateTestChannel(server.lookup_address()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(5));
  v1::GetRequest request;
  request.set_table("t");
  request.set_key("k");
  return stub->Get(&context, request, response);
}

// Defect 3: with 1,100 idle connections against a limit of 1,024 file
// descriptors, gRPC's own listener failed accept4() with EMFILE once and
// never polled its socket again. roost's listener caps connections below
// the limit; past the cap it closes new ones at once.
TEST_F(ListenerTest, TooManyConnectionsAreRefusedAndTheListenerLives) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", "v"}}), "");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  flags.wrapper = {"prlimit", "--nofile=200:200", "--"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  EXPECT_TRUE(server.WaitForLog(
      "roost-server: file descriptors: 200; connections: up to 120 (lookup) "
      "and 16 (admin)"));

  std::vector<int> flood;
  for (int i = 0; i < 250; ++i) {
    const int fd = Connect(server.lookup_port());
    if (fd >= 0) flood.push_back(fd);
  }
  ASSERT_TRUE(WaitFor([&] {
    return MetricOr(server.ScrapeMetrics(),
                    "roost_connections_refused_total{listener=\"lookup\"}") > 0;
  })) << server.Log();
  for (int fd : flood) ::close(fd);
  v1::GetResponse g;
  grpc::Status s;
  ASSERT_TRUE(WaitFor([&] {
    s = FreshGet(server, &g);
    return s.ok();
  })) << s.error_message()
      << server.Log();
  EXPECT_EQ(g.value(), "v");
  const Metrics m = server.ScrapeMetrics();
  EXPECT_EQ(MetricOr(m, "roost_connections_max{listener=\"lookup\"}"), 120);
  EXPECT_EQ(MetricOr(m, "roost_connections_max{listener=\"admin\"}"), 16);
}

// The same past the descriptor limit itself (--max-connections set above
// it): accept4() fails with EMFILE, the listener drops the pending
// connection with a descriptor it keeps in reserve, counts it, and goes on.
TEST_F(ListenerTest, OutOfDescriptorsTheListenerDropsAndGoesOn) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", "v"}}), "");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  flags.wrapper = {"prlimit", "--nofile=200:200", "--"};
  flags.extra = {"--max-connections", "5000"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());

  std::vector<int> flood;
  for (int i = 0; i < 300; ++i) {
    const int fd = Connect(server.lookup_port());
    if (fd >= 0) flood.push_back(fd);
  }
  ASSERT_TRUE(server.WaitForLog("accept on the lookup port failed: "));
  for (int fd : flood) ::close(fd);
  v1::GetResponse g;
  grpc::Status s;
  ASSERT_TRUE(WaitFor([&] {
    s = FreshGet(server, &g);
    return s.ok();
  })) << s.error_message()
      << server.Log();
  EXPECT_GT(MetricOr(server.ScrapeMetrics(),
                     "roost_accept_errors_total{error=\"EMFILE\","
                     "listener=\"lookup\"}"),
            0);
}

// Defect 4: the metrics endpoint ran one thread, which a connection that
// sent half a request line held for civetweb's 30 s request timeout.
TEST_F(ListenerTest, IdleHalfRequestsDoNotBlindTheMetrics) {
  fs::create_directories(data_);
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  // As many idle connections as the endpoint has threads: each is let go
  // after --metrics-request-timeout (2 s), well within the scrape's 10 s.
  std::vector<int> idle;
  for (int i = 0; i < 4; ++i) {
    const int fd = Connect(server.metrics_port());
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "GET /metr", 9), 9);
    idle.push_back(fd);
  }
  std::string error;
  EXPECT_TRUE(HttpGet(server.metrics_port(), "/metrics", &error).has_value())
      << error;
  for (int fd : idle) ::close(fd);
}

// Whether the server has closed connection `fd` (end of stream, or reset).
bool ClosedByPeer(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  char byte;
  const ssize_t n = ::recv(fd, &byte, 1, MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

// Issue 30, defect 6: the endpoint's 4 threads (--metrics-threads) each
// waited on one connection, and 64 more could wait in a queue: about 70
// idle connections, renewed as they were let go, kept every scrape out (a
// connection past the queue was closed at once). A connection now waits
// for its request without holding a thread, and past 64 such connections
// the oldest is let go.
TEST_F(ListenerTest, ManyIdleConnectionsDoNotBlindTheMetrics) {
  fs::create_directories(data_);
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  std::vector<int> idle;
  for (int i = 0; i < 100; ++i) {
    const int fd = Connect(server.metrics_port());
    ASSERT_GE(fd, 0);
    idle.push_back(fd);
  }
  const auto start = std::chrono::steady_clock::now();
  std::string error;
  EXPECT_TRUE(HttpGet(server.metrics_port(), "/metrics", &error).has_value())
      << error;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // Every idle one is let go, within --metrics-request-timeout (2 s) of
  // its start.
  EXPECT_TRUE(WaitFor(
      [&] { return std::all_of(idle.begin(), idle.end(), ClosedByPeer); }));
  for (int fd : idle) ::close(fd);
}

// Issue 30, defect 6: over TLS, 4 connections that sent a ClientHello one
// byte every 1.5 s held the endpoint's 4 threads for as long as they went
// on (each byte gave the handshake a fresh 2 s), and no scrape got
// through. The handshake and the request now have one deadline,
// --metrics-request-timeout from the connection's start, and wait for it
// without holding a thread.
TEST_F(ListenerTest, DribbledTlsHandshakesDoNotBlindTheMetrics) {
  fs::create_directories(data_);
  Pki pki(scratch_.File("pki"));
  pki.MakeCa("ca");
  pki.Issue("server", "ca", "DNS:localhost,IP:127.0.0.1");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  flags.extra = {"--tls-cert", pki.Pem("server"), "--tls-key",
                 pki.Key("server")};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitListening());

  // A TLS record header announcing a 512-byte handshake message, then its
  // bytes one at a time.
  std::vector<int> dribbling;
  for (int i = 0; i < 4; ++i) {
    const int fd = Connect(server.metrics_port());
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::send(fd, "\x16\x03\x01\x02\x00", 5, MSG_NOSIGNAL), 5);
    dribbling.push_back(fd);
  }
  std::atomic<bool> stop{false};
  std::thread dribble([&] {
    while (!stop.load()) {
      for (int fd : dribbling) ::send(fd, "\x01", 1, MSG_NOSIGNAL);
      for (int i = 0; i < 15 && !stop.load(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult scrape = RunProcess(
      {"/usr/bin/curl", "-sS", "--max-time", "10", "--cacert", pki.Pem("ca"),
       StrCat("https://127.0.0.1:", server.metrics_port(), "/metrics")});
  EXPECT_EQ(scrape.exit_code, 0) << scrape.err;
  EXPECT_NE(scrape.out.find("roost_ready"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // The dribblers are let go at their deadline, still dribbling.
  EXPECT_TRUE(WaitFor([&] {
    return std::all_of(dribbling.begin(), dribbling.end(), ClosedByPeer);
  }));
  stop.store(true);
  dribble.join();
  for (int fd : dribbling) ::close(fd);
}

// Issue 30, defect 11: the lookup and admin ports shared --max-connections,
// so a flood of connections to the lookup port shut the operator's
// roost-admin out too: no rollback during the flood. The admin port has a
// budget of its own now (--max-admin-connections).
TEST_F(ListenerTest, AFloodOnTheLookupPortLeavesTheAdminPortOpen) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", "v1"}}), "");
  ASSERT_NE(BuildTable(data_, "t", {{"k", "v2"}}), "");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  flags.extra = {"--max-connections", "20"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  ASSERT_TRUE(WaitFor([&] { return server.ServingVersion("t") == "v000002"; }));

  std::vector<int> flood;
  for (int i = 0; i < 40; ++i) {
    const int fd = Connect(server.lookup_port());
    if (fd >= 0) flood.push_back(fd);
  }
  ASSERT_TRUE(WaitFor([&] {
    return MetricOr(server.ScrapeMetrics(),
                    "roost_connections_refused_total{listener=\"lookup\"}") > 0;
  })) << server.Log();
  // A rollback on a connection made now.
  auto admin = v1::Admin::NewStub(CreateTestChannel(server.admin_address()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  v1::RollbackRequest request;
  request.set_table("t");
  request.set_version("v000001");
  v1::RollbackResponse response;
  EXPECT_OK(admin->Rollback(&context, request, &response));
  EXPECT_EQ(response.serving_version(), "v000001");
  EXPECT_EQ(MetricOr(server.ScrapeMetrics(),
                     "roost_connections_refused_total{listener=\"admin\"}"),
            0);
  for (int fd : flood) ::close(fd);
}

// Issue 30, defect 11: a connection that never sent an HTTP/2 preface (nor
// a TLS ClientHello) held its place in --max-connections for gRPC's
// handshake timeout, 120 s. It is closed after --handshake-timeout (10 s).
TEST_F(ListenerTest, ConnectionsThatSayNothingAreClosed) {
  fs::create_directories(data_);
  ServerProcess server(Flags(), LogFile());
  ASSERT_TRUE(server.WaitReady());
  const auto start = std::chrono::steady_clock::now();
  const int silent = Connect(server.lookup_port());
  ASSERT_GE(silent, 0);
  const int half = Connect(server.lookup_port());
  ASSERT_GE(half, 0);
  ASSERT_EQ(::send(half, "PRI * HTTP/2.0\r\n", 16, MSG_NOSIGNAL), 16);
  EXPECT_TRUE(
      WaitFor([&] { return ClosedByPeer(silent) && ClosedByPeer(half); },
              std::chrono::seconds(30)));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, std::chrono::seconds(9));
  ::close(silent);
  ::close(half);
}

// Defect 25: --version needed --data-dir, and the ports were bound before
// the data directory was checked.
TEST_F(ListenerTest, TheCommandLineIsCheckedBeforeAnyPortIsTaken) {
  const ProcessResult version = RunProcess({RoostServerBinary(), "--version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_EQ(version.out, VersionLine("roost-server") + "\n");

  ServerFlags flags = Flags();
  flags.data_dir = scratch_.File("nonexistent");
  ServerProcess missing(flags, LogFile("missing"));
  EXPECT_EQ(missing.WaitExit(), 1);
  EXPECT_EQ(missing.CountLogLines("listening on"), 0) << missing.Log();
  EXPECT_EQ(missing.CountLogLines("data directory " + flags.data_dir +
                                  " does not exist or is not a directory"),
            1)
      << missing.Log();

  // A misspelt config key names the key, the file and the line.
  fs::create_directories(data_);
  const std::string config = scratch_.File("server.toml");
  WriteFile(config, "keep_versions = 3\n");
  ProcessResult r = RunProcess(
      {RoostServerBinary(), "--data-dir", data_, "--config", config});
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_EQ(r.err, "roost-server: unknown key \"keep_versions\" in " + config +
                       " line 1 (did you mean keep-versions?)\n");
  WriteFile(config, "# roost\nmax-batch = 3\nmax-btach = 4\n");
  r = RunProcess(
      {RoostServerBinary(), "--data-dir", data_, "--config", config});
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_EQ(r.err, "roost-server: unknown key \"max-btach\" in " + config +
                       " line 3\n");
  // Not TOML (an INI-style unquoted path): the line and column, from toml++.
  WriteFile(config, "max-batch = 3\ndata-dir = /srv/roost\n");
  r = RunProcess(
      {RoostServerBinary(), "--data-dir", data_, "--config", config});
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_EQ(r.err.rfind("roost-server: " + config + ": line 2, column 12: ", 0),
            0u)
      << r.err;
  // A section: the server's keys are flat.
  WriteFile(config, "[server]\nmax-batch = 3\n");
  r = RunProcess(
      {RoostServerBinary(), "--data-dir", data_, "--config", config});
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_EQ(r.err, "roost-server: " + config +
                       ": line 1: [server] is a table; the server's keys are "
                       "flat (key = value)\n");

  // Defect 21: values that spun a core or overflowed are out of range.
  for (const auto& [flag, value] :
       std::vector<std::pair<std::string, std::string>>{
           {"--poll-interval", "1e-3"},
           {"--resident-refresh", "1e-9"},
           {"--drain-period", "1e30"},
           {"--shutdown-timeout", "-1"}}) {
    r = RunProcess({RoostServerBinary(), "--data-dir", data_, flag, value});
    EXPECT_EQ(r.exit_code, 64) << flag;
    EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace roost::testing
