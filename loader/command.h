// What roost-load's subcommands share: the shape each one is added in, its
// exit codes (listed in `roost-load --help`), and how an error is
// reported.
//
// Each subcommand is added to the program's CLI::App by its own
// Add<Name>Command (build_command.h, read_commands.h,
// repository_commands.h), which defines its flags, bound to state the
// command owns, beside what it does with them; main() adds them in the
// order --help lists them, parses, and runs the one given.
//
// Example:
//   Command AddEchoCommand(CLI::App& app) {
//     auto text = std::make_shared<std::string>();
//     CLI::App* c = app.add_subcommand("echo", "Print TEXT.");
//     c->add_option("text", *text, "What to print")->required();
//     return {c, [text] { fmt::print("{}\n", *text); return kExitOk; }};
//   }
//
// Thread-safety: none needed; commands run in main()'s thread.
#ifndef ROOST_LOADER_COMMAND_H_
#define ROOST_LOADER_COMMAND_H_

#include <sysexits.h>

#include <functional>

#include "absl/status/status.h"

namespace CLI {
class App;
}

namespace roost {

// Exit codes: sysexits.h's, and 1 for `get`'s missing keys.
inline constexpr int kExitOk = 0;
inline constexpr int kExitNotFound = 1;  // `get`: some key is not in the table
inline constexpr int kExitUsage = EX_USAGE;
inline constexpr int kExitBadInput = EX_DATAERR;  // bad input, corrupt table
inline constexpr int kExitIo = EX_IOERR;

// A subcommand, as its Add<Name>Command added it: the CLI11 subcommand
// (owned by the program's CLI::App) and what running it does, once the
// command line is parsed, returning the exit code. `run` owns the state
// the subcommand's flags are bound to.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// The exit code of an error. `repository`: the error came from a table
// repository, where Unavailable is an unreachable store (an I/O error),
// not a version still arriving.
int ExitCodeFor(const absl::Status& status, bool repository = false);

// Reports `status` (on stderr, and as JSON on stdout with `json`) and
// returns `code`.
int Report(const absl::Status& status, int code, bool json);

// Reports an error with ExitCodeFor's code.
int Fail(const absl::Status& status, bool json = false,
         bool repository = false);

// Reports a bad flag, flag value or combination of flags (exit 64).
int Usage(const absl::Status& status, bool json = false);

}  // namespace roost

#endif  // ROOST_LOADER_COMMAND_H_
