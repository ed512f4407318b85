#include "server/listener_options.h"

#include <CLI/CLI.hpp>
#include <utility>
#include <vector>

namespace roost {

void AddListenerFlags(CLI::App& app, ListenerOptions* o) {
  // --help lists each group's flags in the order they are added here.
  app.option_defaults()->group("Listeners");
  app.add_option("--listen", o->listen,
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
  address_or_off("--admin-listen", &o->admin_listen,
                 "Admin service address (rollback); empty turns it off. "
                 "Default: 127.0.0.1:50052");
  address_or_off("--metrics-listen", &o->metrics_listen,
                 "Prometheus /metrics address; empty turns it off. Default: "
                 "127.0.0.1:9464");
  app.add_option("--reflection", o->reflection, "Serve gRPC server reflection");
  address_or_off("--redis-listen", &o->redis_listen,
                 "Also serve GET, MGET and EXISTS over the Redis protocol "
                 "here (read-only; TLS as the gRPC ports with --tls-cert); "
                 "empty, the default, turns it off");
  app.add_option("--redis-table", o->redis_table,
                 "The table every Redis key is of; by default a Redis key "
                 "names its table as TABLE:KEY")
      ->type_name("NAME");
  app.add_option("--redis-threads", o->redis_threads,
                 "Event loops (threads) of the Redis front end")
      ->check(CLI::Range(1u, 256u));
}

void AddConnectionFlags(CLI::App& app, ConnectionOptions* o) {
  app.option_defaults()->group("Connections");
  app.add_option("--max-connections", o->max_connections,
                 "Connections open at once on the lookup port; 0: the file "
                 "descriptor limit less an eighth and less "
                 "--max-admin-connections");
  app.add_option("--max-admin-connections", o->max_admin_connections,
                 "Connections open at once on the admin port, apart from "
                 "--max-connections (so that a flood of lookup connections "
                 "cannot shut the operator out)")
      ->check(CLI::Range(1u, 100000u));
  app.add_option("--handshake-timeout", o->handshake_timeout_seconds,
                 "Close a connection that has not finished its TLS handshake "
                 "and HTTP/2 preface (the Redis port: its TLS handshake) in "
                 "SECONDS")
      ->check(CLI::Range(0.1, 3600.0));
  app.add_option("--max-connection-idle", o->max_connection_idle_seconds,
                 "Close a connection idle this many SECONDS (0: never)")
      ->check(CLI::Range(0.0, 86400.0 * 365));
  app.add_option("--max-connection-age", o->max_connection_age_seconds,
                 "Ask clients to reconnect after this many SECONDS (0: "
                 "never)")
      ->check(CLI::Range(0.0, 86400.0 * 365));
  app.add_option("--max-connection-age-grace",
                 o->max_connection_age_grace_seconds,
                 "Then close the connection this many SECONDS later")
      ->check(CLI::Range(0.0, 86400.0));
  app.add_option("--keepalive", o->keepalive_seconds,
                 "Ping idle clients every SECONDS")
      ->check(CLI::Range(1.0, 86400.0));
  app.add_option("--keepalive-timeout", o->keepalive_timeout_seconds,
                 "Close a connection whose ping is not answered in SECONDS")
      ->check(CLI::Range(1.0, 3600.0));
  app.add_option("--max-concurrent-streams", o->max_concurrent_streams,
                 "Calls one connection may have open at once (HTTP/2 "
                 "streams); more wait in the client")
      ->check(CLI::Range(1u, 1000000u));
}

void AddShutdownFlags(CLI::App& app, ShutdownOptions* o) {
  app.option_defaults()->group("Shutdown");
  app.add_option("--drain-period", o->drain_seconds,
                 "On SIGTERM/SIGINT, keep serving this many SECONDS with "
                 "health NOT_SERVING before refusing new RPCs (0 to 3600)")
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("--shutdown-timeout", o->shutdown_timeout_seconds,
                 "Then wait this many SECONDS for in-flight RPCs before "
                 "cancelling them (0 to 3600)")
      ->check(CLI::Range(0.0, 3600.0));
}

}  // namespace roost
