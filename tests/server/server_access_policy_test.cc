// roost-server's per-table access policy, end to end: clients named by
// their certificates or by a bearer token, over mutual TLS, and a policy
// file changed or broken while the server runs. The TLS it stands on is
// server_tls_test.cc's.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/harness/server_harness.h"
#include "tests/server/security_fixture.h"

namespace roost::testing {
namespace {

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

// A Scan is authorized as a Get is: a caller not allowed the table gets
// the same answer, whether or not the table exists.
TEST_F(AccessPolicyTest, ScanIsAllowedAndDeniedAsGetIs) {
  ASSERT_NE(BuildTable(data_, "tblock", {{"k1", "a"}, {"k2", "b"}}, "block"),
            "");
  ASSERT_NE(BuildTable(data_, "sblock", {{"k1", "a"}}, "block"), "");
  ServerProcess server(TlsFlags(true, {"--access-policy", policy_}), LogFile());
  server.UseCredentials(pki_.Credentials({"ca"}, "client-a"));
  ASSERT_TRUE(server.WaitReady());
  const auto scan = [&](const std::string& table, const std::string& token,
                        int* entries) {
    auto stub = v1::Lookup::NewStub(CreateTestChannel(
        server.lookup_address(), pki_.Credentials({"ca"}, "client-a")));
    grpc::ClientContext context;
    if (!token.empty()) context.AddMetadata("authorization", token);
    v1::ScanRequest request;
    request.set_table(table);
    auto reader = stub->Scan(&context, request);
    v1::ScanResponse r;
    *entries = 0;
    while (reader->Read(&r)) *entries += r.entries_size();
    return reader->Finish();
  };
  int entries = 0;
  ASSERT_OK(scan("tblock", "", &entries));
  EXPECT_EQ(entries, 2);
  for (const std::string table : {"sblock", "secret", "nonesuch"}) {
    const grpc::Status get =
        GetOver(server.lookup_address(), pki_.Credentials({"ca"}, "client-a"),
                table, "k1");
    const grpc::Status s = scan(table, "", &entries);
    EXPECT_TRUE(IsError(s, grpc::StatusCode::PERMISSION_DENIED,
                        "this client may not read table \"" + table + "\""));
    EXPECT_EQ(s.error_code(), get.error_code());
    EXPECT_EQ(s.error_message(), get.error_message());
    EXPECT_EQ(entries, 0);
  }
  EXPECT_TRUE(IsError(scan("tblock", "Bearer wrong", &entries),
                      grpc::StatusCode::UNAUTHENTICATED,
                      "the bearer token is not in the access policy"));
}

}  // namespace
}  // namespace roost::testing
