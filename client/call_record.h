// CallRecord: what the routing client says about each call it made, for
// the application's metrics and traces (ClusterClientOptions::on_call). The
// names and meanings are those every roost client uses
// (tests/conformance/README.md, "Client metrics"): a callback leaves the
// choice of metrics library to the program, as C++ has no standard one.
//
// Example (Prometheus' C++ client, say):
//   options.on_call = [&](const CallRecord& r) {
//     requests.Add({{"method", std::string(r.method)}}).Increment();
//     if (r.code != absl::StatusCode::kOk) errors.Add(...).Increment();
//     seconds.Add(...).Observe(r.seconds);
//   };
#ifndef ROOST_CLIENT_CALL_RECORD_H_
#define ROOST_CLIENT_CALL_RECORD_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

#include "absl/status/status.h"

namespace roost {

struct CallRecord {
  std::string_view method;  // "get", "multi_get" or "scan"
  std::string_view table;
  size_t keys = 0;  // 1 for a Get, the batch's size, 0 for a Scan
  absl::StatusCode code = absl::StatusCode::kOk;  // how the call ended
  double seconds = 0;    // from the call to its answer or error
  uint32_t hedges = 0;   // hedged attempts it sent
  uint32_t retries = 0;  // attempts sent again after a retryable failure
  // Keys that partial answers marked with their shard's error.
  size_t partial_keys = 0;
  std::string_view version;  // the version that answered ("" on an error)
  // The answer came from another version of the table than this client's
  // previous answer of it.
  bool version_switched = false;
};

// Called on the thread that made the call (a coalesced Get's: the
// coalescer's), after the call and before it returns; it must be
// thread-safe and quick.
using CallObserver = std::function<void(const CallRecord&)>;

}  // namespace roost

#endif  // ROOST_CLIENT_CALL_RECORD_H_
