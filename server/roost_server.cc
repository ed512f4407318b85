// roost-server: serves published tables over gRPC. See server/README.md
// and docs/operations.md.
#include <google/protobuf/stubs/logging.h>
#include <grpc/support/log.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>

#include "grpc/health/v1/health.pb.h"
#include "server/access_policy.h"
#include "server/admin_service.h"
#include "server/call_context.h"
#include "server/client_limits.h"
#include "server/file_lease.h"
#include "server/health_service.h"
#include "server/listener.h"
#include "server/log.h"
#include "server/lookup_service.h"
#include "server/metrics.h"
#include "server/metrics_http.h"
#include "server/process_metrics.h"
#include "server/repository_puller.h"
#include "server/response_buffer.h"
#include "server/server_options.h"
#include "server/stream_watch.h"
#include "server/table_registry.h"
#include "server/tls.h"
#include "util/build_info.h"
#include "util/mutex_mode.h"
#include "util/str_cat.h"

namespace roost {
namespace {

using HealthStatus = grpc::health::v1::HealthCheckResponse;
constexpr std::string_view kLookupService = "roost.v1.Lookup";
constexpr std::string_view kTableServicePrefix = "roost.v1.Lookup/";
constexpr std::string_view kRegistryService = "roost.v1.Registry";
// Threads for gRPC's synchronous services (reflection) on the lookup and
// admin ports together: their pollers and one per call open.
constexpr int kSyncThreads = 32;

// "HOST:PORT" with the port replaced by `port`.
std::string WithPort(const std::string& address, int port) {
  const size_t colon = address.rfind(':');
  return StrCat(address.substr(0, colon), ":", port);
}

std::chrono::system_clock::time_point After(double seconds) {
  return std::chrono::system_clock::now() +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(
             std::chrono::duration<double>(seconds));
}

int Millis(double seconds) {
  return seconds <= 0 ? INT_MAX
                      : static_cast<int>(std::min(seconds * 1000, 2e9));
}

// Sleeps `seconds`, or less if one of `signals` comes.
void SleepUnlessSignalled(const sigset_t& signals, double seconds) {
  if (seconds <= 0) return;
  timespec ts;
  ts.tv_sec = static_cast<time_t>(seconds);
  ts.tv_nsec = static_cast<long>((seconds - std::floor(seconds)) * 1e9);
  while (sigtimedwait(&signals, nullptr, &ts) < 0 && errno == EINTR) {
  }
}

// Raises the soft file descriptor limit to the hard one and returns it.
uint64_t RaiseFileLimit() {
  rlimit rl;
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return 1024;
  if (rl.rlim_cur < rl.rlim_max) {
    rlimit raised = rl;
    raised.rlim_cur = rl.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) rl = raised;
  }
  return rl.rlim_cur == RLIM_INFINITY ? uint64_t{1} << 20 : rl.rlim_cur;
}

// libprotobuf's own error lines (a request that does not parse, say),
// through the server's log at a bounded rate.
void ProtobufLog(google::protobuf::LogLevel /*level*/, const char* /*file*/,
                 int /*line*/, const std::string& message) {
  static LogLimiter limiter;
  if (uint64_t dropped = 0; limiter.Allow(&dropped)) {
    Log("protobuf: ", message, LogLimiter::Suppressed(dropped));
  }
}

// gRPC's own error lines (a failed TLS handshake, say: any client can cause
// one), through the server's log at a bounded rate.
void GrpcLog(gpr_log_func_args* args) {
  static LogLimiter limiter;
  if (uint64_t dropped = 0; limiter.Allow(&dropped)) {
    Log("grpc: ", args->message, LogLimiter::Suppressed(dropped));
  }
}

// A gRPC server for `services` that takes its connections from a Listener
// (through *acceptor), with the memory and connection bounds of `options`.
// With `contexts`, its calls' contexts come from there.
std::unique_ptr<grpc::Server> BuildServer(
    const std::vector<grpc::Service*>& services, const ServerOptions& options,
    grpc::ResourceQuota* quota,
    const std::shared_ptr<grpc::ServerCredentials>& credentials,
    std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor>* acceptor,
    CallContexts* contexts = nullptr) {
  grpc::ServerBuilder builder;
  for (grpc::Service* service : services) builder.RegisterService(service);
  if (contexts != nullptr) builder.SetContextAllocator(contexts->Allocator());
  *acceptor = builder.experimental().AddExternalConnectionAcceptor(
      grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD,
      credentials);
  builder.SetMaxReceiveMessageSize(static_cast<int>(options.max_request_size));
  // The handlers refuse a larger response themselves, with a clearer
  // message; this is the backstop.
  builder.SetMaxSendMessageSize(static_cast<int>(
      std::min<uint64_t>(uint64_t{options.max_message_size} + 4096, INT_MAX)));
  builder.SetResourceQuota(*quota);
  // A compressed request can unpack to far more than it weighs (61 KB of
  // gzip made 60 MB of keys): compressed requests are refused
  // (UNIMPLEMENTED, "Compression algorithm 'gzip' is disabled").
  builder.SetCompressionAlgorithmSupportStatus(GRPC_COMPRESS_DEFLATE, false);
  builder.SetCompressionAlgorithmSupportStatus(GRPC_COMPRESS_GZIP, false);
  // A connection that says nothing (no ClientHello, no preface) holds its
  // place in the listener's budget until this, not gRPC's 120 s.
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                             Millis(options.handshake_timeout_seconds));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS,
                             Millis(options.max_connection_idle_seconds));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS,
                             Millis(options.max_connection_age_seconds));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
                             Millis(options.max_connection_age_grace_seconds));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS,
                             Millis(options.keepalive_seconds));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                             Millis(options.keepalive_timeout_seconds));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             static_cast<int>(options.max_concurrent_streams));
  return builder.BuildAndStart();
}

