// The roost-load commands over a table repository, beside `build
// --repository`:
//
//   roost-load versions --repository URI --table T [--output-format json]
//   roost-load rollback --repository URI --table T --to v000003
//   roost-load prune    --repository URI --table T --keep-versions 3
//
// `versions` lists every version (complete or not, which one the pointer
// names, its files, keys and bytes, when it was claimed and published);
// `rollback` moves the pointer to a complete version (TableRepository::
// MovePointer); `prune` applies retention (repository/retention.h).
//
// Each Add*Command adds its subcommand to roost-load (command.h). Each
// Run* prints its result on stdout and returns OK, or returns the error
// for roost-load to report; Validate* returns the usage errors, found
// before the repository is opened.
//
// Example:
//   Command rollback = AddRollbackCommand(app);  // in main()
//   // or, without a command line:
//   RepositoryCommandFlags f{.repository = "s3://tables/prod",
//                            .table = "users", .to = "v3"};
//   if (auto s = ValidateRollback(f); !s.ok()) return Usage(s);
//   if (auto s = RunRollback(f); !s.ok()) return Fail(s);
#ifndef ROOST_LOADER_REPOSITORY_COMMANDS_H_
#define ROOST_LOADER_REPOSITORY_COMMANDS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "loader/command.h"

namespace roost {

struct RepositoryCommandFlags {
  std::string repository;
  std::string table;
  std::string output_format = "text";
  // rollback: "v000003", "v3" or "3".
  std::string to;
  // prune: as the flags give them (checked by ValidatePrune).
  std::string keep_versions;
  std::string abandoned_after = "24h";
};

// "v000003", "v3", "3" -> 3. InvalidArgument otherwise.
absl::StatusOr<uint64_t> ParseVersionArgument(const std::string& text);

// A --keep-versions count: a whole number from 1. InvalidArgument otherwise.
absl::StatusOr<uint64_t> ParseKeepVersions(const std::string& text);

// "90s", "30m", "24h", "7d", or seconds alone. InvalidArgument otherwise.
absl::StatusOr<int64_t> ParseDurationSeconds(const std::string& text);

// The usage errors of each command: a missing flag, a bad table name, a bad
// version, count or duration.
absl::Status ValidateVersions(const RepositoryCommandFlags& f);
absl::Status ValidateRollback(const RepositoryCommandFlags& f);
absl::Status ValidatePrune(const RepositoryCommandFlags& f);

// Each adds its subcommand to `app`: its flags, and a run that reports
// Validate*'s errors as usage errors (exit 64) and Run*'s as the
// repository's.
Command AddVersionsCommand(CLI::App& app);
Command AddRollbackCommand(CLI::App& app);
Command AddPruneCommand(CLI::App& app);

absl::Status RunVersions(const RepositoryCommandFlags& f);
absl::Status RunRollback(const RepositoryCommandFlags& f);
absl::Status RunPrune(const RepositoryCommandFlags& f);

}  // namespace roost

#endif  // ROOST_LOADER_REPOSITORY_COMMANDS_H_
