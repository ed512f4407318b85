// roost-server's TLS, mutual TLS, admin exposure and per-table access
// policy, end to end: certificates made by the openssl command inside each
// test, the real server, real gRPC clients, roost-get and roost-admin, and
// /metrics over HTTPS fetched with curl.
#include <gtest/gtest.h>
#include <openssl/sha.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "tests/server_harness.h"

namespace roost::testing {
namespace {

constexpr char kOpenssl[] = "/usr/bin/openssl";
constexpr char kCurl[] = "/usr/bin/curl";

// A throwaway PKI in a directory: CAs and certificates signed by them,
// made by the openssl command. NAME.pem and NAME.key are a certificate and
// its key.
class Pki {
 public:
  explicit Pki(std::string dir) : dir_(std::move(dir)) {
    std::filesystem::create_directories(dir_);
  }

  // A self-signed CA.
  void MakeCa(const std::string& name) {
    Run({kOpenssl, "req", "-x509", "-newkey", "ec", "-pkeyopt",
         "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", Key(name), "-out",
         Pem(name), "-days", "30", "-subj", "/CN=" + name});
  }

  // A certificate for `name` (its CN) with subject alternative names `san`
  // ("DNS:localhost,IP:127.0.0.1"), signed by `ca`, valid for `days` (-1:
  // expired yesterday).
  void Issue(const std::string& name, const std::string& ca,
             const std::string& san, int days = 30) {
    const std::string csr = File(name + ".csr");
    const std::string ext = File(name + ".ext");
    Run({kOpenssl, "req", "-newkey", "ec", "-pkeyopt",
         "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", Key(name), "-out",
         csr, "-subj", "/CN=" + name});
    WriteFile(ext, "subjectAltName=" + san + "\n");
    Run({kOpenssl, "x509", "-req", "-in", csr, "-CA", Pem(ca), "-CAkey",
         Key(ca), "-out", Pem(name), "-days", std::to_string(days), "-extfile",
         ext});
  }

  std::string Pem(const std::string& name) const { return File(name + ".pem"); }
  std::string Key(const std::string& name) const { return File(name + ".key"); }
  std::string File(const std::string& name) const { return dir_ + "/" + name; }

  // TLS credentials trusting the CAs `cas` (their PEMs concatenated),
  // presenting `client`'s certificate unless it is empty.
  std::shared_ptr<grpc::ChannelCredentials> Credentials(
      const std::vector<std::string>& cas, const std::string& client = "") {
    grpc::SslCredentialsOptions options;
    for (const std::string& ca : cas)
      options.pem_root_certs += ReadFile(Pem(ca));
    if (!client.empty()) {
      options.pem_cert_chain = ReadFile(Pem(client));
      options.pem_private_key = ReadFile(Key(client));
    }
    return grpc::SslCredentials(options);
  }

 private:
  static void Run(const std::vector<std::string>& argv) {
    const ProcessResult r = RunProcess(argv);
    ASSERT_EQ(r.exit_code, 0) << argv[1] << ": " << r.err;
  }

  const std::string dir_;
};

std::string Sha256Hex(const std::string& text) {
  unsigned char hash[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(),
         hash);
  std::string hex;
  for (unsigned char c : hash) {
    static constexpr char kDigits[] = "0123456789abcdef";
    hex += kDigits[c >> 4];
    hex += kDigits[c & 15];
  }
  return hex;
}

// One Get on its own channel, optionally with a bearer token.
grpc::Status GetOver(const std::string& address,
                     std::shared_ptr<grpc::ChannelCredentials> credentials,
                     const std::string& table, const std::string& key,
                     const std::string& token = "",
                     v1::GetResponse* response = nullptr) {
  auto stub = v1::Lookup::NewStub(CreateTestChannel(address, credentials));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  if (!token.empty()) context.AddMetadata("authorization", token);
  v1::GetRequest request;
  request.set_table(table);
  request.set_key(key);
  v1::GetResponse ignored;
  return stub->Get(&context, request, response ? response : &ignored);
}

class SecurityTest : public ServerFixture {
 protected:
  void SetUp() override {
    pki_.MakeCa("ca");
    pki_.MakeCa("other-ca");
    pki_.Issue("server", "ca", "DNS:localhost,IP:127.0.0.1");
    pki_.Issue("client-a", "ca", "DNS:client-a");
    pki_.Issue("client-b", "ca", "DNS:client-b");
    pki_.Issue("stranger", "other-ca", "DNS:client-a");
    pki_.Issue("expired", "ca", "DNS:client-a", -1);
    ASSERT_NE(BuildTable(data_, "t", {{"k", "v"}}), "");
  }

