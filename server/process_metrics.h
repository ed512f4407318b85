// The process's own metrics, under the names every other Prometheus client
// gives them (client_golang's and client_python's process collectors), so
// that dashboards and alerts written for those work unchanged:
// process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_open_fds, process_max_fds and
// process_start_time_seconds. Read from /proc/self and getrlimit when
// Prometheus scrapes; a figure that cannot be read is left out, not
// reported as 0.
//
// Example:
//   std::vector<prometheus::MetricFamily> out;
//   CollectProcessMetrics(&out);
#ifndef ROOST_SERVER_PROCESS_METRICS_H_
#define ROOST_SERVER_PROCESS_METRICS_H_

#include <string>
#include <vector>

#include "prometheus/metric_family.h"

namespace roost {

void CollectProcessMetrics(std::vector<prometheus::MetricFamily>* out);

// roost_build_info{revision,version}: a gauge of 1 naming the build.
void AddBuildInfo(std::vector<prometheus::MetricFamily>* out,
                  std::string version, std::string revision);

}  // namespace roost

#endif  // ROOST_SERVER_PROCESS_METRICS_H_
