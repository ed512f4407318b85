// AwsCredentialsStandin: tests/harness/aws_credentials_standin.py as a child
// process: EC2 instance metadata (IMDSv2), a container credentials endpoint
// and STS AssumeRoleWithWebIdentity on one loopback port, each handing out
// real temporary credentials of a MinioServer (MinIO's own STS), with a
// short Expiration so that clients renew them within a test. Stopped when
// the object goes away.
//
// Example:
//   auto standin = AwsCredentialsStandin::Start(*SharedMinio(), {});
//   ::setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT",
//            (*standin)->endpoint().c_str(), 1);
//   ... EXPECT_GE((*standin)->Hits("imds"), 1);
#ifndef ROOST_TESTS_HARNESS_AWS_CREDENTIALS_STANDIN_H_
#define ROOST_TESTS_HARNESS_AWS_CREDENTIALS_STANDIN_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/harness/minio_server.h"
#include "tests/harness/test_util.h"

namespace roost::testing {

class AwsCredentialsStandin {
 public:
  struct Options {
    // The Expiration reported, in seconds from each answer. The default
    // value is 900 (the real lifetime).
    int expires_in = 900;
    // When not empty, the container endpoint answers 403 unless the
    // Authorization header is this. The default value is "".
    std::string container_token;
  };
  static absl::StatusOr<std::unique_ptr<AwsCredentialsStandin>> Start(
      const MinioServer& minio, const Options& options);
  ~AwsCredentialsStandin();
  AwsCredentialsStandin(const AwsCredentialsStandin&) = delete;
  AwsCredentialsStandin& operator=(const AwsCredentialsStandin&) = delete;

  std::string endpoint() const;  // "http://127.0.0.1:PORT"
  // The container endpoint's URL (AWS_CONTAINER_CREDENTIALS_FULL_URI).
  std::string container_url() const { return endpoint() + "/container/v1"; }

  // Requests of a kind so far: "imds_token", "imds_role", "imds",
  // "container", "sts"; -1 when the stand-in did not answer.
  int Hits(const std::string& kind) const;
  // The web identity tokens, and container Authorization headers, seen.
  std::vector<std::string> WebTokens() const;
  std::vector<std::string> ContainerAuthorizations() const;
  // The next `n` answers of `kind` ("imds", "container", "sts") are 500s.
  void FailNext(const std::string& kind, int n) const;

 private:
  AwsCredentialsStandin() = default;
  std::string Stats() const;

  ScratchDir dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace roost::testing

#endif  // ROOST_TESTS_HARNESS_AWS_CREDENTIALS_STANDIN_H_
