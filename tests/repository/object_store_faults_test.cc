// Faults of the object stores: bad URIs and environments, an unreachable
// endpoint, wrong credentials, a missing bucket, the retry policy against a
// fake S3 that answers only errors, and ObjectStoreOptions::stop ending a
// slow download from a real MinIO (behind a ThrottledProxy) and a backoff.

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

#include "repository/s3_object_store.h"
#include "repository/s3_xml.h"
#include "tests/harness/object_store_fixture.h"
#include "tests/harness/throttled_proxy.h"

namespace roost::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value == nullptr) {
      ::unsetenv(name);
    } else {
      ::setenv(name, value, 1);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// An HTTP server on loopback that answers the requests with `responses`
// in turn (the last one again once they run out), closing each connection
// after its answer, and counts them.
class FakeS3 {
 public:
  explicit FakeS3(std::string response)
      : FakeS3(std::vector<std::string>{std::move(response)}) {}
  explicit FakeS3(std::vector<std::string> responses)
      : responses_(std::move(responses)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      std::abort();
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeS3() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string endpoint() const { return StrCat("http://127.0.0.1:", port_); }
  int requests() const { return requests_; }

 private:
  void Serve() {
    while (!stop_) {
      const int conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn < 0) return;
      std::string request;
      char buf[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::read(conn, buf, sizeof(buf));
        if (n <= 0) break;
        request.append(buf, static_cast<size_t>(n));
      }
      const std::string& response =
          responses_[std::min<size_t>(requests_++, responses_.size() - 1)];
      (void)!::write(conn, response.data(), response.size());
      ::close(conn);
    }
  }

  const std::vector<std::string> responses_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

std::string ErrorResponse(int status, const char* reason, const char* code) {
  const std::string body =
      StrCat("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>", code,
             "</Code><Message>fake ", code, "</Message></Error>");
  return StrCat("HTTP/1.1 ", status, " ", reason,
                "\r\nContent-Type: application/xml\r\nContent-Length: ",
                body.size(), "\r\nConnection: close\r\n\r\n", body);
}

S3Config ConfigFor(const std::string& endpoint) {
  S3Config config;
  config.bucket = "roost-test";
  config.prefix = "faults";
  config.endpoint = endpoint;
  config.credentials = AwsCredentialsProvider::Fixed("key", "secret");
  return config;
}

TEST(OpenObjectStoreTest, BadUrisAreInvalidArgument) {
  ScopedEnv key("AWS_ACCESS_KEY_ID", "k");
  ScopedEnv secret("AWS_SECRET_ACCESS_KEY", "s");
  const std::pair<const char*, const char*> cases[] = {
      {"", "empty"},
      {"s3://", "no bucket"},
      {"s3:///prefix", "no bucket"},
      {"s3://Upper_Case/x", "not a bucket name"},
      {"s3://ab/x", "not a bucket name"},
      {"s3://bucket/a//b", "bad prefix"},
      {"s3://bucket/a/../b", "bad prefix"},
      {"gs://bucket/x", "unsupported scheme \"gs\""},
      {"http://host/x", "unsupported scheme"},
      {"file://relative/path", "absolute path"},
      {"file://", "absolute path"},
  };
  for (const auto& [uri, why] : cases) {
    EXPECT_THAT(OpenObjectStore(uri),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr(why), HasSubstr("s3://BUCKET"))))
        << uri;
  }
}

TEST(OpenObjectStoreTest, GoodUrisName) {
  ScopedEnv key("AWS_ACCESS_KEY_ID", "k");
  ScopedEnv secret("AWS_SECRET_ACCESS_KEY", "s");
  EXPECT_EQ(OpenObjectStore("s3://bucket").value()->uri(), "s3://bucket");
  EXPECT_EQ(OpenObjectStore("s3://my.bucket-1/a/b/").value()->uri(),
            "s3://my.bucket-1/a/b");
  EXPECT_EQ(OpenObjectStore("file:///srv/repo").value()->uri(),
            "file:///srv/repo");
  EXPECT_EQ(OpenObjectStore("file://localhost/srv/repo/").value()->uri(),
            "file:///srv/repo");
  EXPECT_EQ(OpenObjectStore("/srv/repo").value()->uri(), "file:///srv/repo");
}

