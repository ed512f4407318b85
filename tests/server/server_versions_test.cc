// roost-server end to end: the version that answered, named in every
// lookup response, and requests that name the version they want: the
// serving one, the one it replaced while --version-grace holds it, and
// FAILED_PRECONDITION otherwise (lookup.proto, "Versions"). See
// tests/harness/server_harness.h.

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tests/harness/server_harness.h"
#include "util/escape.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

using grpc::StatusCode;

class VersionsTest : public ServerFixture {
 protected:
  // A Get, MultiGet and one StreamMultiGet message naming `version`.
  grpc::Status Get(ServerProcess& server, const std::string& key,
                   const std::string& version, v1::GetResponse* response) {
    grpc::ClientContext context;
    v1::GetRequest request;
    request.set_table("t");
    request.set_key(key);
    request.set_version(version);
    return server.lookup().Get(&context, request, response);
  }
  grpc::Status MultiGet(ServerProcess& server,
                        const std::vector<std::string>& keys,
                        const std::string& version,
                        v1::MultiGetResponse* response) {
    grpc::ClientContext context;
    v1::MultiGetRequest request;
    request.set_table("t");
    for (const std::string& k : keys) request.add_keys(k);
    request.set_version(version);
    return server.lookup().MultiGet(&context, request, response);
  }
  grpc::Status Stream(ServerProcess& server,
                      const std::vector<std::string>& keys,
                      const std::string& version,
                      std::vector<v1::MultiGetResponse>* responses,
                      int messages = 2) {
    grpc::ClientContext context;
    auto stream = server.lookup().StreamMultiGet(&context);
    v1::MultiGetRequest request;
    request.set_table("t");
    for (const std::string& k : keys) request.add_keys(k);
    request.set_version(version);
    for (int i = 0; i < messages; ++i) {
      v1::MultiGetResponse r;
      if (!stream->Write(request) || !stream->Read(&r)) break;
      responses->push_back(std::move(r));
    }
    stream->WritesDone();
    return stream->Finish();
  }

  // Serves v1 and then v2 of Versioned(keys), with `grace` seconds.
  void ServeTwoVersions(const std::vector<std::string>& keys,
                        const std::string& grace,
                        std::unique_ptr<ServerProcess>* server) {
    ASSERT_NE(BuildTable(data_, "t", Versioned(1, keys), "block"), "");
    ServerFlags flags = Flags();
    flags.extra = {"--version-grace", grace};
    *server = std::make_unique<ServerProcess>(flags, LogFile());
    ASSERT_TRUE((*server)->WaitReady());
    ASSERT_NE(BuildTable(data_, "t", Versioned(2, keys), "cuckoo"), "");
    ASSERT_TRUE((*server)->WaitForLog("roost-server: serving t v000002"));
  }
};

TEST_F(VersionsTest, EveryResponseNamesTheVersionThatAnswered) {
  const std::vector<std::string> keys = Keys(20);
  ASSERT_NE(BuildTable(data_, "t", Versioned(1, keys), "block"), "");
  ServerProcess server(Flags(), LogFile());
  ASSERT_TRUE(server.WaitReady());
  ASSERT_EQ(server.ServingVersion("t"), "v000001");

  v1::GetResponse g;
  ASSERT_OK(server.Get("t", keys[3], &g));
  EXPECT_TRUE(g.found());
  EXPECT_EQ(g.version(), "v000001");
  ASSERT_OK(server.Get("t", "absent", &g));  // a miss names it too
  EXPECT_FALSE(g.found());
  EXPECT_EQ(g.version(), "v000001");

  v1::MultiGetResponse m;
  ASSERT_OK(server.MultiGet("t", {keys[0], "absent", keys[1]}, &m));
  ASSERT_EQ(m.results_size(), 3);
  EXPECT_EQ(m.version(), "v000001");
  for (const v1::GetResponse& r : m.results()) EXPECT_EQ(r.version(), "");
  ASSERT_OK(server.MultiGet("t", {}, &m));  // an empty batch too
  EXPECT_EQ(m.version(), "v000001");

  std::vector<v1::MultiGetResponse> streamed;
  ASSERT_OK(Stream(server, {keys[2], "absent"}, "", &streamed));
  ASSERT_EQ(streamed.size(), 2u);
  for (const auto& r : streamed) {
    EXPECT_EQ(r.version(), "v000001");
    EXPECT_EQ(r.results_size(), 2);
  }

  // A new version, in the other format: every kind names it.
  ASSERT_NE(BuildTable(data_, "t", Versioned(2, keys), "cuckoo"), "");
  ASSERT_TRUE(server.WaitForLog("roost-server: serving t v000002"));
  ASSERT_OK(server.Get("t", keys[3], &g));
  EXPECT_EQ(g.version(), "v000002");
  EXPECT_EQ(VersionOf(g.value(), keys[3]), 2);
  ASSERT_OK(server.MultiGet("t", {keys[0]}, &m));
  EXPECT_EQ(m.version(), "v000002");
  streamed.clear();
  ASSERT_OK(Stream(server, {keys[2]}, "", &streamed, 1));
  ASSERT_EQ(streamed.size(), 1u);
  EXPECT_EQ(streamed[0].version(), "v000002");
  EXPECT_EQ(server.ServingVersion("t"), "v000002");
}

