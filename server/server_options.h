// roost-server's settings: flags, also readable from a config file (TOML or
// INI, `--config FILE`; flags on the command line win).
//
// Example config file:
//   data-dir = "/var/lib/roost"
//   listen = "0.0.0.0:50051"
//   keep-versions = 3
#ifndef ROOST_SERVER_SERVER_OPTIONS_H_
#define ROOST_SERVER_SERVER_OPTIONS_H_

#include <optional>

#include "server/limit_options.h"
#include "server/listener_options.h"
#include "server/metrics_options.h"
#include "server/repository_options.h"
#include "server/security_options.h"
#include "server/table_options.h"

namespace roost {

// Each group of flags is a struct of its own, beside what it configures,
// with the function that adds its flags (AddTableFlags, ...); ServerOptions
// is all of them, so that a setting is read as `options.max_batch`.
// --help lists the groups in the order ParseServerOptions adds them:
// Tables, Listeners, Table repository, Limits, Connections, Shutdown,
// Metrics, Security.
struct ServerOptions : TableOptions,
                       ListenerOptions,
                       LimitOptions,
                       ConnectionOptions,
                       ShutdownOptions,
                       MetricsOptions,
                       SecurityOptions {
  // Pulling this server's shard of each table from a table repository
  // (--repository and its flags: repository_options.h).
  RepositoryOptions repository;
};

// Parses the command line (and the --config file it names) into *options.
// Returns an exit code when the process should stop here: 0 after --help,
// 64 (EX_USAGE) after printing what was wrong.
std::optional<int> ParseServerOptions(int argc, char** argv,
                                      ServerOptions* options);

}  // namespace roost

#endif  // ROOST_SERVER_SERVER_OPTIONS_H_
