// roost-load: builds table files from bulk input and publishes them, inspects
// and verifies them, and looks keys up offline. See `roost-load --help` and
// docs/operations/loading.md. Each subcommand defines its flags beside what it
// does (command.h); main() adds them and runs the one given.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <optional>

#include "loader/build_command.h"
#include "loader/command.h"
#include "loader/read_commands.h"
#include "loader/repository_commands.h"
#include "loader/shard_commands.h"
#include "repository/aws_credentials.h"
#include "util/build_info.h"
#include "util/cli.h"

int main(int argc, char** argv) {
  using namespace roost;
  CLI::App app{
      "roost-load: builds roost tables from bulk input and publishes them, "
      "inspects and verifies them, and looks keys up offline.\n"
      "Exit codes: 0 ok, 1 key not found (get), 64 bad usage (flags, flag "
      "values and their combinations), 65 bad input data (a malformed "
      "record; input cut short, as a last line without its newline; input "
      "of another format) or a corrupt table, "
      "74 I/O error (also: a table repository unreachable, refusing the "
      "credentials, without the bucket, or failing an upload).",
      "roost-load"};
  app.footer(
      "Examples:\n"
      "  roost-load build -i users.tsv -o users.sst\n"
      "  roost-load build -i 'part-*.tsv.gz' --data-dir /srv/roost --table "
      "users --max-shrink 10%\n"
      "  roost-load build -i users.tsv --data-dir /srv/roost --table users "
      "--shards 4\n"
      "  roost-load build -i records.bin --input-format fixed --key-size 8 "
      "--value-size 8 --format block --compression zstd -o r.sst\n"
      "  roost-load build -i users.tsv --repository s3://tables/prod "
      "--table users --shards 4 --keep-versions 5\n"
      "  roost-load versions --repository s3://tables/prod --table users\n"
      "  roost-load rollback --repository s3://tables/prod --table users "
      "--to v3\n"
      "  roost-load claim --repository s3://tables/prod --table users\n"
      "  roost-load publish --repository s3://tables/prod --table users "
      "--version v7\n"
      "  roost-load inspect /srv/roost/users\n"
      "  roost-load verify /srv/roost/users/v000003\n"
      "  roost-load get --key-encoding hex /srv/roost/users 7573657231 "
      "00ff\n"
      "Run `roost-load COMMAND --help` for a command's flags.");
  AddVersionFlag(app, VersionLine("roost-load"));
  app.require_subcommand(1);
  // In the order --help lists them; each defines its own flags.
  const Command commands[] = {
      AddBuildCommand(app), AddInspectCommand(app),  AddVerifyCommand(app),
      AddGetCommand(app),   AddVersionsCommand(app), AddRollbackCommand(app),
      AddPruneCommand(app), AddClaimCommand(app),    AddPublishCommand(app),
  };
  if (std::optional<int> exit = ParseCommandLine(app, argc, argv)) {
    return *exit;
  }
  // Which source of the AWS chain gave a repository's credentials (build
  // --quiet and --json turn it off), and renewals that failed.
  SetAwsCredentialsLog([](const std::string& line) {
    fmt::print(stderr, "roost-load: {}\n", line);
  });
  for (const Command& command : commands) {
    if (command.app->parsed()) return command.run();
  }
  return kExitUsage;  // not reached: CLI11 requires one subcommand
}