  // The harness's flags with TLS (mutual with `mutual`), and `more`.
  ServerFlags TlsFlags(bool mutual, std::vector<std::string> more = {}) {
    ServerFlags flags = Flags();
    flags.extra = {"--tls-cert", pki_.Pem("server"), "--tls-key",
                   pki_.Key("server")};
    if (mutual) {
      flags.extra.insert(flags.extra.end(),
                         {"--tls-client-ca", pki_.Pem("ca")});
    }
    flags.extra.insert(flags.extra.end(), more.begin(), more.end());
    return flags;
  }

  // curl's exit code and output fetching https://127.0.0.1:PORT/metrics
  // trusting `ca`, as `client` (or none).
  ProcessResult Curl(int port, const std::string& ca,
                     const std::string& client = "",
                     const std::string& scheme = "https") {
    std::vector<std::string> argv = {kCurl, "-sS", "--max-time", "10"};
    if (!ca.empty()) argv.insert(argv.end(), {"--cacert", pki_.Pem(ca)});
    if (!client.empty()) {
      argv.insert(argv.end(),
                  {"--cert", pki_.Pem(client), "--key", pki_.Key(client)});
    }
    argv.push_back(scheme + "://127.0.0.1:" + std::to_string(port) +
                   "/metrics");
    return RunProcess(argv);
  }

  Pki pki_{scratch_.File("pki")};
};

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
  const std::string dir = scratch_.File("certs");
  for (const std::string name : {"server", "server2"}) {
    std::filesystem::create_directories(dir + "/" + name);
    std::filesystem::copy_file(pki_.Pem(name), dir + "/" + name + "/tls.crt");
    std::filesystem::copy_file(pki_.Key(name), dir + "/" + name + "/tls.key");
  }
  std::filesystem::create_directory_symlink("server", dir + "/current");
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
  const std::string next = dir + "/next";
  std::filesystem::create_directory_symlink("server2", next);
  std::filesystem::rename(next, dir + "/current");
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

class AccessPolicyTest : public SecurityTest {
 protected:
  void SetUp() override {
    SecurityTest::SetUp();
    ASSERT_NE(BuildTable(data_, "public", {{"k", "public"}}), "");
    ASSERT_NE(BuildTable(data_, "secret", {{"k", "secret"}}), "");
    ASSERT_NE(BuildTable(data_, "t", {{"k", "v2"}}), "");
    policy_ = scratch_.File("policy.json");
    WritePolicy(R"("t*")");
  }

  // client-a may read the tables `a_tables` (a JSON list's items); the
  // token "s3cret" may read "secret" and use the admin service; everyone
  // may read "public".
  void WritePolicy(const std::string& a_tables) {
    const std::string text = R"({
      "clients": [
        {"name": "a", "certificate_names": ["client-a"], "tables": [)" +
                             a_tables + R"(]},
        {"name": "nightly-job", "token_sha256": ")" +
                             Sha256Hex("s3cret") +
                             R"(", "tables": ["secret"], "admin": true}
      ],
      "anonymous_tables": ["public"]
    })";
    // Replaced in one rename, as a careful operator (or Kubernetes) does.
    WriteFile(policy_ + ".new", text);
    std::filesystem::rename(policy_ + ".new", policy_);
  }