TEST_F(VersionsTest, ARequestPinnedToTheServingVersionIsAnsweredByIt) {
  const std::vector<std::string> keys = Keys(10);
  ASSERT_NE(BuildTable(data_, "t", Versioned(1, keys)), "");
  ServerProcess server(Flags(), LogFile());
  ASSERT_TRUE(server.WaitReady());
  for (const std::string version : {"v000001", "1", "01"}) {
    SCOPED_TRACE(version);
    v1::GetResponse g;
    ASSERT_OK(Get(server, keys[0], version, &g));
    EXPECT_EQ(VersionOf(g.value(), keys[0]), 1);
    EXPECT_EQ(g.version(), "v000001");
    v1::MultiGetResponse m;
    ASSERT_OK(MultiGet(server, {keys[1], keys[2]}, version, &m));
    EXPECT_EQ(m.version(), "v000001");
    EXPECT_EQ(VersionOf(m.results(1).value(), keys[2]), 1);
    std::vector<v1::MultiGetResponse> streamed;
    ASSERT_OK(Stream(server, {keys[3]}, version, &streamed));
    ASSERT_EQ(streamed.size(), 2u);
    EXPECT_EQ(streamed[1].version(), "v000001");
  }
}

TEST_F(VersionsTest, TheReplacedVersionAnswersWithinTheGracePeriod) {
  const std::vector<std::string> keys = Keys(50);
  std::unique_ptr<ServerProcess> server;
  ServeTwoVersions(keys, "3600", &server);
  auto info = server->Table("t");
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->serving_version(), "v000002");
  EXPECT_EQ(info->previous_version(), "v000001");

  // Unpinned: the new one. Pinned to either: that one, every key of it.
  v1::MultiGetResponse m;
  ASSERT_OK(MultiGet(*server, keys, "", &m));
  EXPECT_EQ(m.version(), "v000002");
  for (const std::string version : {"v000001", "1"}) {
    ASSERT_OK(MultiGet(*server, keys, version, &m));
    EXPECT_EQ(m.version(), "v000001");
    ASSERT_EQ(m.results_size(), 50);
    for (int i = 0; i < 50; ++i) {
      EXPECT_EQ(VersionOf(m.results(i).value(), keys[i]), 1) << keys[i];
    }
  }
  v1::GetResponse g;
  ASSERT_OK(Get(*server, keys[7], "1", &g));
  EXPECT_EQ(g.version(), "v000001");
  EXPECT_EQ(VersionOf(g.value(), keys[7]), 1);
  ASSERT_OK(Get(*server, keys[7], "2", &g));
  EXPECT_EQ(g.version(), "v000002");
  EXPECT_EQ(VersionOf(g.value(), keys[7]), 2);
  std::vector<v1::MultiGetResponse> streamed;
  ASSERT_OK(Stream(*server, {keys[5]}, "v000001", &streamed));
  ASSERT_EQ(streamed.size(), 2u);
  EXPECT_EQ(streamed[0].version(), "v000001");
  EXPECT_EQ(VersionOf(streamed[0].results(0).value(), keys[5]), 1);

  // A third version: the second is held now, the first is gone.
  ASSERT_NE(BuildTable(data_, "t", Versioned(3, keys), "block"), "");
  ASSERT_TRUE(server->WaitForLog("roost-server: serving t v000003"));
  EXPECT_EQ(server->Table("t")->previous_version(), "v000002");
  ASSERT_OK(Get(*server, keys[7], "2", &g));
  EXPECT_EQ(VersionOf(g.value(), keys[7]), 2);
  EXPECT_TRUE(IsError(Get(*server, keys[7], "1", &g),
                      StatusCode::FAILED_PRECONDITION,
                      "table \"t\" has no version v000001 to answer from: it "
                      "serves v000003 and still answers v000002 "
                      "(--version-grace)"));
}