TEST(OpenObjectStoreTest, S3NeedsCredentialsAndAUsableEnvironment) {
  {
    // No source of the credential chain configured (aws_credentials_test
    // has the chain itself).
    ScopedEnv key("AWS_ACCESS_KEY_ID", nullptr);
    ScopedEnv files("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials");
    ScopedEnv config("AWS_CONFIG_FILE", "/nonexistent/config");
    ScopedEnv imds("AWS_EC2_METADATA_DISABLED", "true");
    EXPECT_THAT(OpenObjectStore("s3://bucket/p"),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("AWS_ACCESS_KEY_ID is not set")));
  }
  ScopedEnv key("AWS_ACCESS_KEY_ID", "k");
  ScopedEnv secret("AWS_SECRET_ACCESS_KEY", "s");
  {
    ScopedEnv endpoint("AWS_ENDPOINT_URL", "ftp://host");
    ScopedEnv s3_endpoint("AWS_ENDPOINT_URL_S3", nullptr);
    EXPECT_THAT(OpenObjectStore("s3://bucket/p"),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("AWS_ENDPOINT_URL ")));
  }
  {
    ScopedEnv region("AWS_REGION", "us-east-1/../x");
    EXPECT_THAT(
        OpenObjectStore("s3://bucket/p"),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("AWS_REGION")));
  }
}

TEST(S3UrlTest, PathStyleWithAnEndpointVirtualHostedWithout) {
  S3Config config = ConfigFor("http://127.0.0.1:9000");
  S3Client minio(config, {});
  EXPECT_EQ(
      minio.Url("faults/a b/c+d", {{"uploadId", "x/y"}, {"a", ""}}),
      "http://127.0.0.1:9000/roost-test/faults/a%20b/c%2Bd?a=&uploadId=x%2Fy");
  config.endpoint = "";
  config.region = "eu-west-1";
  EXPECT_EQ(S3Client(config, {}).Url("k", {}),
            "https://roost-test.s3.eu-west-1.amazonaws.com/k");
  config.bucket = "dotted.bucket";
  EXPECT_EQ(S3Client(config, {}).Url("k", {}),
            "https://s3.eu-west-1.amazonaws.com/dotted.bucket/k");
}

TEST(S3XmlTest, ListingsErrorsAndMalformedDocuments) {
  auto page = ParseListObjectsV2(
      "<?xml version=\"1.0\"?><ListBucketResult><IsTruncated>true"
      "</IsTruncated><NextContinuationToken>tok</NextContinuationToken>"
      "<Contents><Key>p/a</Key><Size>12</Size><ETag>&quot;e1&quot;</ETag>"
      "</Contents><CommonPrefixes><Prefix>p/v1/</Prefix></CommonPrefixes>"
      "</ListBucketResult>");
  ASSERT_OK(page);
  ASSERT_EQ(page->objects.size(), 1u);
  EXPECT_EQ(page->objects[0].key, "p/a");
  EXPECT_EQ(page->objects[0].size, 12u);
  EXPECT_EQ(page->objects[0].etag, "e1");
  EXPECT_THAT(page->common_prefixes, ::testing::ElementsAre("p/v1/"));
  EXPECT_EQ(page->next_continuation_token, "tok");
  for (const char* bad : {"", "not xml", "<Error/>",
                          "<ListBucketResult><Contents><Key>k</Key>"
                          "<Size>-1x</Size></Contents></ListBucketResult>",
                          "<ListBucketResult><IsTruncated>true</IsTruncated></"
                          "ListBucketResult>"}) {
    EXPECT_THAT(ParseListObjectsV2(bad),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("malformed listing")))
        << bad;
  }
  auto error = ParseS3Error(
      "<Error><Code>NoSuchKey</Code><Message>gone</Message></Error>");
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, "NoSuchKey");
  EXPECT_EQ(error->message, "gone");
  EXPECT_FALSE(ParseS3Error("<html>proxy error</html>").has_value());
  EXPECT_FALSE(ParseS3Error("").has_value());
  EXPECT_THAT(ParseUploadId("<InitiateMultipartUploadResult/>"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(CompleteMultipartUploadXml({"a", "b"}),
            "<?xml version=\"1.0\"?><CompleteMultipartUpload "
            "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Part>"
            "<PartNumber>1</PartNumber><ETag>\"a\"</ETag></Part><Part>"
            "<PartNumber>2</PartNumber><ETag>\"b\"</ETag></Part>"
            "</CompleteMultipartUpload>");
}

TEST(S3FaultsTest, UnreachableEndpointIsRetriedThenFailsInBoundedTime) {
  const int port = UnusedLoopbackPort();
  ScopedEnv key("AWS_ACCESS_KEY_ID", "k");
  ScopedEnv secret("AWS_SECRET_ACCESS_KEY", "s");
  ScopedEnv endpoint("AWS_ENDPOINT_URL",
                     StrCat("http://127.0.0.1:", port).c_str());
  ScopedEnv s3_endpoint("AWS_ENDPOINT_URL_S3", nullptr);
  auto store = OpenObjectStore("s3://roost-test/p", TestStoreOptions());
  ASSERT_OK(store);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT((*store)->Get("t/MANIFEST"),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr("GET s3://roost-test/p/t/MANIFEST"),
                             HasSubstr("connect"),
                             HasSubstr("gave up after 3 attempts"))));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(S3FaultsTest, ServerErrorsAreRetriedClientErrorsAreNot) {
  FakeS3 busy(ErrorResponse(503, "Slow Down", "SlowDown"));
  S3ObjectStore busy_store(ConfigFor(busy.endpoint()), TestStoreOptions());
  EXPECT_THAT(busy_store.Put("k", "v"),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr("503 SlowDown: fake SlowDown"),
                             HasSubstr("gave up after 3 attempts"))));
  EXPECT_EQ(busy.requests(), 3);

  FakeS3 refusing(ErrorResponse(403, "Forbidden", "AccessDenied"));
  S3ObjectStore refused_store(ConfigFor(refusing.endpoint()),
                              TestStoreOptions());
  EXPECT_THAT(refused_store.Get("k"),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("403 AccessDenied")));
  EXPECT_EQ(refusing.requests(), 1);
}

