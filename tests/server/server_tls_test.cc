// roost-server's TLS, mutual TLS and admin exposure, end to end:
// certificates made by the openssl command inside each test, the real
// server, real gRPC clients, roost-get and roost-admin, and /metrics over
// HTTPS fetched with curl. Who may read which table is
// server_access_policy_test.cc's.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <thread>

#include "tests/harness/server_harness.h"
#include "tests/server/security_fixture.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

TEST_F(SecurityTest, APlaintextClientIsRefusedOnATlsPort) {
  ServerFlags flags = TlsFlags(false);
  flags.metrics_listen = "127.0.0.1:0";
  ServerProcess server(flags, LogFile());
  server.UseCredentials(pki_.Credentials({"ca"}));
  ASSERT_TRUE(server.WaitReady());

  v1::GetResponse response;
  ASSERT_OK(server.Get("t", "k", &response));
  EXPECT_EQ(response.value(), "v");
  EXPECT_EQ(GetOver(server.lookup_address(), nullptr, "t", "k").error_code(),
            grpc::StatusCode::UNAVAILABLE);

  // roost-get: plaintext fails, --tls-ca works.
  const ProcessResult plain =
      RunProcess({RoostGetBinary(), "--addr", server.lookup_address(),
                  "--timeout", "5", "t", "k"});
  EXPECT_EQ(plain.exit_code, 2) << plain.err;
  const ProcessResult tls =
      RunProcess({RoostGetBinary(), "--addr", server.lookup_address(),
                  "--tls-ca", pki_.Pem("ca"), "t", "k"});
  EXPECT_EQ(tls.exit_code, 0) << tls.err;
  EXPECT_EQ(tls.out, "k\tv\n");

  // /metrics speaks TLS too, and not plaintext.
  const ProcessResult https = Curl(server.metrics_port(), "ca");
  EXPECT_EQ(https.exit_code, 0) << https.err;
  EXPECT_NE(https.out.find("roost_tls_certificate_expiry_timestamp_seconds"),
            std::string::npos);
  EXPECT_NE(Curl(server.metrics_port(), "", "", "http").exit_code, 0);
}

