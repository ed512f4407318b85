// The AWS default credential chain (repository/aws_credentials.h) against
// real parts: a real MinIO, and the credential stand-in
// (tests/harness/aws_credentials_standin.py) serving IMDSv2, a container
// endpoint and STS AssumeRoleWithWebIdentity with MinIO's own temporary
// credentials. Each source gets credentials that really read and write
// MinIO; the chain's order; renewal before expiry (a rotated token file read
// again, one renewal at a time, a failed renewal keeping the old ones); and
// the messages of a refused token, an unreachable IMDS and a bad file line.
#include "repository/aws_credentials.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <thread>
#include <vector>

#include "repository/s3_object_store.h"
#include "tests/harness/aws_credentials_standin.h"
#include "tests/harness/minio_server.h"
#include "tests/harness/object_store_fixture.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Env = std::map<std::string, std::string>;

// Polls `condition` until it holds (true) or 20 s pass (false).
bool WaitFor(const std::function<bool()>& condition) {
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < until) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// The stand-in's options: an Expiration `seconds` ahead.
AwsCredentialsStandin::Options ExpiringIn(int seconds) {
  AwsCredentialsStandin::Options options;
  options.expires_in = seconds;
  return options;
}

AwsEnvironment EnvOf(const Env& vars) {
  return [vars](std::string_view name) {
    auto it = vars.find(std::string(name));
    return it == vars.end() ? std::string() : it->second;
  };
}

class AwsCredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    minio_ = SharedMinio();
    ASSERT_NE(minio_, nullptr) << MinioStartError();
  }

  void StartStandin(AwsCredentialsStandin::Options options = {}) {
    auto s = AwsCredentialsStandin::Start(*minio_, options);
    ASSERT_OK(s);
    standin_ = *std::move(s);
  }

  // An environment with nothing configured: no ~/.aws, IMDS off.
  Env Bare() const {
    return {{"HOME", dir_.path().string()},
            {"AWS_EC2_METADATA_DISABLED", "true"}};
  }
  Env WebIdentity(const std::string& token) {
    WriteFile(dir_.File("token"), token);
    Env env = Bare();
    env["AWS_WEB_IDENTITY_TOKEN_FILE"] = dir_.File("token");
    env["AWS_ROLE_ARN"] = "arn:aws:iam::000000000000:role/roost-reader";
    env["AWS_ENDPOINT_URL_STS"] = standin_->endpoint();
    return env;
  }
  Env Container() {
    Env env = Bare();
    env["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = standin_->container_url();
    return env;
  }
  Env Imds() {
    Env env = Bare();
    env.erase("AWS_EC2_METADATA_DISABLED");
    env["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = standin_->endpoint();
    return env;
  }
  std::string WriteCredentialsFile(const std::string& text) {
    const std::string path = dir_.File("credentials");
    WriteFile(path, text);
    return path;
  }

  // A store over MinIO signing with `provider`.
  std::unique_ptr<S3ObjectStore> Store(
      std::shared_ptr<AwsCredentialsProvider> provider,
      const std::string& prefix) {
    S3Config config;
    config.bucket = minio_->bucket();
    config.prefix = prefix;
    config.endpoint = minio_->endpoint();
    config.credentials = std::move(provider);
    return std::make_unique<S3ObjectStore>(config, TestStoreOptions());
  }

  // A write and a read back through `provider`.
  void ExpectReadWrite(std::shared_ptr<AwsCredentialsProvider> provider,
                       const std::string& prefix) {
    auto store = Store(provider, prefix);
    ASSERT_OK(store->Put("k", StrCat("from ", provider->source())));
    auto got = store->Get("k");
    ASSERT_OK(got);
    EXPECT_EQ(*got, StrCat("from ", provider->source()));
  }

  MinioServer* minio_ = nullptr;
  ScratchDir dir_;
  std::unique_ptr<AwsCredentialsStandin> standin_;
};

TEST_F(AwsCredentialsTest, EachSourceAloneReadsAndWritesMinio) {
  StartStandin();
  std::vector<std::string> lines;
  auto log = [&](const std::string& line) { lines.push_back(line); };

  Env env = Bare();
  env["AWS_ACCESS_KEY_ID"] = minio_->access_key();
  env["AWS_SECRET_ACCESS_KEY"] = minio_->secret_key();
  auto p = AwsCredentialsProvider::FromChain(EnvOf(env), log);
  ASSERT_OK(p);
  EXPECT_EQ((*p)->source(), "environment");
  EXPECT_EQ((*p)->expiry_unix_seconds(), 0);
  ExpectReadWrite(*p, "env");

  env = Bare();
  env["AWS_SHARED_CREDENTIALS_FILE"] = WriteCredentialsFile(
      StrCat("# a comment\n[other]\naws_access_key_id = nobody\n\n[reader]\n",
             "aws_access_key_id = ", minio_->access_key(),
             "\naws_secret_access_key=", minio_->secret_key(), "\n"));
  env["AWS_PROFILE"] = "reader";
  p = AwsCredentialsProvider::FromChain(EnvOf(env), log);
  ASSERT_OK(p);
  EXPECT_EQ((*p)->source(),
            StrCat("shared credentials file ", dir_.File("credentials"),
                   " (profile reader)"));
  ExpectReadWrite(*p, "files");

  p = AwsCredentialsProvider::FromChain(EnvOf(WebIdentity("valid-1")), log);
  ASSERT_OK(p);
  EXPECT_EQ((*p)->source(),
            "web identity (role arn:aws:iam::000000000000:role/roost-reader)");
  EXPECT_GT((*p)->expiry_unix_seconds(), 0);
  ExpectReadWrite(*p, "web");

  p = AwsCredentialsProvider::FromChain(EnvOf(Container()), log);
  ASSERT_OK(p);
  EXPECT_EQ((*p)->source(),
            StrCat("container endpoint ", standin_->container_url()));
  ExpectReadWrite(*p, "container");

  p = AwsCredentialsProvider::FromChain(EnvOf(Imds()), log);
  ASSERT_OK(p);
  EXPECT_EQ((*p)->source(), StrCat("instance metadata ", standin_->endpoint(),
                                   " (role roost-test-role)"));
  ExpectReadWrite(*p, "imds");

  // Once each, at the start: which source, and when temporary ones expire.
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0], "credentials from environment");
  EXPECT_THAT(lines[2],
              AllOf(StartsWith("credentials from web identity (role arn:"),
                    HasSubstr(", temporary, expiring 20")));
  EXPECT_EQ(standin_->Hits("sts"), 1);
  EXPECT_EQ(standin_->Hits("container"), 1);
  EXPECT_EQ(standin_->Hits("imds"), 1);
}