TEST(S3FaultsTest, ADownloadCutShortIsRetriedFromTheStart) {
  // The first answer promises 10 bytes and sends 3.
  FakeS3 flaky(std::vector<std::string>{
      "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
      "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789"});
  S3ObjectStore store(ConfigFor(flaky.endpoint()), TestStoreOptions());
  ScratchDir dir;
  DownloadOptions expect;
  expect.expected_size = 10;
  ASSERT_OK(store.GetToFile("k", dir.File("dest"), expect));
  EXPECT_EQ(ReadFile(dir.File("dest")), "0123456789");
  EXPECT_EQ(flaky.requests(), 2);

  FakeS3 broken("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc");
  S3ObjectStore broken_store(ConfigFor(broken.endpoint()), TestStoreOptions());
  EXPECT_THAT(broken_store.GetToFile("k", dir.File("other")),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr("gave up after 3 attempts")));
  EXPECT_EQ(broken.requests(), 3);
  // Nothing left of the attempts: only the first download's file.
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    names.push_back(e.path().filename().string());
  }
  EXPECT_THAT(names, ::testing::ElementsAre("dest"));
}

TEST(S3FaultsTest, AStopEndsTheWaitBetweenRetries) {
  // Nothing listens: every attempt fails at once, and the backoff before
  // the next is an hour.
  ObjectStoreOptions options = TestStoreOptions();
  options.initial_backoff = std::chrono::hours(1);
  options.max_backoff = std::chrono::hours(1);
  std::atomic<bool> stop{false};
  options.stop = &stop;
  S3ObjectStore store(
      ConfigFor(StrCat("http://127.0.0.1:", UnusedLoopbackPort())), options);
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop = true;
  });
  EXPECT_THAT(store.Get("k"),
              StatusIs(absl::StatusCode::kCancelled,
                       HasSubstr("GET s3://roost-test/faults/k: stopped before "
                                 "the end")));
  stopper.join();
  // Once stopped, a request ends before it is sent.
  EXPECT_THAT(store.Head("k"), StatusIs(absl::StatusCode::kCancelled));
}

TEST(LocalStoreStopTest, AStoppedDownloadEndsBetweenPiecesAndLeavesNothing) {
  ScratchDir dir;
  std::atomic<bool> stop{false};
  ObjectStoreOptions options;
  options.stop = &stop;
  auto store =
      OpenObjectStore(StrCat("file://", dir.File("repository")), options);
  ASSERT_OK(store);
  ASSERT_OK((*store)->Put("big", Bytes(3 << 20, 5)));
  stop = true;
  std::filesystem::create_directories(dir.File("out"));
  EXPECT_THAT((*store)->GetToFile("big", dir.File("out/dest")),
              StatusIs(absl::StatusCode::kCancelled,
                       HasSubstr("stopped before the end")));
  EXPECT_TRUE(std::filesystem::is_empty(dir.File("out")));
}

class MinioFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    minio_ = SharedMinio();
    ASSERT_NE(minio_, nullptr) << MinioStartError();
  }
  S3Config Config() const {
    S3Config config = ConfigFor(minio_->endpoint());
    config.bucket = minio_->bucket();
    config.credentials = AwsCredentialsProvider::Fixed(minio_->access_key(),
                                                       minio_->secret_key());
    return config;
  }
  MinioServer* minio_ = nullptr;
};

