// roost-load build --repository and roost-server --repository with AWS
// credentials as the clouds give them: each source of the default chain
// alone (shared credentials file, web identity, container endpoint, IMDSv2)
// publishing to and pulling from a real MinIO, with the stand-in
// (tests/harness/aws_credentials_standin.py) handing out MinIO's real
// temporary credentials; a long-running server renewing them again and
// again while it follows new versions; a failed renewal counted and logged;
// and the messages of a refused token and a bad credentials file.
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/harness/aws_credentials_standin.h"
#include "tests/harness/repository_server_fixture.h"

namespace roost::testing {
namespace {

using ::testing::HasSubstr;

// The stand-in's options: an Expiration `seconds` ahead.
AwsCredentialsStandin::Options ExpiringIn(int seconds) {
  AwsCredentialsStandin::Options options;
  options.expires_in = seconds;
  return options;
}

constexpr const char* kRole = "arn:aws:iam::000000000000:role/roost-reader";

class ServerCredentialsTest : public RepositoryServerTest {
 protected:
  void SetUp() override {
    RepositoryServerTest::SetUp();
    // From here on only the source a test sets up gives credentials.
    ::unsetenv("AWS_ACCESS_KEY_ID");
    ::unsetenv("AWS_SECRET_ACCESS_KEY");
  }
  void TearDown() override {
    for (const char* name :
         {"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_ENDPOINT_URL_STS",
          "AWS_CONTAINER_CREDENTIALS_FULL_URI",
          "AWS_CONTAINER_AUTHORIZATION_TOKEN",
          "AWS_EC2_METADATA_SERVICE_ENDPOINT"}) {
      ::unsetenv(name);
    }
    ::setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
    ::setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws/credentials", 1);
  }

  void StartStandin(AwsCredentialsStandin::Options options = {}) {
    auto s = AwsCredentialsStandin::Start(*SharedMinio(), options);
    ASSERT_OK(s);
    standin_ = *std::move(s);
  }
  void UseWebIdentity(const std::string& token) {
    WriteFile(scratch_.File("token"), token);
    ::setenv("AWS_WEB_IDENTITY_TOKEN_FILE", scratch_.File("token").c_str(), 1);
    ::setenv("AWS_ROLE_ARN", kRole, 1);
    ::setenv("AWS_ENDPOINT_URL_STS", standin_->endpoint().c_str(), 1);
  }

  // roost-load build --repository of Versioned(`value_version`, keys) as
  // the next version of t; its exit status and output.
  ProcessResult Load(int value_version, const std::vector<std::string>& keys) {
    const std::string input =
        scratch_.File(StrCat("input-", value_version, ".tsv"));
    WriteHexTsv(input, Versioned(value_version, keys));
    return RunProcess({RoostLoadBinary(), "build", "-i", input,
                       "--key-encoding", "hex", "--value-encoding", "hex",
                       "--repository", uri_, "--table", "t"});
  }

  std::unique_ptr<AwsCredentialsStandin> standin_;
};

struct Source {
  const char* name;
  // Sets the environment up for this source alone.
  void (*use)(ServerCredentialsTest* test, const std::string& standin,
              const std::string& dir);
  const char* logged;  // the start of what "credentials from " names
};

class EachSourceTest : public ServerCredentialsTest,
                       public ::testing::WithParamInterface<Source> {};

TEST_P(EachSourceTest, PublishesAndPullsThroughMinio) {
  StartStandin();
  const Source& source = GetParam();
  if (std::string(source.name) == "WebIdentity") {
    UseWebIdentity("valid-token-1");
  } else {
    source.use(this, standin_->endpoint(), scratch_.path().string());
  }
  const std::vector<std::string> keys = Keys(50);
  ProcessResult load = Load(1, keys);
  ASSERT_EQ(load.exit_code, 0) << load.err;
  EXPECT_THAT(load.err, HasSubstr(StrCat("roost-load: credentials from ",
                                         source.logged)));
  ServerProcess server(PullFlags(), LogFile());
  ASSERT_TRUE(server.WaitReady()) << server.Log();
  EXPECT_TRUE(ServesVersion(server, keys, 1));
  EXPECT_EQ(server.CountLogLines(
                StrCat("roost-server: credentials from ", source.logged)),
            1)
      << server.Log();
  // A second version, published and pulled with the same source.
  load = Load(2, keys);
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ASSERT_TRUE(WaitFor([&] { return server.ServingVersion("t") == "v000002"; }))
      << server.Log();
  EXPECT_TRUE(ServesVersion(server, keys, 2));
}

INSTANTIATE_TEST_SUITE_P(
    Sources, EachSourceTest,
    ::testing::Values(
        Source{"SharedFile",
               [](ServerCredentialsTest*, const std::string&,
                  const std::string& dir) {
                 const MinioServer& m = *SharedMinio();
                 const std::string path = dir + "/credentials";
                 WriteFile(
                     path,
                     StrCat("[default]\naws_access_key_id = ", m.access_key(),
                            "\naws_secret_access_key = ", m.secret_key(),
                            "\n"));
                 ::setenv("AWS_SHARED_CREDENTIALS_FILE", path.c_str(), 1);
               },
               "shared credentials file "},
        Source{"WebIdentity", nullptr,
               "web identity (role arn:aws:iam::000000000000:role/"
               "roost-reader), temporary, expiring "},
        Source{"Container",
               [](ServerCredentialsTest*, const std::string& standin,
                  const std::string&) {
                 ::setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI",
                          (standin + "/container/v1").c_str(), 1);
               },
               "container endpoint http://127.0.0.1:"},
        Source{"InstanceMetadata",
               [](ServerCredentialsTest*, const std::string& standin,
                  const std::string&) {
                 ::unsetenv("AWS_EC2_METADATA_DISABLED");
                 ::setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", standin.c_str(),
                          1);
               },
               "instance metadata http://127.0.0.1:"}),
    [](const ::testing::TestParamInfo<Source>& info) {
      return std::string(info.param.name);
    });

