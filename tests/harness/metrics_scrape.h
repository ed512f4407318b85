// Fetching /metrics over a plain socket and parsing the Prometheus text
// format, for tests that check what roost-server exports. No HTTP library:
// the exporter answers one GET per connection.
//
// Example:
//   std::string error;
//   auto body = HttpGet(port, "/metrics", &error);
//   Metrics m = ParsePrometheusText(*body);
//   double hits = MetricOr(m,
//   R"(roost_lookups_total{result="hit",table="t"})");
#ifndef ROOST_TESTS_HARNESS_METRICS_SCRAPE_H_
#define ROOST_TESTS_HARNESS_METRICS_SCRAPE_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace roost::testing {

// Parsed Prometheus text: "name{k1="v1",k2="v2"}" (labels sorted by name,
// values unescaped; just "name" without labels) -> value.
using Metrics = std::map<std::string, double>;
Metrics ParsePrometheusText(std::string_view text);
// The value of `series` in `metrics`, or `fallback` when it is absent.
double MetricOr(const Metrics& metrics, const std::string& series,
                double fallback = 0);

// A plain HTTP/1.0 GET of http://127.0.0.1:PORT/PATH. Returns the body of a
// 200 answer, or nullopt (with `*error` saying why).
std::optional<std::string> HttpGet(int port, const std::string& path,
                                   std::string* error);

}  // namespace roost::testing

#endif  // ROOST_TESTS_HARNESS_METRICS_SCRAPE_H_
