// roost-server's "Metrics" flags: how the /metrics endpoint
// (metrics_http.h) builds its answers and how often the registry refreshes
// the resident bytes it reports. Its address is --metrics-listen
// (listener_options.h), its TLS --metrics-tls (security_options.h).
//
// Example config file:
//   metrics-threads = 2
#ifndef ROOST_SERVER_METRICS_OPTIONS_H_
#define ROOST_SERVER_METRICS_OPTIONS_H_

#include <cstdint>

namespace CLI {
class App;
}

namespace roost {

struct MetricsOptions {
  // Refresh roost_table_resident_bytes (mincore) this often. The default
  // value is 10 seconds.
  double resident_refresh_seconds = 10;
  // Threads that build /metrics answers, and a /metrics connection's time
  // for its TLS handshake and request together (and again for taking the
  // answer). The default values are 4 and 2 seconds.
  uint32_t metrics_threads = 4;
  double metrics_request_timeout_seconds = 2;
};

// Adds the "Metrics" group (--resident-refresh, --metrics-threads,
// --metrics-request-timeout) to `app`, bound to `*options`.
void AddMetricsFlags(CLI::App& app, MetricsOptions* options);

}  // namespace roost

#endif  // ROOST_SERVER_METRICS_OPTIONS_H_
