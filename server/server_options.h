// roost-server's settings: flags, also readable from a config file (TOML or
// INI, `--config FILE`; flags on the command line win).
//
// Example config file:
//   data-dir = "/var/lib/roost"
//   listen = "0.0.0.0:50051"
//   keep-versions = 3
#ifndef ROOST_SERVER_SERVER_OPTIONS_H_
#define ROOST_SERVER_SERVER_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "storage/file.h"

namespace roost {

struct ServerOptions {
  // Where tables are published: DATA_DIR/<table>/v<N>/. Required.
  std::string data_dir;
  // The lookup service's address; port 0 picks a free port. The default
  // value is "127.0.0.1:50051".
  std::string listen = "127.0.0.1:50051";
  // The admin service's address (rollback); empty turns it off. The default
  // value is "127.0.0.1:50052".
  std::string admin_listen = "127.0.0.1:50052";
  // The Prometheus endpoint's address (/metrics); empty turns it off. The
  // default value is "127.0.0.1:9464".
  std::string metrics_listen = "127.0.0.1:9464";
  // How tables are brought into memory. The default value is kMmap.
  LoadMode load_mode = LoadMode::kMmap;
  // Verify every checksum of a version before serving it (the header is
  // always checked). The default value is true.
  bool verify_checksums = true;
  // Rescan the data directory this often, whether or not inotify reported
  // anything. The default value is 5 seconds.
  double poll_interval_seconds = 5;
  // Watch the data directory with inotify. The default value is true.
  bool inotify = true;
  // Versions kept on disk per table, newest first (the serving and pinned
  // ones are always kept); older ones are deleted. 0 keeps all. The default
  // value is 0.
  uint32_t keep_versions = 0;
  // Most keys in one MultiGet. The default value is 10000.
  uint32_t max_batch = 10000;
  // Longest key accepted, in bytes. The default value is 65536.
  uint32_t max_key_size = 65536;
  // Largest gRPC message received or sent, in bytes. The default value is
  // 64 MiB.
  uint32_t max_message_size = 64 << 20;
  // On SIGTERM/SIGINT: keep serving this long with health NOT_SERVING, so
  // that load balancers move away. The default value is 5 seconds.
  double drain_seconds = 5;
  // Then wait this long for in-flight RPCs before cancelling them. The
  // default value is 10 seconds.
  double shutdown_timeout_seconds = 10;
  // Refresh roost_table_resident_bytes (mincore) this often. The default
  // value is 10 seconds.
  double resident_refresh_seconds = 10;
  // Serve gRPC server reflection. The default value is true.
  bool reflection = true;
};

// Parses the command line (and the --config file it names) into *options.
// Returns an exit code when the process should stop here: 0 after --help,
// 64 (EX_USAGE) after printing what was wrong.
std::optional<int> ParseServerOptions(int argc, char** argv,
                                      ServerOptions* options);

}  // namespace roost

#endif  // ROOST_SERVER_SERVER_OPTIONS_H_
