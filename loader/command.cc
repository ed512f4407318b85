#include "loader/command.h"

#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "util/json.h"

namespace roost {

int ExitCodeFor(const absl::Status& status, bool repository) {
  if (repository && absl::IsUnavailable(status)) return kExitIo;
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kUnavailable:  // a version still arriving
      return kExitBadInput;
    default:
      return kExitIo;
  }
}

int Report(const absl::Status& status, int code, bool json) {
  if (json) {
    OrderedJson j;
    j["status"] = "error";
    j["error"] = std::string(status.message());
    j["exit_code"] = code;
    fmt::print("{}\n", DumpJson(j));
  }
  fmt::print(stderr, "roost-load: {}\n", std::string(status.message()));
  return code;
}

int Fail(const absl::Status& status, bool json, bool repository) {
  return Report(status, ExitCodeFor(status, repository), json);
}

int Usage(const absl::Status& status, bool json) {
  return Report(status, kExitUsage, json);
}

}  // namespace roost
