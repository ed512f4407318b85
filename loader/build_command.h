// `roost-load build`: its flags, read into a BuildJob (build_job.h) and
// checked before any input is opened, the build run, and its summary
// printed (text on stderr, or JSON on stdout).
//
// Example:
//   Command build = AddBuildCommand(app);
//   ... parse ...
//   if (build.app->parsed()) return build.run();
#ifndef ROOST_LOADER_BUILD_COMMAND_H_
#define ROOST_LOADER_BUILD_COMMAND_H_

#include "loader/command.h"

namespace roost {

// Adds `build` to `app`.
Command AddBuildCommand(CLI::App& app);

}  // namespace roost

#endif  // ROOST_LOADER_BUILD_COMMAND_H_
