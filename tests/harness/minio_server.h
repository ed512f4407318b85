// MinioServer: a real MinIO (the S3-compatible store) on a loopback port for
// the object-storage tests, with its own temporary data directory, its own
// root credentials and one bucket, stopped (and its data removed) when the
// object goes away.
//
// The binary is the one scripts/install-minio.sh builds: $ROOST_MINIO when
// set, else the path CMake was configured with (ROOST_MINIO_BINARY, the
// install script's cache). A missing binary is a test failure saying to run
// scripts/install-minio.sh, never a skip.
//
// SharedMinio() starts one per test binary on first use and stops it when
// the tests end.
//
// Example:
//   MinioServer* minio = SharedMinio();
//   ASSERT_NE(minio, nullptr) << MinioStartError();
//   minio->SetEnvironment();  // AWS_* for OpenObjectStore
//   auto store = OpenObjectStore(StrCat("s3://", minio->bucket(), "/t1"));
#ifndef ROOST_TESTS_HARNESS_MINIO_SERVER_H_
#define ROOST_TESTS_HARNESS_MINIO_SERVER_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tests/harness/test_util.h"

namespace roost::testing {

class MinioServer {
 public:
  // Starts MinIO and creates the bucket; the error says what went wrong
  // (with the end of MinIO's log). On `port` when given (a test that
  // starts a server against a store not up yet), else on a free one.
  static absl::StatusOr<std::unique_ptr<MinioServer>> Start(int port = 0);
  ~MinioServer();
  MinioServer(const MinioServer&) = delete;
  MinioServer& operator=(const MinioServer&) = delete;

  std::string endpoint() const;  // "http://127.0.0.1:PORT"
  int port() const { return port_; }
  const std::string& bucket() const { return bucket_; }
  const std::string& access_key() const { return access_key_; }
  const std::string& secret_key() const { return secret_key_; }

  // Temporary credentials from MinIO's STS (AssumeRole with the root
  // credentials), for testing AWS_SESSION_TOKEN.
  struct TemporaryCredentials {
    std::string access_key;
    std::string secret_key;
    std::string session_token;
  };
  absl::StatusOr<TemporaryCredentials> AssumeRole() const;

  // Sets AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION and
  // AWS_ENDPOINT_URL for this server, unsets AWS_SESSION_TOKEN and
  // AWS_ENDPOINT_URL_S3, and turns the rest of the credential chain off
  // (shared files at paths that do not exist, AWS_EC2_METADATA_DISABLED,
  // no web identity or container variables).
  void SetEnvironment() const;

 private:
  MinioServer() = default;
  absl::Status Launch(int port);
  absl::Status CreateBucket() const;
  void Stop();

  ScratchDir dir_;
  pid_t pid_ = -1;
  int port_ = 0;
  std::string bucket_ = "roost-test";
  std::string access_key_ = "roost-test-admin";
  std::string secret_key_ = "roost-test-secret-0123";
};

// The path of the MinIO binary the tests use.
std::string MinioBinary();

// The MinIO of this test binary, started on first use; nullptr if it could
// not be started (MinioStartError() then says why).
MinioServer* SharedMinio();
const std::string& MinioStartError();

// A port on 127.0.0.1 that nothing listens on now.
int UnusedLoopbackPort();

}  // namespace roost::testing

#endif  // ROOST_TESTS_HARNESS_MINIO_SERVER_H_
