// The AWS shared credentials and config files (~/.aws/credentials,
// ~/.aws/config): the profile a process uses, read the way the AWS SDKs
// read it, with every malformed line reported as FILE:LINE.
//
// The format is INI: "[default]" or "[NAME]" in the credentials file,
// "[default]" or "[profile NAME]" in the config file, then "key = value"
// lines; whole-line comments start with '#' or ';'. An indented line
// belongs to the key above it (the config file's nested "s3 =" settings)
// and is skipped: roost reads no nested setting. (Written here rather than
// with a generic INI library: those treat indented lines as continuations
// of values and give no line for a bad one.)
//
// Thread-safety: the functions are pure but read files.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(AwsProfile p,
//       ReadAwsProfile("/root/.aws/config", "prod", /*config_file=*/true));
//   if (p.found) region = p.Value("region");
#ifndef ROOST_REPOSITORY_AWS_CONFIG_FILE_H_
#define ROOST_REPOSITORY_AWS_CONFIG_FILE_H_

#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace roost {

// One profile of one file.
struct AwsProfile {
  std::string path;    // the file it came from
  bool found = false;  // false: the file or the profile is missing
  // Keys (lowercased) to their values and line numbers.
  std::map<std::string, std::pair<std::string, int>> values;

  // The value of `key`, or "" when not set.
  std::string Value(std::string_view key) const;
  // "PATH:LINE" of `key`, or PATH when it is not set.
  std::string Where(std::string_view key) const;
};

// The profile `profile` of the file at `path` (in a config file, when
// `config_file`, a profile other than "default" is "[profile NAME]").
// found=false when the file or the profile does not exist; InvalidArgument
// "PATH:LINE: what is wrong" for a line that is not a section, a
// "key = value", a comment or blank; PermissionDenied when it cannot be
// read.
absl::StatusOr<AwsProfile> ReadAwsProfile(const std::string& path,
                                          std::string_view profile,
                                          bool config_file);

}  // namespace roost

#endif  // ROOST_REPOSITORY_AWS_CONFIG_FILE_H_
