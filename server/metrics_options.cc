#include "server/metrics_options.h"

#include <CLI/CLI.hpp>

namespace roost {

void AddMetricsFlags(CLI::App& app, MetricsOptions* o) {
  // --help lists each group's flags in the order they are added here.
  app.option_defaults()->group("Metrics");
  app.add_option("--resident-refresh", o->resident_refresh_seconds,
                 "Refresh roost_table_resident_bytes every SECONDS (1 to "
                 "86400)")
      ->check(CLI::Range(1.0, 86400.0));
  app.add_option("--metrics-threads", o->metrics_threads,
                 "Threads that build /metrics answers")
      ->check(CLI::Range(1u, 64u));
  app.add_option("--metrics-request-timeout",
                 o->metrics_request_timeout_seconds,
                 "A /metrics connection's SECONDS for its TLS handshake and "
                 "request together, and again for taking the answer")
      ->check(CLI::Range(0.1, 60.0));
}

}  // namespace roost
