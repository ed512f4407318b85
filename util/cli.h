// What the four command-line programs (roost-load, roost-server, roost-get,
// roost-admin) share around CLI11, so that they read and refuse their
// arguments alike: sizes with units, a program-wide --version that never
// swallows a subcommand's arguments, and parse errors that name the
// argument nobody took and suggest the closest flag or subcommand.
//
// Example:
//   CLI::App app{"roost-load: ...", "roost-load"};
//   AddVersionFlag(app, VersionLine("roost-load"));
//   app.add_option("--memory-limit", bytes)->transform(SizeValue());
//   if (std::optional<int> exit = ParseCommandLine(app, argc, argv)) {
//     return *exit;  // 0 after --help or --version, 64 after an error
//   }
//
// Thread-safety: none needed; these run in main() before any thread.
#ifndef ROOST_UTIL_CLI_H_
#define ROOST_UTIL_CLI_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace roost {

// "1073741824", "64M", "1G", "512k", "2GiB": at most 2^50 bytes (1 PiB).
// Units are powers of 1024 (k, M, G, T, P; with or without "i" and "B",
// any case). InvalidArgument names the text and what is expected.
absl::StatusOr<uint64_t> ParseSize(const std::string& text);

// A CLI11 transform for options whose value is a number of bytes: turns a
// size with a unit ("64M") into its bytes ("67108864") before the option's
// own checks (a CLI::Range) and conversion run; a bad size is refused with
// ParseSize's message.
//
// Example:
//   app.add_option("--max-message-size", bytes)
//       ->transform(SizeValue())
//       ->check(CLI::Range(1024u, 2147483647u));
CLI::Validator SizeValue();

// The one of `candidates` nearest to `word` by edit distance (insertions,
// deletions, substitutions and swaps of neighbours each cost 1; case is
// ignored), if it is near enough to be what was meant: at most one edit
// in a short word, up to three in a long one (a one-letter candidate only
// for a one-letter word); or the only candidate that begins with `word`
// (three characters at least). Ties go to the earlier candidate.
std::optional<std::string> ClosestMatch(
    std::string_view word, const std::vector<std::string>& candidates);

// Adds the program-wide flag --version to `app`: it prints `line` (on
// stdout) and exits 0, with other options around it or not; but given
// with a subcommand, or with an argument that nothing takes (`roost-admin
// --version v000003 wait ...`), it is a usage error, so that a version
// meant for a subcommand never turns a command into a silent exit 0.
// `hint`, if not empty, ends that error's message (where the value meant
// goes instead).
void AddVersionFlag(CLI::App& app, std::string line, std::string hint = "");

// Reports `error`, thrown by `app.parse`, and returns the exit code: 0
// after --help or --version (their text on stdout), 64 (EX_USAGE)
// otherwise, after "PROGRAM: MESSAGE" and a pointer to --help on stderr.
// An argument that no option or subcommand took is reported first, whatever
// CLI11 found wrong because of it ("--input is required" for a misspelt
// --input): "unknown flag --inptu (did you mean --input?)", "unknown
// subcommand \"biuld\" (did you mean build?)", naming the subcommand whose
// flags were searched.
int ReportParseError(CLI::App& app, const CLI::ParseError& error);

// app.parse(argc, argv), with ReportParseError's reports: std::nullopt when
// the program goes on, else the exit code.
std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv);

}  // namespace roost

#endif  // ROOST_UTIL_CLI_H_