// Issue 30, item 22: a plaintext client of a TLS port said only "Socket
// closed". Each tool now says what was likely wrong, and which way round.
TEST_F(SecurityTest, AClientInTheWrongSecurityIsToldWhatToTry) {
  ServerProcess server(TlsFlags(false), LogFile());
  server.UseCredentials(pki_.Credentials({"ca"}));
  ASSERT_TRUE(server.WaitReady());
  const std::string lookup = server.lookup_address();
  const std::string hint = "(is the server using TLS? try --tls)\n";
  for (const std::vector<std::string>& argv :
       std::vector<std::vector<std::string>>{
           {RoostGetBinary(), "--addr", lookup, "--timeout", "5", "t", "k"},
           {RoostGetBinary(), "--addr", lookup, "--timeout", "5", "--list"},
           {RoostAdminBinary(), "--lookup-addr", lookup, "--timeout", "5",
            "tables"},
           {RoostAdminBinary(), "--addr", server.admin_address(), "--timeout",
            "5", "unpin", "t"}}) {
    const ProcessResult r = RunProcess(argv);
    EXPECT_EQ(r.exit_code, 2) << argv.back();
    EXPECT_THAT(r.err, ::testing::HasSubstr("UNAVAILABLE: "));
    EXPECT_THAT(r.err, ::testing::EndsWith(hint)) << argv.back();
  }
  // Through a layout file without "tls".
  const std::string layout = scratch_.File("cluster.json");
  WriteFile(layout, StrCat("{\"shards\": [[\"", lookup, "\"]]}"));
  ProcessResult r = RunProcess(
      {RoostGetBinary(), "--cluster", layout, "--timeout", "3", "t", "k"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err,
              ::testing::EndsWith("(is the server using TLS? give the layout "
                                  "file a \"tls\")\n"));
  r = RunProcess({RoostAdminBinary(), "--timeout", "3", "wait", "--cluster",
                  layout, "--table", "t", "--for-version", "1", "--timeout",
                  "0"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, ::testing::HasSubstr("(is the server using TLS? give the "
                                          "layout file a \"tls\")\n"));

  // TLS to a plaintext port.
  ServerFlags flags = Flags();
  ServerProcess plain(flags, LogFile("plain"));
  ASSERT_TRUE(plain.WaitReady());
  r = RunProcess({RoostGetBinary(), "--addr", plain.lookup_address(),
                  "--tls-ca", pki_.Pem("ca"), "--timeout", "5", "t", "k"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, ::testing::EndsWith("(is the server plaintext? leave out "
                                         "--tls and --tls-*)\n"));
}

// roost-admin health: the probe a container runs where Kubernetes' gRPC
// probe (plaintext only) cannot reach a TLS port.
TEST_F(SecurityTest, RoostAdminHealthProbesOverTls) {
  ServerFlags flags = TlsFlags(true);
  flags.drain_period = 30;
  ServerProcess server(flags, LogFile());
  server.UseCredentials(pki_.Credentials({"ca"}, "client-a"));
  ASSERT_TRUE(server.WaitReady());
  const std::vector<std::string> tls = {
      "--lookup-addr", server.lookup_address(),
      "--tls-ca",      pki_.Pem("ca"),
      "--tls-cert",    pki_.Pem("client-a"),
      "--tls-key",     pki_.Key("client-a")};
  auto health = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {RoostAdminBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv);
  };
  for (const char* service :
       {"", "roost.v1.Lookup", "roost.v1.Registry", "roost.v1.Lookup/t"}) {
    std::vector<std::string> args = tls;
    args.insert(args.end(), {"health", "--service", service});
    const ProcessResult r = health(args);
    EXPECT_EQ(r.exit_code, 0) << service << ": " << r.err;
    EXPECT_EQ(r.out, "SERVING\n") << service;
  }
  // A table not served: the health service does not know it (NOT_FOUND,
  // as the standard says), and the probe fails.
  std::vector<std::string> args = tls;
  args.insert(args.end(), {"health", "--service", "roost.v1.Lookup/nosuch"});
  ProcessResult r = health(args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("NOT_FOUND"), std::string::npos) << r.err;
  // Draining (SIGTERM, --drain-period): the server still answers, NOT_SERVING,
  // and the probe fails with exit 1.
  server.SendSignal(SIGTERM);
  args = tls;
  args.insert(args.end(), {"health", "--service", "roost.v1.Lookup"});
  bool drained = false;
  for (int i = 0; i < 100 && !drained; ++i) {
    r = health(args);
    drained = r.out == "NOT_SERVING\n";
    if (!drained) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(drained) << r.out << r.err;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // Plaintext to a TLS port, or no client certificate: the call fails (2).
  r = health(
      {"--lookup-addr", server.lookup_address(), "--timeout", "3", "health"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = health({"--lookup-addr", server.lookup_address(), "--tls-ca",
              pki_.Pem("ca"), "--timeout", "3", "health"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST_F(SecurityTest, AServerCertificateFromAnotherCaIsRefusedByTheClient) {
  ServerProcess server(TlsFlags(false), LogFile());
  server.UseCredentials(pki_.Credentials({"ca"}));
  ASSERT_TRUE(server.WaitReady());
  EXPECT_EQ(
      GetOver(server.lookup_address(), pki_.Credentials({"other-ca"}), "t", "k")
          .error_code(),
      grpc::StatusCode::UNAVAILABLE);
  const ProcessResult r = RunProcess(
      {RoostGetBinary(), "--addr", server.lookup_address(), "--tls-ca",
       pki_.Pem("other-ca"), "--timeout", "5", "t", "k"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST_F(SecurityTest, MutualTlsRefusesClientsWithoutAGoodCertificate) {
  ServerFlags flags = TlsFlags(true);
  flags.metrics_listen = "127.0.0.1:0";
  ServerProcess server(flags, LogFile());
  server.UseCredentials(pki_.Credentials({"ca"}, "client-a"));
  ASSERT_TRUE(server.WaitReady());
  const std::string addr = server.lookup_address();

  EXPECT_OK(GetOver(addr, pki_.Credentials({"ca"}, "client-a"), "t", "k"));
  for (const std::string client : {"", "stranger", "expired"}) {
    EXPECT_EQ(
        GetOver(addr, pki_.Credentials({"ca"}, client), "t", "k").error_code(),
        grpc::StatusCode::UNAVAILABLE)
        << "client certificate: " << (client.empty() ? "none" : client);
  }

  // roost-get and roost-admin with a client certificate.
  const ProcessResult get =
      RunProcess({RoostGetBinary(), "--addr", addr, "--tls-ca", pki_.Pem("ca"),
                  "--tls-cert", pki_.Pem("client-a"), "--tls-key",
                  pki_.Key("client-a"), "t", "k"});
  EXPECT_EQ(get.exit_code, 0) << get.err;
  const ProcessResult list =
      RunProcess({RoostAdminBinary(), "--lookup-addr", addr, "--tls-ca",
                  pki_.Pem("ca"), "--tls-cert", pki_.Pem("client-a"),
                  "--tls-key", pki_.Key("client-a"), "tables"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out.substr(0, 2), "t\t") << list.out;

  // /metrics wants the client certificate too.
  EXPECT_EQ(Curl(server.metrics_port(), "ca", "client-a").exit_code, 0);
  EXPECT_NE(Curl(server.metrics_port(), "ca").exit_code, 0);
  EXPECT_NE(Curl(server.metrics_port(), "ca", "stranger").exit_code, 0);
  EXPECT_TRUE(server.Running());
}

TEST_F(SecurityTest, TheAdminServiceRefusesClientsWithoutACertificate) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", "v2"}}), "");
  ServerProcess server(TlsFlags(true), LogFile());
  server.UseCredentials(pki_.Credentials({"ca"}, "client-a"));
  ASSERT_TRUE(server.WaitReady());

  auto admin = v1::Admin::NewStub(
      CreateTestChannel(server.admin_address(), pki_.Credentials({"ca"})));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  v1::RollbackRequest request;
  request.set_table("t");
  v1::RollbackResponse response;
  EXPECT_EQ(admin->Rollback(&context, request, &response).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  const ProcessResult refused = RunProcess(
      {RoostAdminBinary(), "--addr", server.admin_address(), "--tls-ca",
       pki_.Pem("ca"), "--timeout", "5", "rollback", "t"});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_EQ(server.ServingVersion("t"), "v000002");

  const ProcessResult allowed = RunProcess(
      {RoostAdminBinary(), "--addr", server.admin_address(), "--tls-ca",
       pki_.Pem("ca"), "--tls-cert", pki_.Pem("client-a"), "--tls-key",
       pki_.Key("client-a"), "rollback", "t"});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_EQ(server.ServingVersion("t"), "v000001");
}

TEST_F(SecurityTest, AnAdminOffLoopbackNeedsMutualTlsOrAnExplicitFlag) {
  {
    ServerFlags flags = Flags();
    flags.admin_listen = "0.0.0.0:0";
    ServerProcess server(flags, LogFile("plain"));
    EXPECT_EQ(server.WaitExit(), 1);
    EXPECT_NE(server.Log().find("(not a loopback address) needs mutual TLS"),
              std::string::npos)
        << server.Log();
  }
  {
    ServerFlags flags = TlsFlags(false);
    flags.admin_listen = "0.0.0.0:0";
    ServerProcess server(flags, LogFile("tls"));
    EXPECT_EQ(server.WaitExit(), 1);
  }
  {
    ServerFlags flags = Flags();
    flags.admin_listen = "0.0.0.0:0";
    flags.extra = {"--admin-allow-insecure-remote"};
    ServerProcess server(flags, LogFile("allowed"));
    EXPECT_TRUE(server.WaitForLog("WARNING: --admin-allow-insecure-remote"));
    EXPECT_TRUE(server.WaitReady());
  }
  {
    ServerFlags flags = TlsFlags(true);
    flags.admin_listen = "0.0.0.0:0";
    ServerProcess server(flags, LogFile("mutual"));
    server.UseCredentials(pki_.Credentials({"ca"}, "client-a"));
    EXPECT_TRUE(server.WaitReady());
  }
}

TEST_F(SecurityTest, BadTlsFilesStopTheStartWithAClearMessage) {
  pki_.Issue("other", "ca", "DNS:localhost");
  // A FIFO where the certificate should be (reading it would wait for a
  // writer forever), and a chain whose second certificate is cut short.
  const std::string fifo = scratch_.File("fifo.crt");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string cut = scratch_.File("cut.crt");
  const std::string ca = ReadFile(pki_.Pem("ca"));
  WriteFile(cut, ReadFile(pki_.Pem("server")) + ca.substr(0, ca.size() / 2));
  const struct {
    std::vector<std::string> flags;
    int exit_code;
    std::string message;
  } cases[] = {
      {{"--tls-cert", pki_.Pem("server")},
       64,
       "--tls-cert and --tls-key go together"},
      {{"--tls-client-ca", pki_.Pem("ca")},
       64,
       "--tls-client-ca needs --tls-cert and --tls-key"},
      {{"--tls-cert", pki_.Pem("server"), "--tls-key", pki_.Key("other")},
       1,
       "is not the key of --tls-cert"},
      {{"--tls-cert", pki_.Key("server"), "--tls-key", pki_.Key("server")},
       1,
       "not a PEM certificate"},
      {{"--tls-cert", pki_.Pem("server"), "--tls-key",
        scratch_.File("missing.key")},
       1,
       "--tls-key " + scratch_.File("missing.key")},
      {{"--tls-cert", pki_.Pem("server"), "--tls-key", pki_.Key("server"),
        "--tls-client-ca", pki_.Key("ca")},
       1,
       "--tls-client-ca " + pki_.Key("ca") + ": holds no PEM certificate"},
      {{"--tls-cert", fifo, "--tls-key", pki_.Key("server")},
       1,
       "--tls-cert " + fifo + ": cannot open " + fifo + ": not a regular file"},
      {{"--tls-cert", cut, "--tls-key", pki_.Key("server")},
       1,
       "--tls-cert " + cut + ": PEM block 2 is cut short or malformed"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {
        "--data-dir",     data_,         "--listen",         "127.0.0.1:0",
        "--admin-listen", "127.0.0.1:0", "--metrics-listen", ""};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    ServerProcess server(args, LogFile("bad"));
    EXPECT_EQ(server.WaitExit(), c.exit_code) << server.Log();
    EXPECT_NE(server.Log().find(c.message), std::string::npos)
        << "expected \"" << c.message << "\" in:\n"
        << server.Log();
    EXPECT_EQ(server.Log().find("listening on"), std::string::npos);
  }
}

// The certificate and key are swapped for ones from another CA while
// clients hammer MultiGet (each client reconnecting every few calls, so
// that handshakes happen throughout): no call fails, and new connections
// get the new certificate.
TEST_F(SecurityTest, RotationWhileClientsHammerDropsNoCall) {
  pki_.Issue("server2", "other-ca", "DNS:localhost,IP:127.0.0.1");
  // The Kubernetes way: the files are links through a directory link that
  // is swapped in one rename.
  const std::string dir = RotatableTlsFiles({"server", "server2"});
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  flags.extra = {"--tls-cert",    dir + "/current/tls.crt",
                 "--tls-key",     dir + "/current/tls.key",
                 "--tls-refresh", "1"};
  ServerProcess server(flags, LogFile());
  const auto both = pki_.Credentials({"ca", "other-ca"});
  server.UseCredentials(both);
  ASSERT_TRUE(server.WaitReady());
  const std::string addr = server.lookup_address();

  const std::vector<std::string> kKeys = {"k", "absent"};
  std::atomic<bool> stop{false};
  std::atomic<int> calls{0};
  Problems problems;
  std::vector<std::thread> clients;
  for (int c = 0; c < 3; ++c) {
    clients.emplace_back([&] {
      while (!stop.load()) {
        auto stub = v1::Lookup::NewStub(CreateTestChannel(addr, both));
        for (int i = 0; i < 20 && !stop.load(); ++i) {
          grpc::ClientContext context;
          context.set_deadline(std::chrono::system_clock::now() +
                               std::chrono::seconds(10));
          v1::MultiGetRequest request;
          request.set_table("t");
          request.mutable_keys()->Assign(kKeys.begin(), kKeys.end());
          v1::MultiGetResponse response;
          const grpc::Status s = stub->MultiGet(&context, request, &response);
          if (!s.ok()) {
            problems.Add(s.error_message());
          } else if (response.results_size() != 2 ||
                     response.results(0).value() != "v") {
            problems.Add("wrong answer");
          }
          calls.fetch_add(1);
        }
      }
    });
  }
  ASSERT_TRUE(WaitFor([&] { return calls.load() >= 100; }));
  RotateTo(dir, "server2");
  // Until gRPC re-reads the files, new connections still get the old one.
  const bool rotated = WaitFor([&] {
    return GetOver(addr, pki_.Credentials({"other-ca"}), "t", "k").ok();
  });
  const int at_rotation = calls.load();
  WaitFor([&] { return calls.load() >= at_rotation + 100; });
  stop.store(true);
  for (std::thread& t : clients) t.join();

  EXPECT_TRUE(rotated) << server.Log();
  EXPECT_EQ(problems.count(), 0) << problems.Describe();
  EXPECT_GE(calls.load(), at_rotation + 100);
  EXPECT_EQ(GetOver(addr, pki_.Credentials({"ca"}), "t", "k").error_code(),
            grpc::StatusCode::UNAVAILABLE);
  // /metrics follows, within a second of the main loop.
  EXPECT_TRUE(WaitFor(
      [&] { return Curl(server.metrics_port(), "other-ca").exit_code == 0; }));
  EXPECT_TRUE(server.WaitForLog("TLS files reloaded"));
}

// What an operator (or a tool) can do wrong to the TLS files of a running
// server.
enum class BadWrite {
  kGarbage,               // --tls-cert overwritten with what is not PEM
  kHalfWritten,           // --tls-cert holds half of a new certificate
  kCertificateBeforeKey,  // a rotation as two cp's, seen between them
  kCaWithoutCertificate,  // --tls-client-ca holds a key, no certificate
  kCutChain,              // the leaf, then half of the next certificate
  kFifo,                  // a FIFO at --tls-cert
};

std::string BadWriteName(const ::testing::TestParamInfo<BadWrite>& info) {
  switch (info.param) {
    case BadWrite::kGarbage:
      return "Garbage";
    case BadWrite::kHalfWritten:
      return "HalfWritten";
    case BadWrite::kCertificateBeforeKey:
      return "CertificateBeforeKey";
    case BadWrite::kCaWithoutCertificate:
      return "CaWithoutCertificate";
    case BadWrite::kCutChain:
      return "CutChain";
    case BadWrite::kFifo:
      return "Fifo";
  }
  return "Unknown";
}

void PrintTo(BadWrite what, std::ostream* os) {
  *os << BadWriteName(::testing::TestParamInfo<BadWrite>(what, 0));
}

// A server with mutual TLS whose files are re-read every second, and then
// broken in one of the ways above: new connections on the lookup, admin
// and metrics ports keep the last good pair, /metrics counts the rejected
// change and keeps describing the pair in use, a good rotation afterwards
// reaches new connections, and SIGTERM still stops the server.
class BadTlsFileTest : public SecurityTest,
                       public ::testing::WithParamInterface<BadWrite> {
 protected:
  void SetUp() override {
    SecurityTest::SetUp();
    // The next pair: another CA, so that a client tells them apart, and
    // another expiry.
    pki_.Issue("server2", "other-ca", "DNS:localhost,IP:127.0.0.1", 20);
    std::filesystem::create_directories(scratch_.File("tls"));
    Replace(cert_, ReadFile(pki_.Pem("server")));
    Replace(key_, ReadFile(pki_.Key("server")));
    Replace(ca_, ReadFile(pki_.Pem("ca")));
  }

  ServerFlags FileFlags() {
    ServerFlags flags = Flags();
    flags.metrics_listen = "127.0.0.1:0";
    flags.extra = {"--tls-cert",      cert_, "--tls-key",     key_,
                   "--tls-client-ca", ca_,   "--tls-refresh", "1"};
    return flags;
  }

  // Puts `text` at `path` in one rename, as a careful tool does.
  static void Replace(const std::string& path, const std::string& text) {
    WriteFile(path + ".new", text);
    std::filesystem::rename(path + ".new", path);
  }

  // Does `what` to the files.
  void Break(BadWrite what) {
    const std::string next_cert = ReadFile(pki_.Pem("server2"));
    switch (what) {
      case BadWrite::kGarbage:
        WriteFile(cert_, "not a certificate\n");
        break;
      case BadWrite::kHalfWritten:
        WriteFile(cert_, next_cert.substr(0, next_cert.size() / 2));
        break;
      case BadWrite::kCertificateBeforeKey:
        WriteFile(cert_, next_cert);
        break;
      case BadWrite::kCaWithoutCertificate:
        WriteFile(ca_, ReadFile(pki_.Key("ca")));
        break;
      case BadWrite::kCutChain: {
        const std::string ca = ReadFile(pki_.Pem("ca"));
        WriteFile(cert_,
                  ReadFile(pki_.Pem("server")) + ca.substr(0, ca.size() / 2));
        break;
      }
      case BadWrite::kFifo:
        std::filesystem::remove(cert_);
        ASSERT_EQ(::mkfifo(cert_.c_str(), 0600), 0);
        break;
    }
  }

  // The certificate /metrics describes and whose client trusts only `ca`,
  // over a new connection to each port: a Get on the lookup port, an Unpin
  // on the admin port, a scrape of /metrics (returned).
  Metrics ExpectNewConnectionsTrust(ServerProcess& server,
                                    const std::string& ca) {
    const auto credentials = pki_.Credentials({ca}, "client-a");
    EXPECT_OK(GetOver(server.lookup_address(), credentials, "t", "k"))
        << "lookup port, trusting " << ca;
    auto admin = v1::Admin::NewStub(
        CreateTestChannel(server.admin_address(), credentials));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(10));
    v1::UnpinRequest request;
    request.set_table("nosuch");
    v1::UnpinResponse response;
    const grpc::Status unpin = admin->Unpin(&context, request, &response);
    EXPECT_EQ(unpin.error_code(), grpc::StatusCode::NOT_FOUND)
        << "admin port, trusting " << ca << ": " << unpin.error_message();
    const ProcessResult scrape = Curl(server.metrics_port(), ca, "client-a");
    EXPECT_EQ(scrape.exit_code, 0)
        << "/metrics, trusting " << ca << ": " << scrape.err;
    return ParsePrometheusText(scrape.out);
  }

  const std::string cert_ = scratch_.File("tls/tls.crt");
  const std::string key_ = scratch_.File("tls/tls.key");
  const std::string ca_ = scratch_.File("tls/client-ca.crt");
};

constexpr char kExpiry[] = "roost_tls_certificate_expiry_timestamp_seconds";
constexpr char kReloadsOk[] = R"(roost_tls_reloads_total{result="ok"})";
constexpr char kReloadsError[] = R"(roost_tls_reloads_total{result="error"})";
constexpr char kRejected[] = "roost_tls_files_rejected";

TEST_P(BadTlsFileTest, TheLastGoodPairStaysInUseUntilAGoodRotation) {
  ServerProcess server(FileFlags(), LogFile());
  server.UseCredentials(pki_.Credentials({"ca"}, "client-a"));
  ASSERT_TRUE(server.WaitReady());
  Metrics m = ExpectNewConnectionsTrust(server, "ca");
  EXPECT_EQ(MetricOr(m, kExpiry), pki_.NotAfter("server"));

  Break(GetParam());
  // roost sees the change within a second (--tls-refresh 1) and refuses it.
  EXPECT_TRUE(WaitFor([&] {
    return MetricOr(ParsePrometheusText(
                        Curl(server.metrics_port(), "ca", "client-a").out),
                    kReloadsError) >= 1;
  })) << server.Log();
  // For three refresh periods after, new connections on every port get the
  // last good pair, and /metrics describes it.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < until && !HasFailure()) {
    m = ExpectNewConnectionsTrust(server, "ca");
    EXPECT_EQ(MetricOr(m, kExpiry), pki_.NotAfter("server"));
    EXPECT_EQ(MetricOr(m, kReloadsOk), 0);
    EXPECT_EQ(MetricOr(m, kRejected, -1), 1);
    EXPECT_EQ(MetricOr(m, "roost_ready"), 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  EXPECT_TRUE(server.WaitForLog("the last good TLS files stay in use"));

  // A good rotation (certificate first, each file in one rename; the CA
  // bundle put right) reaches new connections on every port.
  Replace(ca_, ReadFile(pki_.Pem("ca")));
  Replace(cert_, ReadFile(pki_.Pem("server2")));
  Replace(key_, ReadFile(pki_.Key("server2")));
  const auto next = pki_.Credentials({"other-ca"}, "client-a");
  EXPECT_TRUE(WaitFor([&] {
    return GetOver(server.lookup_address(), next, "t", "k").ok();
  })) << server.Log();
  EXPECT_TRUE(WaitFor([&] {
    return Curl(server.metrics_port(), "other-ca", "client-a").exit_code == 0;
  }));
  m = ExpectNewConnectionsTrust(server, "other-ca");
  EXPECT_EQ(MetricOr(m, kExpiry), pki_.NotAfter("server2"));
  EXPECT_GE(MetricOr(m, kReloadsOk), 1);
  EXPECT_EQ(MetricOr(m, kRejected, -1), 0);
  EXPECT_EQ(GetOver(server.lookup_address(),
                    pki_.Credentials({"ca"}, "client-a"), "t", "k")
                .error_code(),
            grpc::StatusCode::UNAVAILABLE);

  // SIGTERM stops the server promptly (gRPC's certificate reader, stuck on
  // a FIFO, once kept it from exiting).
  server.Disconnect();
  server.SendSignal(SIGTERM);
  EXPECT_EQ(server.WaitExit(std::chrono::seconds(10)), 0) << server.Log();
}

INSTANTIATE_TEST_SUITE_P(Writes, BadTlsFileTest,
                         ::testing::Values(BadWrite::kGarbage,
                                           BadWrite::kHalfWritten,
                                           BadWrite::kCertificateBeforeKey,
                                           BadWrite::kCaWithoutCertificate,
                                           BadWrite::kCutChain,
                                           BadWrite::kFifo),
                         BadWriteName);

}  // namespace
}  // namespace roost::testing