  std::string policy_;
};

TEST_F(AccessPolicyTest, TablesAreAllowedAndDeniedAsWritten) {
  ServerFlags flags = TlsFlags(true, {"--access-policy", policy_});
  flags.metrics_listen = "127.0.0.1:0";
  ServerProcess server(flags, LogFile());
  server.UseCredentials(pki_.Credentials({"ca"}, "client-a"));
  ASSERT_TRUE(server.WaitReady());
  const std::string addr = server.lookup_address();
  const auto a = pki_.Credentials({"ca"}, "client-a");
  const auto b = pki_.Credentials({"ca"}, "client-b");
  const std::string kDenied = "this client may not read table \"secret\"";

  // client-a: its own tables, and the public one.
  v1::GetResponse response;
  ASSERT_OK(GetOver(addr, a, "t", "k", "", &response));
  EXPECT_EQ(response.value(), "v2");
  EXPECT_OK(GetOver(addr, a, "public", "k"));
  EXPECT_TRUE(IsError(GetOver(addr, a, "secret", "k"),
                      grpc::StatusCode::PERMISSION_DENIED, kDenied));
  v1::MultiGetResponse multi;
  EXPECT_TRUE(IsError(server.MultiGet("secret", {"k", "x"}, &multi),
                      grpc::StatusCode::PERMISSION_DENIED, kDenied));
  // A table that does not exist is refused the same way: the policy says
  // nothing of which tables there are.
  EXPECT_TRUE(IsError(GetOver(addr, a, "nonesuch", "k"),
                      grpc::StatusCode::PERMISSION_DENIED,
                      "this client may not read table \"nonesuch\""));
  {
    auto stub = v1::Lookup::NewStub(CreateTestChannel(addr, a));
    grpc::ClientContext context;
    auto stream = stub->StreamMultiGet(&context);
    v1::MultiGetRequest request;
    request.set_table("secret");
    request.add_keys("k");
    ASSERT_TRUE(stream->Write(request));
    stream->WritesDone();
    v1::MultiGetResponse ignored;
    EXPECT_FALSE(stream->Read(&ignored));
    EXPECT_EQ(stream->Finish().error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  v1::ListTablesResponse listing;
  ASSERT_OK(server.ListTables(&listing));
  Names names;
  for (const auto& t : listing.tables()) names.push_back(t.name());
  EXPECT_EQ(names, (Names{"public", "t"}));

  // client-b is in no entry: the public table only.
  EXPECT_OK(GetOver(addr, b, "public", "k"));
  EXPECT_EQ(GetOver(addr, b, "t", "k").error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  // The token: "secret", not "t"; a wrong or malformed one is refused.
  EXPECT_OK(GetOver(addr, b, "secret", "k", "Bearer s3cret"));
  EXPECT_EQ(GetOver(addr, b, "t", "k", "Bearer s3cret").error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(IsError(GetOver(addr, b, "public", "k", "Bearer s3cre"),
                      grpc::StatusCode::UNAUTHENTICATED,
                      "the bearer token is not in the access policy"));
  EXPECT_EQ(GetOver(addr, b, "public", "k", "Basic czNjcmV0").error_code(),
            grpc::StatusCode::UNAUTHENTICATED);

  // roost-get with the token in a file.
  const std::string token_file = scratch_.File("token");
  WriteFile(token_file, "s3cret\n");
  const std::vector<std::string> tls = {
      "--tls-ca",  pki_.Pem("ca"),       "--tls-cert", pki_.Pem("client-b"),
      "--tls-key", pki_.Key("client-b"), "--addr",     addr};
  std::vector<std::string> get = {RoostGetBinary()};
  get.insert(get.end(), tls.begin(), tls.end());
  get.insert(get.end(), {"--token-file", token_file, "secret", "k"});
  ProcessResult r = RunProcess(get);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "k\tsecret\n");

  // The admin service: the token's entry may, client-a may not.
  v1::RollbackResponse rolled;
  EXPECT_TRUE(IsError(server.Rollback("t", "", &rolled),
                      grpc::StatusCode::PERMISSION_DENIED,
                      "this client may not use the admin service"));
  std::vector<std::string> admin = {RoostAdminBinary(),
                                    "--tls-ca",
                                    pki_.Pem("ca"),
                                    "--tls-cert",
                                    pki_.Pem("client-b"),
                                    "--tls-key",
                                    pki_.Key("client-b"),
                                    "--addr",
                                    server.admin_address(),
                                    "--token",
                                    "s3cret",
                                    "rollback",
                                    "t"};
  r = RunProcess(admin);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(server.ServingVersion("t"), "v000001");

  // Counted, with no identity in any label.
  const ProcessResult scrape = Curl(server.metrics_port(), "ca", "client-a");
  ASSERT_EQ(scrape.exit_code, 0) << scrape.err;
  const Metrics metrics = ParsePrometheusText(scrape.out);
  EXPECT_GE(MetricOr(metrics, R"(roost_access_refused_total{reason="denied"})"),
            5);
  EXPECT_GE(MetricOr(metrics,
                     R"(roost_access_refused_total{reason="unknown_token"})"),
            1);
  EXPECT_GE(
      MetricOr(metrics, R"(roost_access_refused_total{reason="not_admin"})"),
      1);
  EXPECT_GE(
      MetricOr(
          metrics,
          R"(grpc_server_handled_total{grpc_code="PermissionDenied",grpc_method="Get",grpc_service="roost.v1.Lookup",grpc_type="unary"})"),
      3);
  for (const std::string identity :
       {"client-a", "client-b", "s3cret", "nightly-job"}) {
    EXPECT_EQ(scrape.out.find(identity), std::string::npos) << identity;
  }
}

TEST_F(AccessPolicyTest, AChangedPolicyTakesForceAndABrokenOneIsIgnored) {
  ServerProcess server(TlsFlags(true, {"--access-policy", policy_}), LogFile());
  server.UseCredentials(pki_.Credentials({"ca"}, "client-a"));
  ASSERT_TRUE(server.WaitReady());
  const std::string addr = server.lookup_address();
  const auto a = pki_.Credentials({"ca"}, "client-a");
  ASSERT_EQ(GetOver(addr, a, "secret", "k").error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  WritePolicy(R"("t", "secret")");
  EXPECT_TRUE(WaitFor([&] { return GetOver(addr, a, "secret", "k").ok(); }))
      << server.Log();

  WriteFile(policy_ + ".new", R"({"clients": [{"name": "a", "tables": 3}]})");
  std::filesystem::rename(policy_ + ".new", policy_);
  EXPECT_TRUE(server.WaitForLog(
      "clients[0].tables: not an array of strings; the last good policy "
      "stays in force"));
  EXPECT_OK(GetOver(addr, a, "secret", "k"));
}

TEST_F(AccessPolicyTest, ABadPolicyStopsTheStartNamingTheField) {
  const struct {
    std::string text;
    std::string message;
  } cases[] = {
      {"{", "not valid JSON"},
      {R"({"clients": [], "anonymous": []})", "anonymous: unknown field"},
      {R"({"clients": [{"tables": ["t"]}]})",
       "clients[0]: names no client: give certificate_names or token_sha256"},
      {R"({"clients": [{"token_sha256": "abc", "tables": ["t"]}]})",
       "clients[0].token_sha256: not the SHA-256 of a token"},
      {R"({"clients": [{"certificate_names": ["x"], "tables": [""]}]})",
       "clients[0].tables[0]: empty"},
      {R"({"clients": [{"certificate_names": ["x"], "table": ["t"]}]})",
       "clients[0].table: unknown field"},
  };
  for (const auto& c : cases) {
    WriteFile(policy_, c.text);
    ServerFlags flags = Flags();
    flags.extra = {"--access-policy", policy_};
    ServerProcess server(flags, LogFile("bad"));
    EXPECT_EQ(server.WaitExit(), 1) << c.text;
    EXPECT_NE(server.Log().find("access policy " + policy_ + ": " + c.message),
              std::string::npos)
        << server.Log();
  }
}

}  // namespace
}  // namespace roost::testing
