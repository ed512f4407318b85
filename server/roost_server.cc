// roost-server: serves published tables over gRPC. See server/README.md
// and docs/operations.md.
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <prometheus/exposer.h>
#include <pthread.h>
#include <signal.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>

#include "grpc/health/v1/health.pb.h"
#include "server/log.h"
#include "server/lookup_service.h"
#include "server/metrics.h"
#include "server/server_options.h"
#include "server/table_registry.h"
#include "storage/str_cat.h"

namespace roost {
namespace {

constexpr char kLookupService[] = "roost.v1.Lookup";

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

// Builds and starts a gRPC server for `service` on `address`.
std::unique_ptr<grpc::Server> StartServer(const std::string& address,
                                          grpc::Service* service,
                                          const ServerOptions& options,
                                          std::string_view what) {
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(service);
  builder.SetMaxReceiveMessageSize(static_cast<int>(options.max_message_size));
  builder.SetMaxSendMessageSize(static_cast<int>(options.max_message_size));
  // gRPC sets SO_REUSEPORT by default, so a second server on a busy port
  // would start and split the traffic; refuse instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    Log("cannot listen on ", address, " (", what, ")");
    return nullptr;
  }
  Log(what, " listening on ", WithPort(address, port));
  return server;
}

// Sleeps `seconds`, or less if another of the signals in `signals` comes.
void SleepUnlessSignalled(const sigset_t& signals, double seconds) {
  if (seconds <= 0) return;
  timespec ts;
  ts.tv_sec = static_cast<time_t>(seconds);
  ts.tv_nsec = static_cast<long>((seconds - std::floor(seconds)) * 1e9);
  while (sigtimedwait(&signals, nullptr, &ts) < 0 && errno == EINTR) {
  }
}

int Main(int argc, char** argv) {
  ServerOptions options;
  if (auto rc = ParseServerOptions(argc, argv, &options)) return *rc;

  // gRPC's and the exporter's threads inherit this mask, so the signals
  // reach only the sigwait below.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  grpc::EnableDefaultHealthCheckService(true);
  // Links the health protocol's descriptors in, so that reflection can
  // describe the default health service to grpcurl.
  (void)grpc::health::v1::HealthCheckRequest::descriptor();
  if (options.reflection)
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  RpcMetrics rpc_metrics;
  std::unique_ptr<grpc::Server> server;
  // Health turns SERVING once the first scan is done, unless a signal came
  // first.
  std::mutex health_mu;
  bool draining = false;
  TableRegistry registry(options, [&] {
    const size_t tables = registry.List().size();
    std::lock_guard lock(health_mu);
    if (draining) return;
    server->GetHealthCheckService()->SetServingStatus(kLookupService, true);
    server->GetHealthCheckService()->SetServingStatus("", true);
    Log("ready: ", tables, " tables");
  });

  LookupService lookup(&registry, &rpc_metrics, options);
  server = StartServer(options.listen, &lookup, options, "lookup service");
  if (server == nullptr) return 1;
  server->GetHealthCheckService()->SetServingStatus(kLookupService, false);
  server->GetHealthCheckService()->SetServingStatus("", false);

  AdminService admin(&registry, &rpc_metrics);
  std::unique_ptr<grpc::Server> admin_server;
  if (!options.admin_listen.empty()) {
    admin_server =
        StartServer(options.admin_listen, &admin, options, "admin service");
    if (admin_server == nullptr) return 1;
  }

  std::unique_ptr<prometheus::Exposer> exposer;
  auto collector = std::make_shared<MetricsCollector>(
      &rpc_metrics, [&registry](std::vector<prometheus::MetricFamily>* out) {
        registry.CollectMetrics(out);
      });
  if (!options.metrics_listen.empty()) {
    try {
      exposer = std::make_unique<prometheus::Exposer>(options.metrics_listen,
                                                      /*num_threads=*/1);
    } catch (const std::exception& e) {
      Log("cannot listen on ", options.metrics_listen,
          " (metrics): ", e.what());
      return 1;
    }
    exposer->RegisterCollectable(collector);
    const std::vector<int> ports = exposer->GetListeningPorts();
    Log("metrics listening on ",
        WithPort(options.metrics_listen, ports.empty() ? 0 : ports[0]));
  }

  if (absl::Status s = registry.Start(); !s.ok()) {
    Log(s.message());
    return 1;
  }

  int signal = 0;
  while (sigwait(&signals, &signal) != 0) {
  }
  Log("draining (", signal == SIGTERM ? "SIGTERM" : "SIGINT", "): health ",
      "NOT_SERVING for ", options.drain_seconds, " s");
  {
    std::lock_guard lock(health_mu);
    draining = true;
    server->GetHealthCheckService()->SetServingStatus(false);
  }
  SleepUnlessSignalled(signals, options.drain_seconds);
  // Refuses new RPCs, waits for in-flight ones up to the deadline, then
  // cancels what is left.
  server->Shutdown(After(options.shutdown_timeout_seconds));
  if (admin_server) admin_server->Shutdown(After(1));
  registry.Stop();
  exposer.reset();
  Log("stopped");
  return 0;
}

}  // namespace
}  // namespace roost

int main(int argc, char** argv) { return roost::Main(argc, argv); }
