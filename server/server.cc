#include "server/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <sys/resource.h>

#include <chrono>
#include <climits>
#include <filesystem>
#include <system_error>
#include <utility>

#include "grpc/health/v1/health.pb.h"
#include "server/log.h"
#include "server/process_metrics.h"
#include "util/build_info.h"
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

// Each client's share of --max-response-memory and --max-in-flight: by
// default a quarter, and room for one response of --max-message-size.
ClientLimits::Options ClientShares(const ServerOptions& options) {
  return {.memory = options.max_client_response_memory != 0
                        ? options.max_client_response_memory
                        : std::min(options.max_response_memory,
                                   std::max(options.max_response_memory / 4,
                                            ResponseBuffer::BytesFor(
                                                options.max_message_size))),
          .calls = options.max_client_in_flight != 0
                       ? options.max_client_in_flight
                       : std::max<uint64_t>(1, options.max_in_flight / 4)};
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

// Gives `consumer` (MetricsHttp, RedisFront) a TLS context of the pair in
// use after a rotation; on an error it keeps the one it has, and says so.
template <typename Consumer>
void GiveContext(const TlsMaterial& material, std::string_view who,
                 Consumer* consumer) {
  if (auto context = MakeSslContext(material); context.ok()) {
    consumer->SetContext(std::move(*context));
  } else {
    Log(who, " keeps its TLS context: ", context.status().message());
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<Server>> Server::Create(
    const ServerOptions& options) {
  // Before any port is bound: a server that cannot serve should not take
  // a port from one that can.
  std::error_code ec;
  if (!std::filesystem::is_directory(options.data_dir, ec)) {
    return absl::FailedPreconditionError(
        StrCat("data directory ", options.data_dir,
               " does not exist or is not a directory"));
  }

  // Security settings are checked before any port is bound, too.
  const TlsFiles tls_files{.cert = options.tls_cert,
                           .key = options.tls_key,
                           .client_ca = options.tls_client_ca};
  std::unique_ptr<TlsWatch> tls_watch;
  if (tls_files.enabled()) {
    auto watch = TlsWatch::Start(tls_files);
    if (!watch.ok()) return watch.status();
    tls_watch = std::move(*watch);
    Log("TLS on the lookup and admin services",
        options.redis_listen.empty() ? "" : ", the Redis front end",
        options.metrics_tls && !options.metrics_listen.empty() ? " and /metrics"
                                                               : "",
        tls_files.mutual() ? "; clients must present a certificate signed "
                             "by a CA in " +
                                 tls_files.client_ca
                           : "",
        "; files re-read every ", options.tls_refresh_seconds, " s");
  }
  if (!options.admin_listen.empty() &&
      !IsLoopbackAddress(options.admin_listen) && !tls_files.mutual()) {
    if (!options.admin_allow_insecure_remote) {
      return absl::FailedPreconditionError(StrCat(
          "the admin service on ", options.admin_listen,
          " (not a loopback address) needs mutual TLS (--tls-cert, "
          "--tls-key and --tls-client-ca): anyone who reaches it could roll "
          "tables back. Give --admin-listen a loopback address, turn mutual "
          "TLS on, or pass --admin-allow-insecure-remote to accept the risk"));
    }
    Log("WARNING: --admin-allow-insecure-remote: the admin service on ",
        options.admin_listen,
        " takes rollbacks from any client that reaches it, without mutual "
        "TLS");
  }
  std::unique_ptr<AccessControl> access;
  if (!options.access_policy.empty()) {
    auto loaded = AccessControl::Load(options.access_policy);
    if (!loaded.ok()) return loaded.status();
    access = std::move(*loaded);
    Log("access policy ", options.access_policy, ": ",
        Count(access->policy()->num_clients(), "client"));
  }

  const uint64_t file_limit = RaiseFileLimit();
  ConnectionBudget connections;
  connections.admin =
      options.admin_listen.empty() ? 0 : options.max_admin_connections;
  connections.lookup =
      options.max_connections != 0
          ? options.max_connections
          : std::max<uint64_t>(1, file_limit -
                                      std::max<uint64_t>(64, file_limit / 8) -
                                      connections.admin);
  Log("file descriptors: ", file_limit, "; connections: up to ",
      connections.lookup, " (lookup) and ", connections.admin, " (admin)");

  (void)grpc::health::v1::HealthCheckRequest::descriptor();
  if (options.reflection) {
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  }

  std::unique_ptr<Server> server(new Server(options, std::move(tls_watch),
                                            std::move(access), connections));
  if (options.repository.enabled()) {
    auto created = RepositoryPuller::Create(options, &server->registry_);
    if (!created.ok()) return created.status();
    server->puller_ = std::move(*created);
  }
  if (absl::Status s = server->Listen(); !s.ok()) return s;
  return server;
}

Server::Server(const ServerOptions& options,
               std::unique_ptr<TlsWatch> tls_watch,
               std::unique_ptr<AccessControl> access,
               ConnectionBudget connections)
    : options_(options),
      metrics_tls_(tls_watch != nullptr && options.metrics_tls &&
                   !options.metrics_listen.empty()),
      tls_watch_(std::move(tls_watch)),
      access_(std::move(access)),
      credentials_(tls_watch_ ? tls_watch_->Credentials()
                              : grpc::InsecureServerCredentials()),
      response_memory_(options.max_response_memory),
      streams_(options.max_streams),
      calls_(options.max_in_flight),
      clients_(ClientShares(options)),
      call_contexts_(&clients_),
      connections_(connections.lookup, "lookup", "--max-connections"),
      admin_connections_(connections.admin, "admin", "--max-admin-connections"),
      registry_(options,
                {.on_ready =
                     [this] {
                       ready_.store(true);
                       health_.ChangedAll();
                       if (!draining_.load()) {
                         Log("ready: ",
                             Count(registry_.List().size(), "table"));
                       }
                     },
                 .on_table_change =
                     [this](const std::string& table) {
                       health_.Changed(StrCat(kTableServicePrefix, table));
                       if (puller_) puller_->Notify();
                     }}),
      health_([this](std::string_view service) { return HealthOf(service); },
              &rpc_metrics_, options.max_health_watches),
      quota_("roost"),
      lookup_(&registry_, &rpc_metrics_, &response_memory_, &streams_, &calls_,
              options, access_.get()),
      redis_(&registry_, &rpc_metrics_, &response_memory_, options,
             access_.get()),
      admin_(&registry_, &rpc_metrics_, options.data_dir, access_.get()),
      metrics_connections_(SIZE_MAX, "metrics", "") {
  quota_.Resize(options.grpc_memory);
  // gRPC's synchronous services (reflection, the only one) take a thread
  // per call for as long as the call is open: without a bound, idle
  // reflection streams made a thread each. Past the bound gRPC refuses
  // their calls (RESOURCE_EXHAUSTED); the callback services take no
  // thread of it.
  quota_.SetMaxThreads(kSyncThreads);
}

absl::Status Server::Listen() {
  auto lookup_listener = Listener::Bind(options_.listen, "lookup");
  if (!lookup_listener.ok()) {
    return absl::UnavailableError(
        StrCat("cannot listen on ", options_.listen,
               " (lookup service): ", lookup_listener.status().message()));
  }
  lookup_listener_ = std::move(*lookup_listener);
  lookup_server_ =
      BuildServer({&lookup_, &health_}, options_, &quota_, credentials_,
                  &lookup_acceptor_, &call_contexts_);
  if (lookup_server_ == nullptr) {
    return absl::InternalError("cannot start the lookup service");
  }
  lookup_listener_->Start(lookup_acceptor_.get(), &connections_);
  Log("lookup service listening on ",
      WithPort(options_.listen, lookup_listener_->port()));

  if (!options_.redis_listen.empty()) {
    auto bound = Listener::Bind(options_.redis_listen, "redis");
    if (!bound.ok()) {
      return absl::UnavailableError(
          StrCat("cannot listen on ", options_.redis_listen,
                 " (Redis front end): ", bound.status().message()));
    }
    redis_listener_ = std::move(*bound);
    if (tls_watch_) {
      auto context = MakeSslContext(tls_watch_->material());
      if (!context.ok()) {
        return absl::FailedPreconditionError(
            StrCat("cannot serve the Redis front end over TLS: ",
                   context.status().message()));
      }
      redis_.SetContext(std::move(*context));
    }
    // Its connections count against --max-connections with gRPC's.
    if (absl::Status s = redis_.Start(redis_listener_.get(), &connections_);
        !s.ok()) {
      return s;
    }
    Log("Redis front end listening on ",
        WithPort(options_.redis_listen, redis_listener_->port()),
        options_.redis_table.empty()
            ? std::string(" (keys are TABLE:KEY")
            : StrCat(" (keys of table ", options_.redis_table),
        tls_watch_ ? "; TLS)" : ")");
  }
  if (!options_.admin_listen.empty()) {
    auto bound = Listener::Bind(options_.admin_listen, "admin");
    if (!bound.ok()) {
      return absl::UnavailableError(
          StrCat("cannot listen on ", options_.admin_listen,
                 " (admin service): ", bound.status().message()));
    }
    admin_listener_ = std::move(*bound);
    admin_server_ = BuildServer({&admin_}, options_, &quota_, credentials_,
                                &admin_acceptor_);
    if (admin_server_ == nullptr) {
      return absl::InternalError("cannot start the admin service");
    }
    admin_listener_->Start(admin_acceptor_.get(), &admin_connections_);
    Log("admin service listening on ",
        WithPort(options_.admin_listen, admin_listener_->port()));
  }

  collector_ = std::make_shared<MetricsCollector>(
      &rpc_metrics_, std::vector<MetricsCollector::Source>{
                         [this](std::vector<prometheus::MetricFamily>* out) {
                           registry_.CollectMetrics(out);
                           if (puller_) puller_->CollectMetrics(out);
                         },
                         [this](std::vector<prometheus::MetricFamily>* out) {
                           CollectMetrics(out);
                         },
                         [](std::vector<prometheus::MetricFamily>* out) {
                           AddBuildInfo(out, std::string(BuildVersion()),
                                        std::string(BuildRevision()));
                           CollectProcessMetrics(out);
                         }});
  // /metrics, plaintext or TLS, through a Listener as the gRPC services
  // are (metrics_http.h says why not prometheus-cpp's Exposer).
  if (!options_.metrics_listen.empty()) {
    auto bound = Listener::Bind(options_.metrics_listen, "metrics");
    if (!bound.ok()) {
      return absl::UnavailableError(
          StrCat("cannot listen on ", options_.metrics_listen,
                 " (metrics): ", bound.status().message()));
    }
    metrics_listener_ = std::move(*bound);
    metrics_http_ = std::make_unique<MetricsHttp>(
        collector_, static_cast<int>(options_.metrics_threads),
        options_.metrics_request_timeout_seconds, metrics_tls_);
    if (metrics_tls_) {
      auto context = MakeSslContext(tls_watch_->material());
      if (!context.ok()) {
        return absl::FailedPreconditionError(StrCat(
            "cannot serve /metrics over TLS: ", context.status().message()));
      }
      metrics_http_->SetContext(std::move(*context));
    }
    metrics_listener_->Start(
        [http = metrics_http_.get()](int, int fd) { http->Serve(fd); },
        &metrics_connections_);
    Log("metrics listening on ",
        WithPort(options_.metrics_listen, metrics_listener_->port()));
  }
  return absl::OkStatus();
}

absl::Status Server::Start() {
  if (absl::Status s = registry_.Start(); !s.ok()) return s;
  if (puller_) puller_->Start();
  return absl::OkStatus();
}

void Server::Tick() {
  // The TLS files, every --tls-refresh: a good change goes to the gRPC
  // listeners (tls_watch_'s credentials), the Redis front end and /metrics
  // alike.
  if (tls_watch_ &&
      ++seconds_since_tls_refresh_ >= options_.tls_refresh_seconds) {
    seconds_since_tls_refresh_ = 0;
    if (tls_watch_->Refresh()) {
      if (metrics_tls_) {
        GiveContext(tls_watch_->material(), "/metrics", metrics_http_.get());
      }
      if (redis_listener_) {
        GiveContext(tls_watch_->material(), "the Redis front end", &redis_);
      }
    }
  }
  if (access_) access_->Reload();
  const auto send_timeout =
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(options_.send_timeout_seconds));
  if (const int n = streams_.CancelStalled(send_timeout); n > 0) {
    Log("cancelled ", Count(n, "StreamMultiGet call"),
        " whose client took no "
        "response for --send-timeout ",
        options_.send_timeout_seconds, " s");
  }
  if (const int n = lookup_.CancelStalledScans(send_timeout); n > 0) {
    Log("cancelled ", Count(n, "Scan call"),
        " whose client took no message for --send-timeout ",
        options_.send_timeout_seconds, " s");
  }
  const std::string unsent =
      StrCat("the client took no response for --send-timeout (",
             options_.send_timeout_seconds,
             " s): a client that does not read is cut off");
  if (const int n = call_contexts_.CancelUnsent(send_timeout, unsent); n > 0) {
    Log("cancelled ", Count(n, "unary call"),
        " (Get, MultiGet, ...) whose client took no response "
        "for --send-timeout ",
        options_.send_timeout_seconds, " s");
  }
  clients_.Sweep();
  health_.Changed(std::string(kRegistryService));
}

void Server::Drain() {
  draining_.store(true);
  health_.ChangedAll();
}

bool Server::Shutdown() {
  // Accepts no more connections, refuses new RPCs, waits for in-flight ones
  // up to the deadline, then cancels what is left.
  lookup_listener_->Stop();
  if (redis_listener_) redis_listener_->Stop();
  if (admin_listener_) admin_listener_->Stop();
  if (metrics_listener_) metrics_listener_->Stop();
  metrics_http_.reset();
  lookup_server_->Shutdown(After(options_.shutdown_timeout_seconds));
  // Its commands run to completion at once: nothing to wait for.
  redis_.Stop();
  if (admin_server_) admin_server_->Shutdown(After(1));
  if (puller_) puller_->Stop();
  return registry_.Stop();
}

int Server::lookup_port() const { return lookup_listener_->port(); }

int Server::redis_port() const {
  return redis_listener_ ? redis_listener_->port() : 0;
}

int Server::admin_port() const {
  return admin_listener_ ? admin_listener_->port() : 0;
}

int Server::metrics_port() const {
  return metrics_listener_ ? metrics_listener_->port() : 0;
}

std::optional<HealthService::ServingStatus> Server::HealthOf(
    std::string_view service) const {
  const auto status = [](bool up) {
    return up ? HealthStatus::SERVING : HealthStatus::NOT_SERVING;
  };
  const bool serving = ready_.load() && !draining_.load();
  if (service.empty() || service == kLookupService) return status(serving);
  if (service == kRegistryService) return status(!registry_.Stalled());
  if (service.substr(0, kTableServicePrefix.size()) == kTableServicePrefix) {
    const auto tables = registry_.Tables();
    TableEntry* entry = tables.Find(service.substr(kTableServicePrefix.size()));
    if (entry == nullptr) return std::nullopt;
    return status(!draining_.load() && entry->slots.Acquire());
  }
  return std::nullopt;
}

void Server::CollectMetrics(std::vector<prometheus::MetricFamily>* out) {
  // What health's "" and roost.v1.Lookup say (the readiness probe), for
  // alerts on shards without a ready replica.
  AddScalar(out, "roost_ready",
            "1 while health says SERVING (the server is ready and not "
            "draining), else 0.",
            prometheus::MetricType::Gauge,
            ready_.load() && !draining_.load() ? 1 : 0);
  ConnectionLimit::CollectMetrics({&connections_, &admin_connections_}, out);
  auto errors =
      MakeFamily("roost_accept_errors_total",
                 "Failed accepts on a listener, by error (EMFILE: out of file "
                 "descriptors).",
                 prometheus::MetricType::Counter);
  lookup_listener_->AddAcceptErrors(&errors);
  if (admin_listener_) admin_listener_->AddAcceptErrors(&errors);
  if (redis_listener_) redis_listener_->AddAcceptErrors(&errors);
  out->push_back(std::move(errors));
  response_memory_.CollectMetrics(out);
  if (redis_listener_) redis_.CollectMetrics(out);
  streams_.CollectMetrics(out);
  health_.CollectMetrics(out);
  calls_.CollectMetrics(out);
  AddScalar(out, "roost_calls_cancelled_total",
            "Calls cancelled because their client took no response for "
            "--send-timeout: unary calls (Get, MultiGet, ListTables, health "
            "Check) and Scans (StreamMultiGet: roost_streams_cancelled_total).",
            prometheus::MetricType::Counter,
            static_cast<double>(call_contexts_.cancelled() +
                                lookup_.scans_cancelled()));
  clients_.CollectMetrics(out);
  if (access_) access_->CollectMetrics(out);
  if (tls_watch_) tls_watch_->CollectMetrics(out);
}

}  // namespace roost
