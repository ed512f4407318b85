// Server: roost-server as an object: the table registry, the lookup, health
// and admin services, /metrics and the limits they share, wired as
// ServerOptions says (docs/operations.md). Model: Envoy's InstanceImpl.
//
// Create() checks everything that would keep the server from serving (the
// data directory, the TLS files, the admin service's address, the access
// policy, the repository) before it binds a port, then binds the listeners
// and starts their gRPC servers and /metrics; health says NOT_SERVING until
// the registry is ready. Start() starts the registry (the tables load) and
// the repository puller. Tick(), once a second, does the housekeeping: the
// TLS files and the access policy re-read, calls whose client stopped
// reading cut off, clients gone forgotten. Drain() turns health NOT_SERVING
// while everything still serves; Shutdown() stops the listeners, the
// servers (in-flight calls get --shutdown-timeout), the puller and the
// registry.
//
// What is the process's and not the server's stays in main
// (roost_server.cc): the signal mask (which the threads started here
// inherit: lease breaks must reach only the registry's signalfd), SIGPIPE,
// malloc's settings and the protobuf and gRPC log handlers.
//
// Thread-compatible: Create, Start, Tick, Drain and Shutdown from one thread
// (main's), in that order; the services run on gRPC's threads.
//
// Example:
//   auto server = Server::Create(options);
//   if (!server.ok()) return Fail(server.status());
//   if (absl::Status s = (*server)->Start(); !s.ok()) return Fail(s);
//   while (!signalled) { wait a second; (*server)->Tick(); }
//   (*server)->Drain();
//   sleep --drain;
//   if (!(*server)->Shutdown()) _exit(0);  // a load stuck in the filesystem
#ifndef ROOST_SERVER_SERVER_H_
#define ROOST_SERVER_SERVER_H_

#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "prometheus/metric_family.h"
#include "server/access_policy.h"
#include "server/admin_service.h"
#include "server/call_context.h"
#include "server/call_gate.h"
#include "server/client_limits.h"
#include "server/health_service.h"
#include "server/listener.h"
#include "server/lookup_service.h"
#include "server/metrics.h"
#include "server/metrics_http.h"
#include "server/redis_front.h"
#include "server/repository_puller.h"
#include "server/response_buffer.h"
#include "server/server_options.h"
#include "server/stream_watch.h"
#include "server/table_registry.h"
#include "server/tls.h"

namespace roost {

class Server {
 public:
  // The services bound and serving (health NOT_SERVING until Start()'s
  // tables are ready), or what kept them from it: a message fit for the log
  // ("cannot listen on ...", "the admin service on ... needs mutual TLS",
  // ...). Raises the soft file descriptor limit to the hard one, on which
  // --max-connections' default depends.
  static absl::StatusOr<std::unique_ptr<Server>> Create(
      const ServerOptions& options);
  // Without Shutdown(), the members stop themselves, in no drained order.
  ~Server() = default;
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Starts the registry (its scan, loads and watches) and the repository
  // puller.
  absl::Status Start();
  // Once a second: re-reads the TLS files (every --tls-refresh) and the
  // access policy, cancels calls whose client took nothing for
  // --send-timeout, forgets the clients gone, and tells watchers of
  // roost.v1.Registry whether it stalled.
  void Tick();
  // Health says NOT_SERVING from now on; calls are still answered.
  void Drain();
  // Accepts no more connections, refuses new calls, waits for those in
  // flight up to --shutdown-timeout, then cancels what is left; stops the
  // puller and the registry. False when a load is still stuck in the
  // filesystem: the caller should leave without running destructors (the
  // load may depend on them).
  bool Shutdown();

  // The ports bound (useful with port 0); 0 for a service turned off.
  int lookup_port() const;
  int redis_port() const;
  int admin_port() const;
  int metrics_port() const;
  // Whether the registry got ready (its first scan loaded); Drain() does
  // not change it.
  bool ready() const { return ready_.load(); }
  // Get, MultiGet and Scan calls in flight, and StreamMultiGet calls open,
  // now: a call's server side has ended when it no longer counts here.
  uint64_t calls_open() const { return calls_.open(); }
  size_t streams_open() const { return streams_.open(); }

 private:
  // The connections each listener takes.
  struct ConnectionBudget {
    uint64_t lookup = 0;
    uint64_t admin = 0;
  };

  Server(const ServerOptions& options, std::unique_ptr<TlsWatch> tls_watch,
         std::unique_ptr<AccessControl> access, ConnectionBudget connections);

  // Binds and starts the lookup and admin services and /metrics.
  absl::Status Listen();
  // The health rules: what health says of `service` now; nullopt for a
  // service it does not know. "" and roost.v1.Lookup: SERVING once the
  // registry is ready and until Drain(); roost.v1.Registry: SERVING unless
  // the registry stalled; roost.v1.Lookup/<table>: SERVING while the table
  // has a version to serve, until Drain().
  std::optional<HealthService::ServingStatus> HealthOf(
      std::string_view service) const;
  // The server's own families (roost_ready, roost_accept_errors_total,
  // roost_calls_cancelled_total) and those of the parts it owns.
  void CollectMetrics(std::vector<prometheus::MetricFamily>* out);

  const ServerOptions options_;
  // /metrics over TLS too (--metrics-tls, with TLS on).
  const bool metrics_tls_;
  std::unique_ptr<TlsWatch> tls_watch_;    // with TLS
  std::unique_ptr<AccessControl> access_;  // with --access-policy
  // With TLS, gRPC serves only what tls_watch_ has read and checked.
  const std::shared_ptr<grpc::ServerCredentials> credentials_;

  RpcMetrics rpc_metrics_;
  ResponseMemory response_memory_;
  StreamWatch streams_;
  CallGate calls_;
  // Each client's share of the two above, and the lookup port's call
  // contexts, which find a call's client and cut off unary calls whose
  // response is not taken.
  ClientLimits clients_;
  CallContexts call_contexts_;
  ConnectionLimit connections_;
  ConnectionLimit admin_connections_;
  std::atomic<bool> ready_{false};
  std::atomic<bool> draining_{false};

  TableRegistry registry_;
  std::unique_ptr<RepositoryPuller> puller_;  // with --repository
  HealthService health_;
  grpc::ResourceQuota quota_;

  LookupService lookup_;
  std::unique_ptr<Listener> lookup_listener_;
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor>
      lookup_acceptor_;
  std::unique_ptr<grpc::Server> lookup_server_;

  // Declared after the registry and the limits it uses, so destroyed
  // (stopped) before them.
  RedisFront redis_;
  std::unique_ptr<Listener> redis_listener_;  // with --redis-listen

  AdminService admin_;
  std::unique_ptr<Listener> admin_listener_;  // with --admin-listen
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor>
      admin_acceptor_;
  std::unique_ptr<grpc::Server> admin_server_;

  std::shared_ptr<MetricsCollector> collector_;
  // /metrics' connections are not counted against --max-connections, so
  // that clients holding every lookup connection cannot keep Prometheus
  // out: MetricsHttp bounds them itself (its threads and a short queue).
  ConnectionLimit metrics_connections_;
  std::unique_ptr<Listener> metrics_listener_;  // with --metrics-listen
  std::unique_ptr<MetricsHttp> metrics_http_;

  uint32_t seconds_since_tls_refresh_ = 0;
};

}  // namespace roost

#endif  // ROOST_SERVER_SERVER_H_