TEST_F(VersionsTest, AfterTheGracePeriodTheReplacedVersionIsRefused) {
  const std::vector<std::string> keys = Keys(10);
  std::unique_ptr<ServerProcess> server;
  ServeTwoVersions(keys, "0.5", &server);
  // Let go of within a second or so of its grace ending.
  ASSERT_TRUE(WaitFor([&] {
    auto info = server->Table("t");
    return info && info->previous_version().empty();
  }));
  EXPECT_TRUE(server->WaitForLog(
      "no longer answering t v000001 (--version-grace ended)"));
  const std::string kGone =
      "table \"t\" has no version v000001 to answer from: it serves v000002";
  v1::GetResponse g;
  EXPECT_TRUE(IsError(Get(*server, keys[0], "v000001", &g),
                      StatusCode::FAILED_PRECONDITION, kGone));
  v1::MultiGetResponse m;
  EXPECT_TRUE(IsError(MultiGet(*server, keys, "1", &m),
                      StatusCode::FAILED_PRECONDITION, kGone));
  std::vector<v1::MultiGetResponse> streamed;
  EXPECT_TRUE(IsError(Stream(*server, keys, "1", &streamed),
                      StatusCode::FAILED_PRECONDITION, "request 0: " + kGone));
  EXPECT_TRUE(streamed.empty());
  ASSERT_OK(Get(*server, keys[0], "2", &g));
}

TEST_F(VersionsTest, WithNoGraceOnlyTheServingVersionAnswers) {
  const std::vector<std::string> keys = Keys(10);
  std::unique_ptr<ServerProcess> server;
  ServeTwoVersions(keys, "0", &server);
  EXPECT_EQ(server->Table("t")->previous_version(), "");
  v1::GetResponse g;
  EXPECT_TRUE(IsError(
      Get(*server, keys[0], "1", &g), StatusCode::FAILED_PRECONDITION,
      "table \"t\" has no version v000001 to answer from: it serves v000002"));
}

