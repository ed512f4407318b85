#include "server/server_options.h"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "storage/str_cat.h"

namespace roost {

std::optional<int> ParseServerOptions(int argc, char** argv,
                                      ServerOptions* options) {
  constexpr int kExitUsage = 64;
  CLI::App app(
      "roost-server: serves the tables published under a data directory "
      "over gRPC (roost.v1.Lookup), picking up new versions without a "
      "restart.\n\nFlags may also come from a TOML or INI file given with "
      "--config (e.g. `keep-versions = 3`); the command line wins. Signals: "
      "SIGTERM or SIGINT drains and exits 0.",
      "roost-server");
  app.set_config("--config", "",
                 "Read flags from this file (TOML or INI: flag = value)");
  app.option_defaults()->always_capture_default();
  // A misspelt key in the config file is an error, not silently ignored.
  app.allow_config_extras(false);
  ServerOptions& o = *options;
  std::string load_mode = "mmap";
  app.add_option("--data-dir", o.data_dir,
                 "Serve every table under DIR (DIR/<table>/v<N>/, as "
                 "roost-load publishes)")
      ->required();
  app.add_option("--listen", o.listen,
                 "Lookup service address (HOST:PORT; port 0 picks one)");
  // Both take an empty value to turn the service off, written
  // `--admin-listen=`, `--admin-listen ''` or `--admin-listen` alone.
  const auto address_or_off = [&app](std::string name, std::string* address,
                                     std::string help) {
    app.add_option_function<std::vector<std::string>>(
           std::move(name),
           [address](const std::vector<std::string>& values) {
             *address = values.empty() ? std::string() : values.back();
           },
           std::move(help))
        ->expected(0, 1);
  };
  address_or_off("--admin-listen", &o.admin_listen,
                 "Admin service address (rollback); empty turns it off. "
                 "Default: 127.0.0.1:50052");
  address_or_off("--metrics-listen", &o.metrics_listen,
                 "Prometheus /metrics address; empty turns it off. Default: "
                 "127.0.0.1:9464");
  app.add_option("--load-mode", load_mode,
                 "How tables come into memory: mmap, mmap-locked (fault in "
                 "and mlock) or huge-pages (copy into transparent huge "
                 "pages)");
  app.add_option("--verify-checksums", o.verify_checksums,
                 "Verify every checksum of a version before serving it (the "
                 "header is always checked)");
  app.add_option("--poll-interval", o.poll_interval_seconds,
                 "Rescan the data directory every SECONDS, even without "
                 "inotify events")
      ->check(CLI::PositiveNumber);
  app.add_option("--inotify", o.inotify,
                 "Watch the data directory with inotify (else poll only)");
  app.add_option("--keep-versions", o.keep_versions,
                 "Keep the newest K complete versions of each table on disk "
                 "(and the serving and pinned ones); delete older ones. 0 "
                 "keeps all");
  app.add_option("--max-batch", o.max_batch, "Most keys in one MultiGet")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-key-size", o.max_key_size,
                 "Longest key accepted, in bytes")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-message-size", o.max_message_size,
                 "Largest gRPC message received or sent, in bytes")
      ->check(CLI::Range(1u, 2147483647u));
  app.add_option("--drain-period", o.drain_seconds,
                 "On SIGTERM/SIGINT, keep serving this many SECONDS with "
                 "health NOT_SERVING before refusing new RPCs")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--shutdown-timeout", o.shutdown_timeout_seconds,
                 "Then wait this many SECONDS for in-flight RPCs before "
                 "cancelling them")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--resident-refresh", o.resident_refresh_seconds,
                 "Refresh roost_table_resident_bytes every SECONDS")
      ->check(CLI::PositiveNumber);
  app.add_option("--reflection", o.reflection, "Serve gRPC server reflection");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : kExitUsage;
  }
  auto mode = ParseLoadMode(load_mode);
  if (!mode.ok()) {
    std::fprintf(stderr, "roost-server: --load-mode: %s\n",
                 std::string(mode.status().message()).c_str());
    return kExitUsage;
  }
  o.load_mode = *mode;
  return std::nullopt;
}

}  // namespace roost
