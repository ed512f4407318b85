// The roost-load commands that read a table already built, a file or a
// version directory (whole, or a server's one-shard copy), without a
// server:
//
//   roost-load inspect TABLE [--shard I]        its header and statistics
//   roost-load verify TABLE [--shard I]         every checksum, the MANIFEST
//   roost-load get TABLE KEY... [--shard I]     keys looked up, as roost-get
//
// A sharded version is read through sharded_version.h: the shards --shard
// names, or those whose files are there.
//
// Example:
//   Command get = AddGetCommand(app);
//   ... parse ...
//   if (get.app->parsed()) return get.run();
#ifndef ROOST_LOADER_READ_COMMANDS_H_
#define ROOST_LOADER_READ_COMMANDS_H_

#include "loader/command.h"

namespace roost {

// Each adds its subcommand to `app`.
Command AddInspectCommand(CLI::App& app);
Command AddVerifyCommand(CLI::App& app);
Command AddGetCommand(CLI::App& app);

}  // namespace roost

#endif  // ROOST_LOADER_READ_COMMANDS_H_
