// What this build of roost is: the project version (CMakeLists.txt's
// project()) and the git revision it was configured from. Every binary's
// --version prints them, and roost-server exports them as
// roost_build_info{version,revision}.
//
// The revision is read when CMake configures (scripts/build.sh configures
// on every build; a commit or checkout makes the next ninja run configure
// again): the full commit hash, or "unknown" outside a git checkout unless
// -DROOST_REVISION=... gives one. Its definitions are generated
// (util/build_info.cc.in), in a library of their own, so that a new
// revision recompiles one file.
//
// Example:
//   VersionLine("roost-load")  // "roost-load 0.1.0 (revision 3cb8aa4...)"
#ifndef ROOST_UTIL_BUILD_INFO_H_
#define ROOST_UTIL_BUILD_INFO_H_

#include <string>
#include <string_view>

namespace roost {

// "0.1.0".
std::string_view BuildVersion();
// A git commit hash (40 hex digits), or "unknown".
std::string_view BuildRevision();
// "PROGRAM VERSION (revision REVISION)", what --version prints.
std::string VersionLine(std::string_view program);

}  // namespace roost

#endif  // ROOST_UTIL_BUILD_INFO_H_
