#include "server/server_options.h"

#include <fmt/format.h>
#include <sysexits.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <string_view>

#include "server/config_file.h"
#include "server/repository_options.h"
#include "storage/partition.h"
#include "util/build_info.h"
#include "util/cli.h"
#include "util/str_cat.h"

namespace roost {

std::optional<int> ParseServerOptions(int argc, char** argv,
                                      ServerOptions* options) {
  constexpr int kExitUsage = EX_USAGE;
  CLI::App app(
      "roost-server: serves the tables published under a data directory "
      "over gRPC (roost.v1.Lookup), picking up new versions without a "
      "restart.\n\nFlags may also come from a TOML file given with "
      "--config (e.g. `keep-versions = 3`); the command line wins. Sizes in "
      "bytes take k, M and G (powers of 1024): --max-message-size 64M. "
      "Signals: SIGTERM or SIGINT drains and exits 0. Exit codes: 0 stopped "
      "by a signal, 1 cannot start (data directory, port, TLS files), 64 "
      "bad usage.",
      "roost-server");
  app.footer(
      "Examples:\n"
      "  roost-server --data-dir /srv/roost\n"
      "  roost-server --data-dir /srv/roost --listen 0.0.0.0:50051 "
      "--metrics-listen 0.0.0.0:9464 --keep-versions 3\n"
      "  roost-server --config /etc/roost/server.toml --drain-period 0\n"
      "  roost-server --data-dir /var/lib/roost --repository "
      "s3://tables/prod --shard 2 --listen 0.0.0.0:50051\n"
      "  roost-server --data-dir /srv/roost --tls-cert server.crt --tls-key "
      "server.key --tls-client-ca clients-ca.crt\n"
      "See docs/operations.md for every flag at length.");
  app.set_config("--config", "",
                 "Read flags from this TOML file (flag = value)")
      ->type_name("FILE");
  AddVersionFlag(app, VersionLine("roost-server"));
  auto config = std::make_shared<TomlConfig>();
  app.config_formatter(config);
  app.option_defaults()->always_capture_default();
  // A misspelt key in the config file is an error, not silently ignored.
  app.allow_config_extras(false);
  ServerOptions& o = *options;
  std::string load_mode = "mmap";
  // --help lists the flags in these groups, each group's flags in the
  // order they are added below.
  app.option_defaults()->group("Tables");
  app.add_option("--data-dir", o.data_dir,
                 "Serve every table under DIR (DIR/<table>/v<N>/, as "
                 "roost-load publishes)")
      ->type_name("DIR")
      ->required();
  app.option_defaults()->group("Listeners");
  app.add_option("--listen", o.listen,
                 "Lookup service address (HOST:PORT; port 0 picks one)")
      ->type_name("HOST:PORT");
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
        ->type_name("HOST:PORT")
        ->expected(0, 1);
  };
  address_or_off("--admin-listen", &o.admin_listen,
                 "Admin service address (rollback); empty turns it off. "
                 "Default: 127.0.0.1:50052");
  address_or_off("--metrics-listen", &o.metrics_listen,
                 "Prometheus /metrics address; empty turns it off. Default: "
                 "127.0.0.1:9464");
  app.option_defaults()->group("Tables");
  app.add_option("--shard", o.shard,
                 "Serve shard I (0 to 1023) of every sharded table version "
                 "(roost-load build --shards N); unsharded tables are served "
                 "as always. Without it, sharded versions are refused")
      ->type_name("I")
      ->check(CLI::Range(0u, kMaxShards - 1));
  app.option_defaults()->group("Table repository");
  AddRepositoryOptions(app, &o.repository);
  app.option_defaults()->group("Tables");
  app.add_option("--load-mode", load_mode,
                 "How tables come into memory: mmap, mmap-locked (fault in "
                 "and mlock) or huge-pages (copy into transparent huge "
                 "pages)")
      ->type_name("MODE");
  app.add_option("--verify-checksums", o.verify_checksums,
                 "Verify every checksum of a version before serving it (the "
                 "header is always checked)");
  app.add_option("--block-cache", o.block_cache_bytes,
                 "Bytes of decompressed blocks of compressed block tables "
                 "kept in memory, in one cache all tables share (0: none)")
      ->type_name("BYTES")
      ->transform(SizeValue())
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 50));
  app.add_option("--poll-interval", o.poll_interval_seconds,
                 "Rescan the data directory every SECONDS, even without "
                 "inotify events (0.05 to 86400)")
      ->check(CLI::Range(0.05, 86400.0));
  app.add_option("--inotify", o.inotify,
                 "Watch the data directory with inotify (else poll only)");
  app.add_option("--keep-versions", o.keep_versions,
                 "Keep the newest K complete versions of each table on disk "
                 "(and the serving and pinned ones); delete older ones. 0 "
                 "keeps all")
      ->type_name("K");
  app.option_defaults()->group("Limits");
  app.add_option("--max-batch", o.max_batch,
                 "Most keys in one MultiGet (or StreamMultiGet message)")
      ->check(CLI::Range(1u, 10000000u));
  app.option_defaults()->group("Tables");
  app.add_option("--version-grace", o.version_grace_seconds,
                 "After a swap, keep the version replaced mapped and answer "
                 "requests that name it for SECONDS (0: only the serving "
                 "version is answered)")
      ->check(CLI::Range(0.0, 86400.0));
  app.option_defaults()->group("Limits");
  app.add_option("--max-scan-keys", o.max_scan_keys,
                 "Most entries one Scan returns (its limit 0 means this; a "
                 "larger limit is INVALID_ARGUMENT)")
      ->check(CLI::Range(1u, 100000000u));
  app.add_option("--max-key-size", o.max_key_size,
                 "Longest key accepted, in bytes")
      ->type_name("BYTES")
      ->transform(SizeValue())
      ->check(CLI::Range(1u, 1u << 30));
  app.add_option("--max-request-size", o.max_request_size,
                 "Largest request received, in bytes")
      ->type_name("BYTES")
      ->transform(SizeValue())
      ->check(CLI::Range(1024u, 2147483647u));
  app.add_option("--max-message-size", o.max_message_size,
                 "Largest response sent, in bytes; larger ones are refused "
                 "before any value is copied (1k to 2G less 1 byte)")
      ->type_name("BYTES")
      ->transform(SizeValue())
      ->check(CLI::Range(1024u, 2147483647u));
  app.add_option("--max-response-memory", o.max_response_memory,
                 "Bytes all responses in flight may hold at once")
      ->type_name("BYTES")
      ->transform(SizeValue())
      ->check(CLI::Range(uint64_t{1} << 20, uint64_t{1} << 50));
  app.add_option("--max-client-response-memory", o.max_client_response_memory,
                 "Bytes of responses in flight one client (a connection; all "
                 "connections of one TLS client certificate) may hold; more "
                 "are refused for that client alone. 0: a quarter of "
                 "--max-response-memory, or --max-message-size if more")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 50));
  app.add_option("--grpc-memory", o.grpc_memory,
                 "gRPC's own memory (connections, request buffers), in bytes")
      ->type_name("BYTES")
      ->transform(SizeValue())
      ->check(CLI::Range(uint64_t{16} << 20, uint64_t{1} << 50));
  app.option_defaults()->group("Connections");
  app.add_option("--max-connections", o.max_connections,
                 "Connections open at once on the lookup port; 0: the file "
                 "descriptor limit less an eighth and less "
                 "--max-admin-connections");
  app.add_option("--max-admin-connections", o.max_admin_connections,
                 "Connections open at once on the admin port, apart from "
                 "--max-connections (so that a flood of lookup connections "
                 "cannot shut the operator out)")
      ->check(CLI::Range(1u, 100000u));
  app.add_option("--handshake-timeout", o.handshake_timeout_seconds,
                 "Close a connection that has not finished its TLS handshake "
                 "and HTTP/2 preface in SECONDS")
      ->check(CLI::Range(0.1, 3600.0));
  app.add_option("--max-connection-idle", o.max_connection_idle_seconds,
                 "Close a connection idle this many SECONDS (0: never)")
      ->check(CLI::Range(0.0, 86400.0 * 365));
  app.add_option("--max-connection-age", o.max_connection_age_seconds,
                 "Ask clients to reconnect after this many SECONDS (0: "
                 "never)")
      ->check(CLI::Range(0.0, 86400.0 * 365));
  app.add_option("--max-connection-age-grace",
                 o.max_connection_age_grace_seconds,
                 "Then close the connection this many SECONDS later")
      ->check(CLI::Range(0.0, 86400.0));
  app.add_option("--keepalive", o.keepalive_seconds,
                 "Ping idle clients every SECONDS")
      ->check(CLI::Range(1.0, 86400.0));
  app.add_option("--keepalive-timeout", o.keepalive_timeout_seconds,
                 "Close a connection whose ping is not answered in SECONDS")
      ->check(CLI::Range(1.0, 3600.0));
  app.add_option("--max-concurrent-streams", o.max_concurrent_streams,
                 "Calls one connection may have open at once (HTTP/2 "
                 "streams); more wait in the client")
      ->check(CLI::Range(1u, 1000000u));
  app.option_defaults()->group("Limits");
  app.add_option("--max-streams", o.max_streams,
                 "StreamMultiGet calls open at once over all connections; "
                 "more are refused (RESOURCE_EXHAUSTED)")
      ->check(CLI::Range(1u, 10000000u));
  app.add_option("--max-health-watches", o.max_health_watches,
                 "Health Watch calls open at once over all connections; more "
                 "are refused (RESOURCE_EXHAUSTED)")
      ->check(CLI::Range(1u, 1000000u));
  app.add_option("--max-in-flight", o.max_in_flight,
                 "Get, MultiGet and Scan calls in flight at once (until "
                 "their response is sent); more are refused "
                 "(RESOURCE_EXHAUSTED)")
      ->check(CLI::Range(1u, 100000000u));
  app.add_option("--max-client-in-flight", o.max_client_in_flight,
                 "Get, MultiGet and Scan calls one client (as for "
                 "--max-client-response-memory) may have in flight; more are "
                 "refused for that client alone. 0: a quarter of "
                 "--max-in-flight")
      ->check(CLI::Range(0u, 100000000u));
  app.add_option("--send-timeout", o.send_timeout_seconds,
                 "Cancel a call whose client has not taken its response (a "
                 "Get's or MultiGet's, a StreamMultiGet's or Scan's next "
                 "message) for SECONDS")
      ->check(CLI::Range(0.1, 3600.0));
  app.option_defaults()->group("Shutdown");
  app.add_option("--drain-period", o.drain_seconds,
                 "On SIGTERM/SIGINT, keep serving this many SECONDS with "
                 "health NOT_SERVING before refusing new RPCs (0 to 3600)")
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("--shutdown-timeout", o.shutdown_timeout_seconds,
                 "Then wait this many SECONDS for in-flight RPCs before "
                 "cancelling them (0 to 3600)")
      ->check(CLI::Range(0.0, 3600.0));
  app.option_defaults()->group("Metrics");
  app.add_option("--resident-refresh", o.resident_refresh_seconds,
                 "Refresh roost_table_resident_bytes every SECONDS (1 to "
                 "86400)")
      ->check(CLI::Range(1.0, 86400.0));
  app.option_defaults()->group("Listeners");
  app.add_option("--reflection", o.reflection, "Serve gRPC server reflection");
  app.option_defaults()->group("Tables");
  app.add_option("--max-tables", o.max_tables,
                 "Most table directories served; more are ignored")
      ->check(CLI::Range(1u, 1000000u));
  app.add_option("--load-threads", o.load_threads,
                 "Threads that load (open and verify) versions")
      ->check(CLI::Range(1u, 64u));
  app.add_option("--stall-timeout", o.stall_timeout_seconds,
                 "Report the registry stalled when its thread has not come "
                 "round for SECONDS")
      ->check(CLI::Range(1.0, 86400.0));
  app.option_defaults()->group("Metrics");
  app.add_option("--metrics-threads", o.metrics_threads,
                 "Threads that build /metrics answers")
      ->check(CLI::Range(1u, 64u));
  app.add_option("--metrics-request-timeout", o.metrics_request_timeout_seconds,
                 "A /metrics connection's SECONDS for its TLS handshake and "
                 "request together, and again for taking the answer")
      ->check(CLI::Range(0.1, 60.0));
  app.option_defaults()->group("Security");
  app.add_option("--tls-cert", o.tls_cert,
                 "Serve TLS on every listener with this PEM certificate "
                 "(chain, leaf first); needs --tls-key")
      ->type_name("FILE")
      ->group("Security");
  app.add_option("--tls-key", o.tls_key,
                 "The PEM private key of --tls-cert (no passphrase)")
      ->type_name("FILE")
      ->group("Security");
  app.add_option("--tls-client-ca", o.tls_client_ca,
                 "Mutual TLS: clients must present a certificate signed by "
                 "a CA in this PEM bundle")
      ->type_name("FILE")
      ->group("Security");
  app.add_option("--tls-refresh", o.tls_refresh_seconds,
                 "Re-read the certificate, key and client CA every SECONDS "
                 "(rotation without a restart)")
      ->type_name("SECONDS")
      ->check(CLI::Range(1u, 86400u))
      ->group("Security");
  app.add_option("--metrics-tls", o.metrics_tls,
                 "With --tls-cert, serve /metrics over TLS too (false keeps "
                 "it plaintext)")
      ->group("Security");
  app.add_flag("--admin-allow-insecure-remote", o.admin_allow_insecure_remote,
               "Allow the admin service on a non-loopback address without "
               "mutual TLS (anyone who reaches it can roll tables back)")
      ->group("Security");
  app.add_option("--access-policy", o.access_policy,
                 "JSON file of which clients (certificate names, bearer "
                 "tokens) may read which tables and use the admin service; "
                 "re-read when it changes")
      ->type_name("FILE")
      ->group("Security");
  // --help shows each flag's type and default; the ranges that the checks
  // enforce are in the flags' own text where they are not obvious (and in
  // docs/operations.md), not repeated after every type. Every fractional
  // flag is a duration, every other number a count unless it says BYTES.
  for (CLI::Option* option : app.get_options()) {
    try {
      for (int i = 0;; ++i) option->get_validator(i)->description("");
    } catch (const CLI::OptionNotFound&) {  // CLI11: past the last check
    }
    if (option->get_type_name() == "FLOAT") option->type_name("SECONDS");
    if (option->get_type_name() == "UINT") option->type_name("N");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ConfigError& e) {
    // CLI11 says "INI was not able to parse KEY" of a key it does not know:
    // name the key, the file and the line instead.
    constexpr std::string_view kExtra = "INI was not able to parse ";
    const std::string_view what = e.what();
    const std::string file = app["--config"]->as<std::string>();
    if (what.substr(0, kExtra.size()) == kExtra) {
      std::string key(what.substr(kExtra.size()));
      std::string hint;
      std::string dashed = key;
      std::replace(dashed.begin(), dashed.end(), '_', '-');
      if (dashed != key && app.get_option_no_throw("--" + dashed) != nullptr) {
        hint = StrCat(" (did you mean ", dashed, "?)");
      }
      const std::optional<int> line = config->LineOf(key);
      fmt::print(stderr, "roost-server: unknown key \"{}\" in {}{}{}\n", key,
                 file, line ? StrCat(" line ", *line) : "", hint);
    } else {
      fmt::print(stderr, "roost-server: {}: {}\n", file, e.what());
    }
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    return ReportParseError(app, e);
  }
  auto mode = ParseLoadMode(load_mode);
  if (!mode.ok()) {
    fmt::print(stderr, "roost-server: --load-mode: {}\n",
               std::string(mode.status().message()));
    return kExitUsage;
  }
  o.load_mode = *mode;
  const auto usage = [](std::string_view message) {
    fmt::print(stderr,
               "roost-server: {}\nRun with --help for more information.\n",
               message);
    return kExitUsage;
  };
  if (o.tls_cert.empty() != o.tls_key.empty()) {
    return usage("--tls-cert and --tls-key go together");
  }
  if (!o.tls_client_ca.empty() && o.tls_cert.empty()) {
    return usage("--tls-client-ca needs --tls-cert and --tls-key");
  }
  return std::nullopt;
}

}  // namespace roost