TEST_F(ServerCredentialsTest, ALongRunningServerRenewsAgainAndAgain) {
  // Credentials said to last 4 s: renewed some 3 s after each fetch.
  StartStandin(ExpiringIn(4));
  UseWebIdentity("valid-token-1");
  const std::vector<std::string> keys = Keys(50);
  ASSERT_EQ(Load(1, keys).exit_code, 0);
  ServerProcess server(PullFlags(), LogFile());
  ASSERT_TRUE(server.WaitReady()) << server.Log();
  const int at_start = standin_->Hits("sts");
  double last_expiry =
      MetricOr(server.ScrapeMetrics(),
               "roost_repository_credentials_expiry_timestamp_seconds", -1);
  EXPECT_GT(last_expiry, 0);
  int expiry_moves = 0;
  // Four more versions, one every ~3 s, over several renewals; the token
  // file is rotated halfway, as kubelet does.
  for (int v = 2; v <= 5; ++v) {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    if (v == 4) WriteFile(scratch_.File("token"), "valid-token-2");
    const ProcessResult load = Load(v, keys);
    ASSERT_EQ(load.exit_code, 0) << load.err;
    ASSERT_TRUE(WaitFor([&] {
      return server.ServingVersion("t") == StrCat("v00000", v);
    })) << server.Log();
    EXPECT_TRUE(ServesVersion(server, keys, v));
    const double expiry =
        MetricOr(server.ScrapeMetrics(),
                 "roost_repository_credentials_expiry_timestamp_seconds", -1);
    if (expiry > last_expiry) expiry_moves++;
    last_expiry = expiry;
  }
  // The server went to STS again and again (each roost-load once too).
  EXPECT_GE(standin_->Hits("sts") - at_start - 4, 3) << server.Log();
  EXPECT_GE(expiry_moves, 2);
  EXPECT_EQ(MetricOr(server.ScrapeMetrics(),
                     "roost_repository_credentials_refresh_failures_total", -1),
            0);
  const std::vector<std::string> tokens = standin_->WebTokens();
  ASSERT_FALSE(tokens.empty());
  EXPECT_EQ(tokens.back(), "valid-token-2");
  EXPECT_EQ(server.CountLogLines("renewing the credentials"), 0)
      << server.Log();
}

TEST_F(ServerCredentialsTest, AFailedRenewalIsCountedLoggedAndRecovered) {
  StartStandin(ExpiringIn(4));
  UseWebIdentity("valid-token-1");
  const std::vector<std::string> keys = Keys(50);
  ASSERT_EQ(Load(1, keys).exit_code, 0);
  ServerProcess server(PullFlags(), LogFile());
  ASSERT_TRUE(server.WaitReady()) << server.Log();
  standin_->FailNext("sts", 1000000);
  ASSERT_TRUE(WaitFor([&] {
    return MetricOr(server.ScrapeMetrics(),
                    "roost_repository_credentials_refresh_failures_total",
                    0) >= 1;
  })) << server.Log();
  EXPECT_TRUE(server.WaitForLog(
      "roost-server: renewing the credentials from web identity (role "
      "arn:aws:iam::000000000000:role/roost-reader) failed: STS "
      "AssumeRoleWithWebIdentity at "));
  // Once they have expired, the repository refuses: pulls fail, serving
  // goes on.
  ASSERT_TRUE(WaitFor([&] {
    return MetricOr(server.ScrapeMetrics(),
                    "roost_repository_poll_failures_total{reason=\"denied\"}",
                    0) >= 1;
  })) << server.Log();
  EXPECT_TRUE(ServesVersion(server, keys, 1));
  // STS answers again: the next renewal mends it.
  standin_->FailNext("sts", 0);
  ASSERT_EQ(Load(2, keys).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return server.ServingVersion("t") == "v000002"; }))
      << server.Log();
}

TEST_F(ServerCredentialsTest, RefusedTokenAndBadFileAreNamed) {
  StartStandin();
  UseWebIdentity("forged");
  ProcessResult load = Load(1, Keys(5));
  EXPECT_NE(load.exit_code, 0);
  EXPECT_THAT(load.err, HasSubstr(StrCat("web identity (role ", kRole,
                                         "): STS AssumeRoleWithWebIdentity at ",
                                         standin_->endpoint(),
                                         "/: HTTP 403: "
                                         "AccessDenied")));
  ServerProcess server(PullFlags(), LogFile());
  EXPECT_FALSE(server.WaitReady());
  EXPECT_THAT(server.Log(), HasSubstr("HTTP 403: AccessDenied"));

  ::unsetenv("AWS_WEB_IDENTITY_TOKEN_FILE");
  const std::string path = scratch_.File("credentials");
  WriteFile(path, "[default]\naws_access_key_id: AKIA\n");
  ::setenv("AWS_SHARED_CREDENTIALS_FILE", path.c_str(), 1);
  load = Load(1, Keys(5));
  EXPECT_NE(load.exit_code, 0);
  EXPECT_THAT(load.err, HasSubstr(StrCat(path,
                                         ":2: expected \"[section]\" or "
                                         "\"key = value\"")));
}

}  // namespace
}  // namespace roost::testing
