// CallGate: admission control for unary lookups (Get, MultiGet). A call is
// in flight from the moment its handler starts until gRPC is done with it,
// its response sent or the call cancelled; at most --max-in-flight are at
// once, and past that a new call is refused at once with RESOURCE_EXHAUSTED,
// before any work is done for it. A client that stops reading keeps its calls
// in flight (HTTP/2 flow control holds their responses), so the gate is what
// keeps such clients from holding an unbounded number of them; their bytes
// are bounded separately by ResponseMemory.
//
// Thread-safe: Enter() and Leave() are one atomic operation each.
//
// Example:
//   CallGate gate(options.max_in_flight);
//   if (!gate.Enter()) return too_many;   // counted as refused
//   ... when gRPC is done with the call (LookupService hands the slot to
//   the response's bytes: ResponseBuffer::Release(&gate)):
//   gate.Leave();
#ifndef ROOST_SERVER_CALL_GATE_H_
#define ROOST_SERVER_CALL_GATE_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "server/metrics.h"

namespace roost {

class CallGate {
 public:
  explicit CallGate(uint64_t max_in_flight) : max_(max_in_flight) {}
  CallGate(const CallGate&) = delete;
  CallGate& operator=(const CallGate&) = delete;

  // Admits a call, or refuses it (and counts the refusal) when `max` are in
  // flight. A call admitted must Leave() exactly once.
  bool Enter() {
    if (open_.fetch_add(1, std::memory_order_relaxed) >= max_) {
      open_.fetch_sub(1, std::memory_order_relaxed);
      refused_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    return true;
  }
  void Leave() { open_.fetch_sub(1, std::memory_order_relaxed); }

  uint64_t max() const { return max_; }
  // Calls in flight now (a refused call may show for an instant).
  uint64_t open() const { return open_.load(std::memory_order_relaxed); }
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }
  // roost_calls_in_flight and roost_calls_refused_total.
  void CollectMetrics(std::vector<prometheus::MetricFamily>* out) const {
    AddScalar(out, "roost_calls_in_flight",
              "Get, MultiGet and Scan calls in flight (at most "
              "--max-in-flight).",
              prometheus::MetricType::Gauge, static_cast<double>(open()));
    AddScalar(out, "roost_calls_refused_total",
              "Get, MultiGet and Scan calls refused because --max-in-flight "
              "were in flight.",
              prometheus::MetricType::Counter, static_cast<double>(refused()));
  }

 private:
  const uint64_t max_;
  std::atomic<uint64_t> open_{0};
  std::atomic<uint64_t> refused_{0};
};

}  // namespace roost

#endif  // ROOST_SERVER_CALL_GATE_H_