TEST_F(MinioFaultsTest, WrongCredentialsArePermissionDeniedNamingTheCode) {
  S3Config config = Config();
  config.credentials =
      AwsCredentialsProvider::Fixed(minio_->access_key(), "not-the-secret");
  S3ObjectStore wrong_secret(config, TestStoreOptions());
  EXPECT_THAT(wrong_secret.Put("k", "v"),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("SignatureDoesNotMatch")));
  config = Config();
  config.credentials =
      AwsCredentialsProvider::Fixed("nobody", minio_->secret_key());
  S3ObjectStore wrong_key(config, TestStoreOptions());
  EXPECT_THAT(wrong_key.Get("k"), StatusIs(absl::StatusCode::kPermissionDenied,
                                           HasSubstr("InvalidAccessKeyId")));
  EXPECT_THAT(wrong_key.Head("k"),
              StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(wrong_key.List({}), StatusIs(absl::StatusCode::kPermissionDenied,
                                           HasSubstr("InvalidAccessKeyId")));
}

TEST_F(MinioFaultsTest, ASessionTokenIsSentAndAWrongOneRefused) {
  auto temporary = minio_->AssumeRole();
  ASSERT_OK(temporary);
  minio_->SetEnvironment();
  ScopedEnv key("AWS_ACCESS_KEY_ID", temporary->access_key.c_str());
  ScopedEnv secret("AWS_SECRET_ACCESS_KEY", temporary->secret_key.c_str());
  const std::string uri = StrCat("s3://", minio_->bucket(), "/session");
  {
    ScopedEnv token("AWS_SESSION_TOKEN", temporary->session_token.c_str());
    auto store = OpenObjectStore(uri, TestStoreOptions());
    ASSERT_OK(store);
    ASSERT_OK((*store)->Put("k", "v"));
    EXPECT_EQ((*store)->Get("k").value(), "v");
  }
  {
    ScopedEnv token("AWS_SESSION_TOKEN", nullptr);
    auto store = OpenObjectStore(uri, TestStoreOptions());
    ASSERT_OK(store);
    EXPECT_THAT((*store)->Get("k"),
                StatusIs(absl::StatusCode::kPermissionDenied));
  }
}

TEST_F(MinioFaultsTest, MissingBucketIsNotFound) {
  S3Config config = Config();
  config.bucket = "no-such-bucket";
  S3ObjectStore store(config, TestStoreOptions());
  EXPECT_THAT(store.Put("k", "v"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("NoSuchBucket")));
  EXPECT_THAT(store.List({}),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("NoSuchBucket")));
}

TEST_F(MinioFaultsTest, EndpointUrlS3WinsOverEndpointUrl) {
  minio_->SetEnvironment();
  ScopedEnv endpoint("AWS_ENDPOINT_URL",
                     StrCat("http://127.0.0.1:", UnusedLoopbackPort()).c_str());
  ScopedEnv s3_endpoint("AWS_ENDPOINT_URL_S3", minio_->endpoint().c_str());
  auto store = OpenObjectStore(StrCat("s3://", minio_->bucket(), "/env"),
                               TestStoreOptions());
  ASSERT_OK(store);
  ASSERT_OK((*store)->Put("k", "v"));
  EXPECT_EQ((*store)->Get("k").value(), "v");
}

TEST(MinioServerTest, MissingBinaryFailsSayingHowToInstall) {
  ScopedEnv minio("ROOST_MINIO", "/nonexistent/minio");
  EXPECT_THAT(MinioServer::Start(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("run scripts/install-minio.sh")));
}

TEST_F(MinioFaultsTest, AStopEndsADownloadUnderWayAndLeavesNothing) {
  const std::string data = Bytes(2 << 20, 11);
  S3ObjectStore direct(Config(), TestStoreOptions());
  ASSERT_OK(direct.Put("stop/big", data));
  // 64 KiB a second and no pacing of our own: the download, unstopped,
  // would take 32 s.
  ThrottledProxy slow(minio_->port(), 64 << 10);
  S3Config config = Config();
  config.endpoint = slow.endpoint();
  ObjectStoreOptions options = TestStoreOptions();
  std::atomic<bool> stop{false};
  options.stop = &stop;
  S3ObjectStore store(config, options);
  ScratchDir dir;
  DownloadOptions expect;
  expect.expected_size = data.size();
  absl::Status status;
  std::thread download(
      [&] { status = store.GetToFile("stop/big", dir.File("dest"), expect); });
  // Stopped once part of the object has come.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (slow.relayed() < (128u << 10) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(slow.relayed(), 128u << 10) << "the download did not start";
  stop = true;
  download.join();
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kCancelled,
                               HasSubstr("stopped before the end")));
  EXPECT_LT(slow.relayed(), data.size());
  // Neither the destination nor a staging file beside it.
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

}  // namespace
}  // namespace roost::testing
