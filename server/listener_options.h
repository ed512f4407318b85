// roost-server's flags for its listeners (listener.h, server.h): the
// "Listeners" group (where the lookup, admin and metrics services listen),
// the "Connections" group (how many connections each takes, and how long
// they live) and the "Shutdown" group (how they stop serving on SIGTERM).
//
// Example config file:
//   listen = "0.0.0.0:50051"
//   max-connection-idle = 600
//   drain-period = 10
#ifndef ROOST_SERVER_LISTENER_OPTIONS_H_
#define ROOST_SERVER_LISTENER_OPTIONS_H_

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace roost {

struct ListenerOptions {
  // The lookup service's address; port 0 picks a free port. The default
  // value is "127.0.0.1:50051".
  std::string listen = "127.0.0.1:50051";
  // The admin service's address (rollback); empty turns it off. The default
  // value is "127.0.0.1:50052".
  std::string admin_listen = "127.0.0.1:50052";
  // The Prometheus endpoint's address (/metrics); empty turns it off. The
  // default value is "127.0.0.1:9464".
  std::string metrics_listen = "127.0.0.1:9464";
  // Serve gRPC server reflection. The default value is true.
  bool reflection = true;
  // The Redis front end's address (GET, MGET, EXISTS over RESP2:
  // redis_front.h); empty, the default, turns it off.
  std::string redis_listen;
  // With the Redis front end: the table every key is of; empty, the
  // default, reads keys as TABLE:KEY.
  std::string redis_table;
  // With the Redis front end: its event loops, each a thread. The default
  // value is 1.
  uint32_t redis_threads = 1;
};

struct ConnectionOptions {
  // Connections open at once on the lookup service; past it new ones are
  // closed as soon as they are accepted. 0: the file descriptor limit less
  // an eighth (at least 64) for tables, watches and the metrics endpoint,
  // and less max_admin_connections. The default value is 0.
  uint32_t max_connections = 0;
  // Connections open at once on the admin service, a budget of its own so
  // that a flood on the lookup port never shuts the operator out. The
  // default value is 16.
  uint32_t max_admin_connections = 16;
  // Close a connection that has not finished its TLS handshake and sent
  // its HTTP/2 preface and SETTINGS within this long (gRPC's own default is
  // 120 s). The default value is 10 seconds.
  double handshake_timeout_seconds = 10;
  // Close a connection with no call in flight for this long. 0 never does.
  // The default value is 300 seconds.
  double max_connection_idle_seconds = 300;
  // Ask clients to reconnect after this long (GOAWAY), and close the
  // connection `max_connection_age_grace_seconds` later. 0 never does. The
  // default value is 0.
  double max_connection_age_seconds = 0;
  double max_connection_age_grace_seconds = 60;
  // Ping an idle client this often, and close the connection when a ping is
  // not answered within keepalive_timeout_seconds. The default values are
  // 60 and 20 seconds.
  double keepalive_seconds = 60;
  double keepalive_timeout_seconds = 20;
  // Calls (HTTP/2 streams) one connection may have open at once; more
  // wait in the client. The default value is 100.
  uint32_t max_concurrent_streams = 100;
};

struct ShutdownOptions {
  // On SIGTERM/SIGINT: keep serving this long with health NOT_SERVING, so
  // that load balancers move away. The default value is 5 seconds.
  double drain_seconds = 5;
  // Then wait this long for in-flight RPCs (and version loads) before
  // cancelling them. The default value is 10 seconds.
  double shutdown_timeout_seconds = 10;
};

// Adds the "Listeners" group (--listen, --admin-listen, --metrics-listen,
// --reflection, --redis-listen, --redis-table, --redis-threads) to `app`,
// bound to `*options`.
void AddListenerFlags(CLI::App& app, ListenerOptions* options);

// Adds the "Connections" group (--max-connections,
// --max-admin-connections, --handshake-timeout, --max-connection-idle,
// --max-connection-age, --max-connection-age-grace, --keepalive,
// --keepalive-timeout, --max-concurrent-streams) to `app`.
void AddConnectionFlags(CLI::App& app, ConnectionOptions* options);

// Adds the "Shutdown" group (--drain-period, --shutdown-timeout) to `app`.
void AddShutdownFlags(CLI::App& app, ShutdownOptions* options);

}  // namespace roost

#endif  // ROOST_SERVER_LISTENER_OPTIONS_H_
