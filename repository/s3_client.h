// S3Client: signed HTTP requests to one S3 bucket over libcurl, with
// retries. The S3 operations of S3ObjectStore are built on its Send.
//
// Signing is libcurl's own AWS SigV4 (CURLOPT_AWS_SIGV4, service "s3"):
// every request carries "x-amz-content-sha256: UNSIGNED-PAYLOAD", which
// libcurl (7.87 and later) takes as the payload hash it signs, so that a
// body streamed from a file need not be read twice; the bytes are checked
// against their XXH3-64 checksums after they arrive instead. Every attempt
// signs with the credentials S3Config::credentials gives at that moment
// (renewed temporary ones included); a session token goes in
// x-amz-security-token.
//
// Stopping: with ObjectStoreOptions::stop, a request ends with Cancelled
// within about a second of the flag turning true (a progress callback ends
// the transfer; backoffs wait in slices) and is not retried.
//
// Retries: a connection failure, a timeout, a 5xx, and S3's throttling and
// conflict answers (429, SlowDown, RequestTimeout, ConditionalRequestConflict)
// are retried up to ObjectStoreOptions::max_attempts times with exponential
// backoff and jitter; any other 4xx is final at once. A non-2xx answer
// becomes a status whose code follows the HTTP status and whose message
// holds S3's error Code and Message from the XML body.
//
// Thread-safety: Send may be called from many threads; each call takes a
// curl handle from a small pool (whose connections are reused).
#ifndef ROOST_REPOSITORY_S3_CLIENT_H_
#define ROOST_REPOSITORY_S3_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "repository/aws_credentials.h"
#include "repository/object_store.h"

namespace roost {

// Where one bucket is and who asks.
struct S3Config {
  std::string bucket;
  // The key prefix of the store's root, without leading or trailing '/';
  // "" for the whole bucket.
  std::string prefix;
  // The default value is "us-east-1".
  std::string region = "us-east-1";
  // "" for AWS itself (virtual-hosted https://BUCKET.s3.REGION.amazonaws.com);
  // otherwise the base URL of an S3-compatible store such as MinIO
  // ("http://127.0.0.1:9000"), addressed path-style (ENDPOINT/BUCKET/KEY).
  std::string endpoint;
  // Who asks: each request signs with the provider's current credentials.
  // Required.
  std::shared_ptr<AwsCredentialsProvider> credentials;

  // From the environment: credentials from the AWS default chain (the
  // process's DefaultAwsCredentials()), the region as AwsRegion() finds it,
  // AWS_ENDPOINT_URL_S3 (else AWS_ENDPOINT_URL). An error naming what is
  // missing or bad (for credentials, what each source of the chain said).
  static absl::StatusOr<S3Config> FromEnvironment(std::string bucket,
                                                  std::string prefix);
};

struct S3Request {
  const char* method = "GET";  // GET, HEAD, PUT, POST or DELETE
  // The whole key in the bucket (prefix included); "" for the bucket.
  std::string key;
  // Query parameters, sent sorted and encoded as SigV4 canonicalises them.
  std::vector<std::pair<std::string, std::string>> query;
  std::vector<std::string> headers;  // "Name: value"
  // The body: `body`, or `body_length` bytes of `body_fd` from
  // `body_offset` (read again for each attempt).
  std::string_view body;
  int body_fd = -1;
  uint64_t body_offset = 0;
  uint64_t body_length = 0;
  // Receives the body of a 2xx answer in pieces; an error stops the
  // transfer and is returned as is (not retried). When empty the body is
  // collected into S3Response::body.
  std::function<absl::Status(std::string_view)> sink;
  // Called before every attempt (to restart what `sink` wrote).
  std::function<absl::Status()> before_attempt;
};

struct S3Response {
  long http_status = 0;
  std::string body;  // unless S3Request::sink took it
  std::string etag;  // without quotes; "" when none
  uint64_t content_length = 0;
};

class S3Client {
 public:
  S3Client(S3Config config, const ObjectStoreOptions& options);
  ~S3Client();
  S3Client(const S3Client&) = delete;
  S3Client& operator=(const S3Client&) = delete;

  const S3Config& config() const { return config_; }
  const ObjectStoreOptions& options() const { return options_; }

  // Sends `request` until it gets a final answer. `what` names the
  // operation and the object for messages ("PUT s3://b/p/users/MANIFEST").
  absl::StatusOr<S3Response> Send(const S3Request& request,
                                  std::string_view what);

  // The URL of `key` with `query` (exposed for tests and messages).
  std::string Url(
      std::string_view key,
      const std::vector<std::pair<std::string, std::string>>& query) const;

 private:
  // ObjectStoreOptions::stop is set; and the status of a request it ended.
  bool Stopping() const;
  static absl::Status Stopped(std::string_view what);
  void* TakeHandle();
  void ReturnHandle(void* handle);
  // One attempt; `retry` says whether a failure may be retried.
  absl::StatusOr<S3Response> SendOnce(const S3Request& request,
                                      std::string_view what, bool* retry);

  const S3Config config_;
  const ObjectStoreOptions options_;
  std::mutex mu_;
  std::vector<void*> handles_;  // idle CURL easy handles
};

// The AWS SigV4 URI encoding: every byte but A-Z a-z 0-9 - _ . ~ as %XX
// (and '/' too unless `keep_slash`).
std::string AwsUriEncode(std::string_view s, bool keep_slash);

}  // namespace roost

#endif  // ROOST_REPOSITORY_S3_CLIENT_H_
