// AWS credentials as the clouds give them: the default credential chain of
// the AWS SDKs, and temporary credentials renewed before they expire.
//
// The chain, in the SDKs' order (the first source configured here wins and
// stays the source for the life of the provider):
//   1. environment   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
//                    AWS_SESSION_TOKEN
//   2. shared files  AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials), then
//                    AWS_CONFIG_FILE (~/.aws/config), profile AWS_PROFILE
//                    ("default"): static keys and a session token
//   3. web identity  AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN
//                    (AWS_ROLE_SESSION_NAME): STS AssumeRoleWithWebIdentity,
//                    the token file read again for every renewal (EKS IRSA)
//   4. container     AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or _FULL_URI,
//                    with AWS_CONTAINER_AUTHORIZATION_TOKEN(_FILE) (ECS,
//                    EKS Pod Identity)
//   5. instance      EC2 instance metadata, IMDSv2 (unless
//      metadata      AWS_EC2_METADATA_DISABLED=true)
// A source that is not configured is passed over, and says why; the first
// that is configured must give credentials, or the chain fails with a
// message listing what every source said.
//
// Renewal: credentials with an expiration are fetched again from their
// source once less than min(5 minutes, a fifth of their lifetime) remains.
// One thread renews at a time while the others keep using the old ones; a
// renewal that fails is logged and counted, and the old credentials serve
// until they really expire (renewal is tried again every few seconds, and
// not more often once they have expired).
//
// Thread-safety: AwsCredentialsProvider may be used from many threads.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(std::shared_ptr<AwsCredentialsProvider> p,
//                          DefaultAwsCredentials());
//   ROOST_ASSIGN_OR_RETURN(AwsCredentials now, p->Current());
#ifndef ROOST_REPOSITORY_AWS_CREDENTIALS_H_
#define ROOST_REPOSITORY_AWS_CREDENTIALS_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace roost {

using SystemClock = std::chrono::system_clock;

struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // "" when none
  // When they stop working; unset for long-lived keys.
  std::optional<SystemClock::time_point> expiration;
};

// The environment the chain reads: the value of a variable, "" when unset.
using AwsEnvironment = std::function<std::string(std::string_view name)>;
// getenv(3).
AwsEnvironment ProcessEnvironment();

// One source of the chain (aws_credential_sources.h has them).
class AwsCredentialSource {
 public:
  virtual ~AwsCredentialSource() = default;
  // How messages name it: "web identity (role arn:aws:iam::1:role/r)".
  virtual std::string Describe() const = 0;
  // Fresh credentials; an error names what failed (without Describe()).
  virtual absl::StatusOr<AwsCredentials> Fetch() = 0;
};

class AwsCredentialsProvider {
 public:
  // Where log lines go (credentials found, renewals that failed); none by
  // default.
  using LogFn = std::function<void(const std::string& line)>;

  // Runs the chain over `env`. The error (InvalidArgument for a bad file
  // or setting, PermissionDenied when a source refused, Unavailable when
  // none answered) lists what each source said.
  static absl::StatusOr<std::shared_ptr<AwsCredentialsProvider>> FromChain(
      const AwsEnvironment& env, LogFn log = nullptr);
  // Credentials that never change (tests, and callers that have keys).
  static std::shared_ptr<AwsCredentialsProvider> Fixed(
      AwsCredentials credentials);
  static std::shared_ptr<AwsCredentialsProvider> Fixed(
      std::string access_key_id, std::string secret_access_key);

  AwsCredentialsProvider(std::unique_ptr<AwsCredentialSource> source,
                         AwsCredentials first, LogFn log);
  AwsCredentialsProvider(const AwsCredentialsProvider&) = delete;
  AwsCredentialsProvider& operator=(const AwsCredentialsProvider&) = delete;

  // The credentials to sign with now, renewed first when due (see the top
  // of this file). PermissionDenied naming the source when they have
  // expired and could not be renewed.
  absl::StatusOr<AwsCredentials> Current();

  // "environment", "web identity (role ...)", ...
  std::string source() const { return source_name_; }
  // When the current credentials expire, in seconds since the Unix epoch;
  // 0 for long-lived ones.
  double expiry_unix_seconds() const;
  // Renewals that failed, and that succeeded, so far.
  uint64_t refresh_failures() const { return refresh_failures_.load(); }
  uint64_t refreshes() const { return refreshes_.load(); }

 private:
  // Fetches from the source; `refresh_mu_` held.
  absl::Status Renew();
  void SetLocked(AwsCredentials credentials);  // mu_ held
  absl::Status ExpiredLocked() const;          // mu_ held

  const std::unique_ptr<AwsCredentialSource> source_;  // null: fixed
  const std::string source_name_;
  const LogFn log_;
  std::mutex refresh_mu_;  // one renewal at a time
  mutable std::mutex mu_;  // guards the fields below
  AwsCredentials current_;
  SystemClock::time_point renew_at_;      // when expiration is set
  SystemClock::time_point next_attempt_;  // after a failed renewal
  std::string last_error_;                // of the last failed renewal
  std::atomic<uint64_t> refresh_failures_{0};
  std::atomic<uint64_t> refreshes_{0};
};

// The process's provider: the chain over the process environment, run on
// first use, then shared (run again on a later call if it failed, or if
// one of the variables the chain reads has changed since).
absl::StatusOr<std::shared_ptr<AwsCredentialsProvider>> DefaultAwsCredentials();
// The process's provider if DefaultAwsCredentials() found one; else null.
std::shared_ptr<AwsCredentialsProvider> DefaultAwsCredentialsIfFound();
// Where the process's provider logs (set before the first use; a program's
// main sets it). The default is nowhere.
void SetAwsCredentialsLog(AwsCredentialsProvider::LogFn log);

// The region: AWS_REGION, else AWS_DEFAULT_REGION, else the region of the
// profile in the config file, else "us-east-1". InvalidArgument for a
// malformed config file (FILE:LINE) or a name that is not a region.
absl::StatusOr<std::string> AwsRegion(const AwsEnvironment& env);

}  // namespace roost

#endif  // ROOST_REPOSITORY_AWS_CREDENTIALS_H_
