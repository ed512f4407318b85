// The sources of the AWS default credential chain (aws_credentials.h runs
// them in order). Each factory looks at the environment only: NotFound
// (whose message says why, e.g. "AWS_ROLE_ARN is not set") when the source
// is not configured here, so that the chain goes on; InvalidArgument when
// it is configured wrongly; else the source, whose Fetch asks for
// credentials (a file, STS, an HTTP endpoint).
//
//   environment     static keys from AWS_ACCESS_KEY_ID etc.
//   shared files    the profile's aws_access_key_id, aws_secret_access_key,
//                   aws_session_token (credentials file, then config file);
//                   a profile that assumes a role, runs a process or uses
//                   SSO is InvalidArgument (roost does not do those)
//   web identity    POST Action=AssumeRoleWithWebIdentity to
//                   AWS_ENDPOINT_URL_STS (else AWS_ENDPOINT_URL, else
//                   https://sts.REGION.amazonaws.com), unsigned; the XML
//                   answer read with pugixml
//   container       GET the credentials URI, with the Authorization header
//   instance        IMDSv2: PUT /latest/api/token, then GET
//     metadata      /latest/meta-data/iam/security-credentials/[ROLE];
//                   1 s to connect, so that a machine without IMDS fails
//                   fast
//
// Thread-safety: Fetch is called by one thread at a time (the provider's
// renewal lock); the factories are pure.
#ifndef ROOST_REPOSITORY_AWS_CREDENTIAL_SOURCES_H_
#define ROOST_REPOSITORY_AWS_CREDENTIAL_SOURCES_H_

#include <memory>

#include "absl/status/statusor.h"
#include "repository/aws_credentials.h"

namespace roost {

using AwsSourceOrNone = absl::StatusOr<std::unique_ptr<AwsCredentialSource>>;

AwsSourceOrNone EnvironmentSource(const AwsEnvironment& env);
AwsSourceOrNone SharedFilesSource(const AwsEnvironment& env);
AwsSourceOrNone WebIdentitySource(const AwsEnvironment& env);
AwsSourceOrNone ContainerSource(const AwsEnvironment& env);
AwsSourceOrNone InstanceMetadataSource(const AwsEnvironment& env);

// The paths of the shared files: AWS_SHARED_CREDENTIALS_FILE else
// $HOME/.aws/credentials; AWS_CONFIG_FILE else $HOME/.aws/config.
std::string AwsCredentialsFilePath(const AwsEnvironment& env);
std::string AwsConfigFilePath(const AwsEnvironment& env);
// AWS_PROFILE, else "default".
std::string AwsProfileName(const AwsEnvironment& env);

}  // namespace roost

#endif  // ROOST_REPOSITORY_AWS_CREDENTIAL_SOURCES_H_