TEST_F(AwsCredentialsTest, TheChainTakesTheFirstSourceConfigured) {
  StartStandin();
  Env env = WebIdentity("valid-1");
  for (const auto& [k, v] : Imds()) env[k] = v;
  env.erase("AWS_EC2_METADATA_DISABLED");
  env["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = standin_->container_url();
  env["AWS_SHARED_CREDENTIALS_FILE"] = WriteCredentialsFile(
      StrCat("[default]\naws_access_key_id = ", minio_->access_key(),
             "\naws_secret_access_key = ", minio_->secret_key(), "\n"));
  env["AWS_ACCESS_KEY_ID"] = minio_->access_key();
  env["AWS_SECRET_ACCESS_KEY"] = minio_->secret_key();
  const char* expected[] = {"environment", "shared credentials file",
                            "web identity", "container endpoint",
                            "instance metadata"};
  for (const char* source : expected) {
    auto p = AwsCredentialsProvider::FromChain(EnvOf(env));
    ASSERT_OK(p);
    EXPECT_THAT((*p)->source(), StartsWith(source));
    // Take away what won, so that the next one's turn comes.
    if (env.erase("AWS_ACCESS_KEY_ID") > 0) {
      env.erase("AWS_SECRET_ACCESS_KEY");
    } else if (env.erase("AWS_SHARED_CREDENTIALS_FILE") > 0) {
    } else if (env.erase("AWS_WEB_IDENTITY_TOKEN_FILE") > 0) {
    } else {
      env.erase("AWS_CONTAINER_CREDENTIALS_FULL_URI");
    }
  }
  // Each source was asked only when its turn came.
  EXPECT_EQ(standin_->Hits("sts"), 1);
  EXPECT_EQ(standin_->Hits("container"), 1);
  EXPECT_EQ(standin_->Hits("imds"), 1);
}

TEST_F(AwsCredentialsTest, ImdsV2SendsTheSessionToken) {
  StartStandin();
  auto p = AwsCredentialsProvider::FromChain(EnvOf(Imds()));
  ASSERT_OK(p);
  // The stand-in answers 401 to a read without a token it gave out.
  EXPECT_EQ(standin_->Hits("imds_token"), 1);
  EXPECT_EQ(standin_->Hits("imds_role"), 1);
  EXPECT_EQ(standin_->Hits("imds"), 1);
}

TEST_F(AwsCredentialsTest, ContainerSendsTheAuthorizationTokenFromItsFile) {
  AwsCredentialsStandin::Options options;
  options.container_token = "pod-identity-token-1";
  StartStandin(options);
  Env env = Container();
  env["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"] = dir_.File("auth");
  WriteFile(dir_.File("auth"), "pod-identity-token-1\n");
  auto p = AwsCredentialsProvider::FromChain(EnvOf(env));
  ASSERT_OK(p);
  ExpectReadWrite(*p, "container-auth");

  env.erase("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
  env["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = "pod-identity-token-1";
  ASSERT_OK(AwsCredentialsProvider::FromChain(EnvOf(env)));

  env["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = "stolen";
  EXPECT_THAT(
      AwsCredentialsProvider::FromChain(EnvOf(env)),
      StatusIs(absl::StatusCode::kPermissionDenied,
               AllOf(HasSubstr(StrCat("container endpoint ",
                                      standin_->container_url())),
                     HasSubstr("HTTP 403"), HasSubstr("AccessDenied"))));
  EXPECT_THAT(
      standin_->ContainerAuthorizations(),
      ElementsAre("pod-identity-token-1", "pod-identity-token-1", "stolen"));
}

TEST_F(AwsCredentialsTest, WebIdentityRenewsWithTheRotatedTokenFile) {
  StartStandin(ExpiringIn(5));
  auto p = AwsCredentialsProvider::FromChain(EnvOf(WebIdentity("valid-a")));
  ASSERT_OK(p);
  const std::string first = (*p)->Current()->access_key_id;
  WriteFile(dir_.File("token"), "valid-b");  // as kubelet rotates it
  ASSERT_TRUE(WaitFor([&] {
    (void)(*p)->Current();
    return (*p)->refreshes() >= 1;
  })) << (*p)->refreshes();
  EXPECT_NE((*p)->Current()->access_key_id, first);
  EXPECT_THAT(standin_->WebTokens(), ElementsAre("valid-a", "valid-b"));
  EXPECT_EQ((*p)->refresh_failures(), 0u);
  ExpectReadWrite(*p, "rotated");
}

TEST_F(AwsCredentialsTest, ManyThreadsRenewOnce) {
  StartStandin(ExpiringIn(5));
  auto p = AwsCredentialsProvider::FromChain(EnvOf(WebIdentity("valid-a")));
  ASSERT_OK(p);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(7);
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      while (std::chrono::steady_clock::now() < until) {
        if (!(*p)->Current().ok()) errors++;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  // Credentials of 4-5 s renewed a fifth before they expire: in 7 s one
  // renewal, or two, not one per thread that found them due.
  EXPECT_GE((*p)->refreshes(), 1u);
  EXPECT_LE((*p)->refreshes(), 2u);
  // One request to STS per renewal, however many threads were signing.
  EXPECT_EQ(standin_->Hits("sts"), 1 + static_cast<int>((*p)->refreshes()));
}

TEST_F(AwsCredentialsTest, AFailedRenewalKeepsTheOldCredentialsUntilExpiry) {
  StartStandin(ExpiringIn(6));
  std::vector<std::string> lines;
  std::mutex mu;
  auto p = AwsCredentialsProvider::FromChain(EnvOf(WebIdentity("valid-a")),
                                             [&](const std::string& line) {
                                               std::lock_guard lock(mu);
                                               lines.push_back(line);
                                             });
  ASSERT_OK(p);
  const std::string first = (*p)->Current()->access_key_id;
  const double expiry = (*p)->expiry_unix_seconds();
  standin_->FailNext("sts", 1000);
  ASSERT_TRUE(WaitFor([&] {
    auto c = (*p)->Current();
    return c.ok() && (*p)->refresh_failures() >= 1;
  }));
  EXPECT_EQ((*p)->Current()->access_key_id, first);
  EXPECT_EQ((*p)->expiry_unix_seconds(), expiry);
  {
    std::lock_guard lock(mu);
    ASSERT_GE(lines.size(), 2u);
    EXPECT_THAT(lines[1],
                AllOf(StartsWith("renewing the credentials from web identity "
                                 "(role arn:"),
                      HasSubstr("HTTP 500"), HasSubstr("ServiceUnavailable"),
                      HasSubstr("the current ones serve until")));
  }
  // Past the expiry: an error naming the source, not stale credentials.
  ASSERT_TRUE(WaitFor([&] { return !(*p)->Current().ok(); }));
  EXPECT_THAT((*p)->Current(),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       AllOf(HasSubstr("the credentials from web identity"),
                             HasSubstr("expired at"))));
  standin_->FailNext("sts", 0);
  ASSERT_TRUE(WaitFor([&] { return (*p)->Current().ok(); }));
  EXPECT_NE((*p)->Current()->access_key_id, first);
  ExpectReadWrite(*p, "renewed");
}

TEST_F(AwsCredentialsTest, ARefusedWebIdentityTokenNamesTheSource) {
  StartStandin();
  EXPECT_THAT(
      AwsCredentialsProvider::FromChain(EnvOf(WebIdentity("forged"))),
      StatusIs(absl::StatusCode::kPermissionDenied,
               AllOf(HasSubstr("environment: AWS_ACCESS_KEY_ID is not set"),
                     HasSubstr("web identity (role arn:aws:iam::000000000000:"
                               "role/roost-reader): STS "
                               "AssumeRoleWithWebIdentity at "),
                     HasSubstr("HTTP 403: AccessDenied: Not authorized"))));
  EXPECT_THAT(
      AwsCredentialsProvider::FromChain(EnvOf(WebIdentity("expired-x"))),
      StatusIs(absl::StatusCode::kPermissionDenied,
               HasSubstr("HTTP 400: ExpiredTokenException")));
  Env env = WebIdentity("valid-1");
  env["AWS_WEB_IDENTITY_TOKEN_FILE"] = dir_.File("no-such-token");
  EXPECT_THAT(AwsCredentialsProvider::FromChain(EnvOf(env)),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("AWS_WEB_IDENTITY_TOKEN_FILE: ")));
  env.erase("AWS_ROLE_ARN");
  EXPECT_THAT(AwsCredentialsProvider::FromChain(EnvOf(env)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("AWS_WEB_IDENTITY_TOKEN_FILE is set but "
                                 "AWS_ROLE_ARN is not")));
}

TEST_F(AwsCredentialsTest, NoSourceListsWhatEachSaidAndFailsFast) {
  Env env = Bare();
  env.erase("AWS_EC2_METADATA_DISABLED");
  const std::string imds = StrCat("http://127.0.0.1:", UnusedLoopbackPort());
  env["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = imds;
  const auto start = std::chrono::steady_clock::now();
  auto p = AwsCredentialsProvider::FromChain(EnvOf(env));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  EXPECT_THAT(
      p, StatusIs(absl::StatusCode::kUnavailable,
                  AllOf(StartsWith("no AWS credentials: environment: "
                                   "AWS_ACCESS_KEY_ID is not set; shared "
                                   "files: no profile \"default\" with keys "
                                   "in "),
                        HasSubstr("; web identity: AWS_WEB_IDENTITY_TOKEN_FILE "
                                  "is not set; container: "
                                  "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and "
                                  "AWS_CONTAINER_CREDENTIALS_FULL_URI are not "
                                  "set; instance metadata "),
                        HasSubstr(StrCat("PUT ", imds, "/latest/api/token")))));
  env["AWS_EC2_METADATA_DISABLED"] = "true";
  EXPECT_THAT(AwsCredentialsProvider::FromChain(EnvOf(env)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("instance metadata: AWS_EC2_METADATA_DISABLED "
                                 "is true")));
}

TEST_F(AwsCredentialsTest, BadFilesNameTheFileAndLine) {
  Env env = Bare();
  const std::string path = dir_.File("credentials");
  env["AWS_SHARED_CREDENTIALS_FILE"] = path;
  const std::pair<std::string, std::string> cases[] = {
      {"[default]\naws_access_key_id = a\nthis line is wrong\n",
       StrCat(path,
              ":3: expected \"[section]\" or \"key = value\", found "
              "\"this line is wrong\"")},
      {"\n[default\n",
       StrCat(path, ":2: a section header lacks its closing ']'")},
      {"aws_access_key_id = a\n",
       StrCat(path, ":1: \"aws_access_key_id\" comes before any [section]")},
      {"[default]\n# only half\naws_access_key_id = a\n",
       StrCat(path,
              ":3: profile \"default\" sets aws_access_key_id but not "
              "aws_secret_access_key")},
      {"[default]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = x\n",
       StrCat(path,
              ":2: profile \"default\" sets role_arn, which roost does "
              "not support")},
  };
  for (const auto& [text, message] : cases) {
    WriteFile(path, text);
    EXPECT_THAT(
        AwsCredentialsProvider::FromChain(EnvOf(env)),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(message)))
        << text;
  }
  // The region of the config file's profile, and a bad one named.
  env["AWS_CONFIG_FILE"] = dir_.File("config");
  env["AWS_PROFILE"] = "eu";
  WriteFile(dir_.File("config"),
            "[default]\nregion = us-west-2\n[profile eu]\nregion = "
            "eu-central-1\ns3 =\n  addressing_style = path\n");
  EXPECT_EQ(AwsRegion(EnvOf(env)).value(), "eu-central-1");
  env["AWS_REGION"] = "ap-south-1";
  EXPECT_EQ(AwsRegion(EnvOf(env)).value(), "ap-south-1");
  env.erase("AWS_REGION");
  WriteFile(dir_.File("config"), "[profile eu]\nregion = eu central\n");
  EXPECT_THAT(AwsRegion(EnvOf(env)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(StrCat(dir_.File("config"),
                                        ":2: region is not a region name"))));
  env.erase("AWS_PROFILE");
  EXPECT_EQ(AwsRegion(EnvOf(env)).value(), "us-east-1");
}

}  // namespace
}  // namespace roost::testing