int Main(int argc, char** argv) {
  TurnOffMutexDeadlockDetection();
  ServerOptions options;
  if (auto rc = ParseServerOptions(argc, argv, &options)) return *rc;

  // Before any port is bound: a server that cannot serve should not take
  // a port from one that can.
  std::error_code ec;
  if (!std::filesystem::is_directory(options.data_dir, ec)) {
    Log("data directory ", options.data_dir,
        " does not exist or is not a directory");
    return 1;
  }

  // gRPC's, the exporter's and the registry's threads inherit this mask:
  // SIGTERM and SIGINT reach only the sigtimedwait below, and lease breaks
  // only the registry's signalfd.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigset_t blocked = signals;
  sigaddset(&blocked, LeaseSignal());
  sigaddset(&blocked, SIGIO);
  pthread_sigmask(SIG_BLOCK, &blocked, nullptr);
  // A client that hangs up mid-answer makes a write fail with EPIPE rather
  // than end the server: OpenSSL writes /metrics' TLS with write(2), which
  // raises SIGPIPE (civetweb, which served plaintext /metrics before,
  // ignored it for the whole process).
  ::signal(SIGPIPE, SIG_IGN);

  // Response buffers of 1 MiB and more are mapped and unmapped whole, so
  // that a burst of large responses gives its memory back (glibc would
  // otherwise raise this threshold after the first, and keep the memory).
  ::mallopt(M_MMAP_THRESHOLD, 1 << 20);
  google::protobuf::SetLogHandler(ProtobufLog);
  gpr_set_log_function(GrpcLog);

  // Security settings are checked before any port is bound, too.
  const TlsFiles tls_files{.cert = options.tls_cert,
                           .key = options.tls_key,
                           .client_ca = options.tls_client_ca};
  const bool metrics_tls = tls_files.enabled() && options.metrics_tls &&
                           !options.metrics_listen.empty();
  std::unique_ptr<TlsWatch> tls_watch;
  if (tls_files.enabled()) {
    auto watch = TlsWatch::Start(tls_files);
    if (!watch.ok()) {
      Log(watch.status().message());
      return 1;
    }
    tls_watch = std::move(*watch);
    Log("TLS on the lookup and admin services",
        metrics_tls ? " and /metrics" : "",
        tls_files.mutual() ? "; clients must present a certificate signed "
                             "by a CA in " +
                                 tls_files.client_ca
                           : "",
        "; files re-read every ", options.tls_refresh_seconds, " s");
  }
  if (!options.admin_listen.empty() &&
      !IsLoopbackAddress(options.admin_listen) && !tls_files.mutual()) {
    if (!options.admin_allow_insecure_remote) {
      Log("the admin service on ", options.admin_listen,
          " (not a loopback address) needs mutual TLS (--tls-cert, "
          "--tls-key and --tls-client-ca): anyone who reaches it could roll "
          "tables back. Give --admin-listen a loopback address, turn mutual "
          "TLS on, or pass --admin-allow-insecure-remote to accept the risk");
      return 1;
    }
    Log("WARNING: --admin-allow-insecure-remote: the admin service on ",
        options.admin_listen,
        " takes rollbacks from any client that reaches it, without mutual "
        "TLS");
  }
  std::unique_ptr<AccessControl> access;
  if (!options.access_policy.empty()) {
    auto loaded = AccessControl::Load(options.access_policy);
    if (!loaded.ok()) {
      Log(loaded.status().message());
      return 1;
    }
    access = std::move(*loaded);
    Log("access policy ", options.access_policy, ": ",
        Count(access->policy()->num_clients(), "client"));
  }
  // With TLS, gRPC serves only what tls_watch has read and checked.
  const std::shared_ptr<grpc::ServerCredentials> credentials =
      tls_watch ? tls_watch->Credentials() : grpc::InsecureServerCredentials();

  const uint64_t file_limit = RaiseFileLimit();
  const uint64_t max_admin_connections =
      options.admin_listen.empty() ? 0 : options.max_admin_connections;
  const uint64_t max_connections =
      options.max_connections != 0
          ? options.max_connections
          : std::max<uint64_t>(1, file_limit -
                                      std::max<uint64_t>(64, file_limit / 8) -
                                      max_admin_connections);
  Log("file descriptors: ", file_limit, "; connections: up to ",
      max_connections, " (lookup) and ", max_admin_connections, " (admin)");

  (void)grpc::health::v1::HealthCheckRequest::descriptor();
  if (options.reflection)
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  RpcMetrics rpc_metrics;
  ResponseMemory response_memory(options.max_response_memory);
  StreamWatch streams(options.max_streams);
  CallGate calls(options.max_in_flight);
  // Each client's share of the two (by default a quarter, and room for one
  // response of --max-message-size), and the lookup port's call contexts,
  // which find a call's client and cut off unary calls whose response is
  // not taken.
  ClientLimits clients(
      {.memory = options.max_client_response_memory != 0
                     ? options.max_client_response_memory
                     : std::min(options.max_response_memory,
                                std::max(options.max_response_memory / 4,
                                         ResponseBuffer::BytesFor(
                                             options.max_message_size))),
       .calls = options.max_client_in_flight != 0
                    ? options.max_client_in_flight
                    : std::max<uint64_t>(1, options.max_in_flight / 4)});
  CallContexts call_contexts(&clients);
  ConnectionLimit connections(max_connections, "lookup", "--max-connections");
  ConnectionLimit admin_connections(max_admin_connections, "admin",
                                    "--max-admin-connections");
  std::atomic<bool> ready{false};
  std::atomic<bool> draining{false};
  HealthService* health = nullptr;     // set below, before the registry starts
  RepositoryPuller* puller = nullptr;  // set below with --repository

  TableRegistry registry(
      options, {.on_ready =
                    [&] {
                      ready.store(true);
                      health->ChangedAll();
                      if (!draining.load()) {
                        Log("ready: ", Count(registry.List().size(), "table"));
                      }
                    },
                .on_table_change =
                    [&](const std::string& table) {
                      health->Changed(StrCat(kTableServicePrefix, table));
                      if (puller) puller->Notify();
                    }});
  std::unique_ptr<RepositoryPuller> repository_puller;
  if (options.repository.enabled()) {
    auto created = RepositoryPuller::Create(options, &registry);
    if (!created.ok()) {
      Log(created.status().message());
      return 1;
    }
    repository_puller = std::move(*created);
    puller = repository_puller.get();
  }
  HealthService health_service(
      [&](std::string_view service)
          -> std::optional<HealthStatus::ServingStatus> {
        const auto status = [](bool up) {
          return up ? HealthStatus::SERVING : HealthStatus::NOT_SERVING;
        };
        const bool serving = ready.load() && !draining.load();
        if (service.empty() || service == kLookupService)
          return status(serving);
        if (service == kRegistryService) return status(!registry.Stalled());
        if (service.substr(0, kTableServicePrefix.size()) ==
            kTableServicePrefix) {
          const auto tables = registry.Tables();
          TableEntry* entry =
              tables.Find(service.substr(kTableServicePrefix.size()));
          if (entry == nullptr) return std::nullopt;
          return status(!draining.load() && entry->slots.Acquire());
        }
        return std::nullopt;
      },
      &rpc_metrics, options.max_health_watches);
  health = &health_service;

  grpc::ResourceQuota quota("roost");
  quota.Resize(options.grpc_memory);
  // gRPC's synchronous services (reflection, the only one) take a thread
  // per call for as long as the call is open: without a bound, idle
  // reflection streams made a thread each. Past the bound gRPC refuses
  // their calls (RESOURCE_EXHAUSTED); the callback services take no
  // thread of it.
  quota.SetMaxThreads(kSyncThreads);

  LookupService lookup(&registry, &rpc_metrics, &response_memory, &streams,
                       &calls, options, access.get());
  auto lookup_listener = Listener::Bind(options.listen, "lookup");
  if (!lookup_listener.ok()) {
    Log("cannot listen on ", options.listen,
        " (lookup service): ", lookup_listener.status().message());
    return 1;
  }
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor>
      lookup_acceptor;
  std::unique_ptr<grpc::Server> server =
      BuildServer({&lookup, &health_service}, options, &quota, credentials,
                  &lookup_acceptor, &call_contexts);
  if (server == nullptr) {
    Log("cannot start the lookup service");
    return 1;
  }
  (*lookup_listener)->Start(lookup_acceptor.get(), &connections);
  Log("lookup service listening on ",
      WithPort(options.listen, (*lookup_listener)->port()));

  AdminService admin(&registry, &rpc_metrics, options.data_dir, access.get());
  std::unique_ptr<Listener> admin_listener;
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor>
      admin_acceptor;
  std::unique_ptr<grpc::Server> admin_server;
  if (!options.admin_listen.empty()) {
    auto bound = Listener::Bind(options.admin_listen, "admin");
    if (!bound.ok()) {
      Log("cannot listen on ", options.admin_listen,
          " (admin service): ", bound.status().message());
      return 1;
    }
    admin_listener = std::move(*bound);
    admin_server =
        BuildServer({&admin}, options, &quota, credentials, &admin_acceptor);
    if (admin_server == nullptr) {
      Log("cannot start the admin service");
      return 1;
    }
    admin_listener->Start(admin_acceptor.get(), &admin_connections);
    Log("admin service listening on ",
        WithPort(options.admin_listen, admin_listener->port()));
  }

  auto collector = std::make_shared<MetricsCollector>(
      &rpc_metrics,
      std::vector<MetricsCollector::Source>{
          [&registry, puller](std::vector<prometheus::MetricFamily>* out) {
            registry.CollectMetrics(out);
            if (puller) puller->CollectMetrics(out);
          },
          [&](std::vector<prometheus::MetricFamily>* out) {
            // What health's "" and roost.v1.Lookup say (the readiness
            // probe), for alerts on shards without a ready replica.
            AddScalar(out, "roost_ready",
                      "1 while health says SERVING (the server is ready and "
                      "not draining), else 0.",
                      prometheus::MetricType::Gauge,
                      ready.load() && !draining.load() ? 1 : 0);
            ConnectionLimit::CollectMetrics({&connections, &admin_connections},
                                            out);
            auto errors = MakeFamily(
                "roost_accept_errors_total",
                "Failed accepts on a listener, by error (EMFILE: out of "
                "file descriptors).",
                prometheus::MetricType::Counter);
            (*lookup_listener)->AddAcceptErrors(&errors);
            if (admin_listener) admin_listener->AddAcceptErrors(&errors);
            out->push_back(std::move(errors));
            response_memory.CollectMetrics(out);
            streams.CollectMetrics(out);
            health_service.CollectMetrics(out);
            calls.CollectMetrics(out);
            AddScalar(
                out, "roost_calls_cancelled_total",
                "Calls cancelled because their client took no response for "
                "--send-timeout: unary calls (Get, MultiGet, ListTables, "
                "health Check) and Scans (StreamMultiGet: "
                "roost_streams_cancelled_total).",
                prometheus::MetricType::Counter,
                static_cast<double>(call_contexts.cancelled() +
                                    lookup.scans_cancelled()));
            clients.CollectMetrics(out);
            if (access) access->CollectMetrics(out);
            if (tls_watch) tls_watch->CollectMetrics(out);
          },
          [](std::vector<prometheus::MetricFamily>* out) {
            AddBuildInfo(out, std::string(BuildVersion()),
                         std::string(BuildRevision()));
            CollectProcessMetrics(out);
          }});
  // /metrics, plaintext or TLS, through a Listener as the gRPC services
  // are (metrics_http.h says why not prometheus-cpp's Exposer). Its
  // connections are not counted against --max-connections, so that
  // clients holding every lookup connection cannot keep Prometheus out:
  // MetricsHttp bounds them itself (its threads and a short queue).
  ConnectionLimit metrics_connections(SIZE_MAX, "metrics", "");
  std::unique_ptr<Listener> metrics_listener;
  std::unique_ptr<MetricsHttp> metrics_http;
  if (!options.metrics_listen.empty()) {
    auto bound = Listener::Bind(options.metrics_listen, "metrics");
    if (!bound.ok()) {
      Log("cannot listen on ", options.metrics_listen,
          " (metrics): ", bound.status().message());
      return 1;
    }
    metrics_listener = std::move(*bound);
    metrics_http = std::make_unique<MetricsHttp>(
        collector, static_cast<int>(options.metrics_threads),
        options.metrics_request_timeout_seconds, metrics_tls);
    if (metrics_tls) {
      auto context = MakeSslContext(tls_watch->material());
      if (!context.ok()) {
        Log("cannot serve /metrics over TLS: ", context.status().message());
        return 1;
      }
      metrics_http->SetContext(std::move(*context));
    }
    metrics_listener->Start(
        [http = metrics_http.get()](int, int fd) { http->Serve(fd); },
        &metrics_connections);
    Log("metrics listening on ",
        WithPort(options.metrics_listen, metrics_listener->port()));
  }

  if (absl::Status s = registry.Start(); !s.ok()) {
    Log(s.message());
    return 1;
  }
  if (puller) puller->Start();

  // Once a second: cut off calls whose client stopped reading, forget the
  // clients gone, and tell watchers of roost.v1.Registry whether it
  // stalled.
  const auto send_timeout =
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(options.send_timeout_seconds));
  uint32_t seconds_since_tls_refresh = 0;
  const std::string unsent =
      StrCat("the client took no response for --send-timeout (",
             options.send_timeout_seconds,
             " s): a client that does not read is cut off");
  int signal = 0;
  for (;;) {
    const timespec second = {1, 0};
    signal = sigtimedwait(&signals, nullptr, &second);
    if (signal == SIGINT || signal == SIGTERM) break;
    // The TLS files, every --tls-refresh: a good change goes to the gRPC
    // listeners (tls_watch's credentials) and to /metrics alike.
    if (tls_watch &&
        ++seconds_since_tls_refresh >= options.tls_refresh_seconds) {
      seconds_since_tls_refresh = 0;
      if (tls_watch->Refresh() && metrics_tls) {
        if (auto context = MakeSslContext(tls_watch->material());
            context.ok()) {
          metrics_http->SetContext(std::move(*context));
        } else {
          Log("/metrics keeps its TLS context: ", context.status().message());
        }
      }
    }
    if (access) access->Reload();
    if (const int n = streams.CancelStalled(send_timeout); n > 0) {
      Log("cancelled ", Count(n, "StreamMultiGet call"),
          " whose client took no "
          "response for --send-timeout ",
          options.send_timeout_seconds, " s");
    }
    if (const int n = lookup.CancelStalledScans(send_timeout); n > 0) {
      Log("cancelled ", Count(n, "Scan call"),
          " whose client took no message for --send-timeout ",
          options.send_timeout_seconds, " s");
    }
    if (const int n = call_contexts.CancelUnsent(send_timeout, unsent); n > 0) {
      Log("cancelled ", Count(n, "unary call"),
          " (Get, MultiGet, ...) whose client took no response "
          "for --send-timeout ",
          options.send_timeout_seconds, " s");
    }
    clients.Sweep();
    health_service.Changed(std::string(kRegistryService));
  }
  Log("draining (", signal == SIGTERM ? "SIGTERM" : "SIGINT", "): health ",
      "NOT_SERVING for ", options.drain_seconds, " s");
  draining.store(true);
  health_service.ChangedAll();
  SleepUnlessSignalled(signals, options.drain_seconds);
  // Accepts no more connections, refuses new RPCs, waits for in-flight ones
  // up to the deadline, then cancels what is left.
  (*lookup_listener)->Stop();
  if (admin_listener) admin_listener->Stop();
  if (metrics_listener) metrics_listener->Stop();
  metrics_http.reset();
  server->Shutdown(After(options.shutdown_timeout_seconds));
  if (admin_server) admin_server->Shutdown(After(1));
  if (puller) puller->Stop();
  const bool loads_finished = registry.Stop();
  Log("stopped");
  if (!loads_finished) {
    // A load stuck in the filesystem still runs: leave without running
    // destructors it may depend on.
    std::fflush(stderr);
    ::_exit(0);
  }
  return 0;
}

}  // namespace
}  // namespace roost

int main(int argc, char** argv) { return roost::Main(argc, argv); }