TEST_F(VersionsTest, AVersionNeverServedIsRefusedNamingWhatIsThere) {
  const std::vector<std::string> keys = Keys(10);
  std::unique_ptr<ServerProcess> server;
  ServeTwoVersions(keys, "3600", &server);
  v1::GetResponse g;
  for (const std::string version : {"v000009", "3", "18446744073709551615"}) {
    SCOPED_TRACE(version);
    const grpc::Status s = Get(*server, keys[0], version, &g);
    EXPECT_EQ(s.error_code(), StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(s.error_message().find(
                  "to answer from: it serves v000002 and still answers "
                  "v000001 (--version-grace)"),
              std::string::npos)
        << s.error_message();
  }
  EXPECT_TRUE(IsError(Get(*server, keys[0], "v000009", &g),
                      StatusCode::FAILED_PRECONDITION,
                      "table \"t\" has no version v000009 to answer from: it "
                      "serves v000002 and still answers v000001 "
                      "(--version-grace)"));
}

TEST_F(VersionsTest, AVersionOfBadSyntaxIsInvalidArgumentNamingIt) {
  ASSERT_NE(BuildTable(data_, "t", {{"k", "v"}}), "");
  ServerProcess server(Flags(), LogFile());
  ASSERT_TRUE(server.WaitReady());
  for (const std::string version :
       {"v7", "abc", "0", "v000000", "-1", " 1", "1 ", "+1", "0x1", "v",
        "99999999999999999999999", "V000001"}) {
    SCOPED_TRACE(version);
    const std::string message =
        StrCat("bad version ", PrintableKey(version, 64),
               " (expected a version such as v000007 or 7)");
    v1::GetResponse g;
    EXPECT_TRUE(IsError(Get(server, "k", version, &g),
                        StatusCode::INVALID_ARGUMENT, message));
    v1::MultiGetResponse m;
    EXPECT_TRUE(IsError(MultiGet(server, {"k"}, version, &m),
                        StatusCode::INVALID_ARGUMENT, message));
    std::vector<v1::MultiGetResponse> streamed;
    EXPECT_TRUE(IsError(Stream(server, {"k"}, version, &streamed),
                        StatusCode::INVALID_ARGUMENT, "request 0: " + message));
  }
  // Raw bytes the generated client would not send: a version that is not
  // UTF-8 (field 3, "\xff").
  std::string response;
  EXPECT_TRUE(IsError(
      server.RawCall("/roost.v1.Lookup/Get",
                     std::string("\x0a\x01t\x1a\x01\xff", 6), &response),
      StatusCode::INVALID_ARGUMENT, "version is not valid UTF-8"));
  // The server logged them (at a bounded rate) and still serves.
  EXPECT_GE(server.CountLogLines("bad version"), 1);
  v1::GetResponse g;
  ASSERT_OK(server.Get("t", "k", &g));
  EXPECT_EQ(g.version(), "v000001");
}

TEST_F(VersionsTest, ARollbackLetsGoOfTheVersionRolledBackFrom) {
  const std::vector<std::string> keys = Keys(10);
  std::unique_ptr<ServerProcess> server;
  ServeTwoVersions(keys, "3600", &server);
  v1::RollbackResponse r;
  ASSERT_OK(server->Rollback("t", "1", &r));
  EXPECT_EQ(server->Table("t")->serving_version(), "v000001");
  EXPECT_EQ(server->Table("t")->previous_version(), "");
  v1::GetResponse g;
  EXPECT_TRUE(IsError(
      Get(*server, keys[0], "2", &g), StatusCode::FAILED_PRECONDITION,
      "table \"t\" has no version v000002 to answer from: it serves v000001"));
  ASSERT_OK(Get(*server, keys[0], "1", &g));
  EXPECT_EQ(VersionOf(g.value(), keys[0]), 1);
  // Unpinned, it goes forward to a new version, holding v1 meanwhile.
  v1::UnpinResponse u;
  ASSERT_OK(server->Unpin("t", &u));
  ASSERT_NE(BuildTable(data_, "t", Versioned(3, keys), "block"), "");
  ASSERT_TRUE(server->WaitForLog("roost-server: serving t v000003"));
  EXPECT_EQ(server->Table("t")->previous_version(), "v000001");
  ASSERT_OK(Get(*server, keys[0], "1", &g));
  EXPECT_EQ(VersionOf(g.value(), keys[0]), 1);
}

TEST_F(VersionsTest, AHeldVersionCountsAsMapped) {
  const std::vector<std::string> keys = Keys(200);
  ASSERT_NE(BuildTable(data_, "t", Versioned(1, keys), "block"), "");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  flags.extra = {"--version-grace", "3600"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  const double one = MetricOr(server.ScrapeMetrics(),
                              R"(roost_table_mapped_bytes{table="t"})");
  ASSERT_GT(one, 0);
  ASSERT_NE(BuildTable(data_, "t", Versioned(2, keys), "cuckoo"), "");
  ASSERT_TRUE(server.WaitForLog("roost-server: serving t v000002"));
  const auto info = server.Table("t");
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(MetricOr(server.ScrapeMetrics(),
                     R"(roost_table_mapped_bytes{table="t"})"),
            one + static_cast<double>(info->file_size()));
}

// A held version whose file a writer opens is let go of at once, as a
// served one is dropped: the writer is not held off for the grace period,
// and what it leaves is never answered.
TEST_F(VersionsTest, AHeldVersionWhoseFileIsModifiedIsLetGo) {
  const std::vector<std::string> keys = Keys(100);
  const std::string v1 = BuildTable(data_, "t", Versioned(1, keys), "block");
  ASSERT_NE(v1, "");
  ServerFlags flags = Flags();
  flags.metrics_listen = "127.0.0.1:0";
  flags.extra = {"--version-grace", "3600"};
  ServerProcess server(flags, LogFile());
  ASSERT_TRUE(server.WaitReady());
  ASSERT_NE(BuildTable(data_, "t", Versioned(2, keys), "block"), "");
  ASSERT_TRUE(server.WaitForLog("roost-server: serving t v000002"));
  ASSERT_EQ(server.Table("t")->previous_version(), "v000001");

  const std::string file = v1 + "/table.sst";
  ::chmod(file.c_str(), 0644);  // published read-only; root writes anyway
  // Waits (the lease) until the server has let the file go.
  ASSERT_EQ(::truncate(file.c_str(), 0), 0) << std::strerror(errno);
  ASSERT_TRUE(server.WaitForLog(
      "roost-server: no longer answering t v000001: its table file is being "
      "opened for writing or truncated"));
  EXPECT_EQ(server.Table("t")->previous_version(), "");
  v1::GetResponse g;
  EXPECT_TRUE(IsError(
      Get(server, keys[0], "1", &g), StatusCode::FAILED_PRECONDITION,
      "table \"t\" has no version v000001 to answer from: it serves v000002"));
  ASSERT_OK(Get(server, keys[0], "2", &g));
  EXPECT_EQ(VersionOf(g.value(), keys[0]), 2);
  EXPECT_EQ(MetricOr(server.ScrapeMetrics(),
                     "roost_table_load_failures_total{reason="
                     "\"modified\",table=\"t\"}"),
            1);
}

}  // namespace
}  // namespace roost::testing
