// roost-server's "Limits" flags: what one request and one response may
// hold, and how much all calls in flight, and each client's share of them,
// may take at once (lookup_service.h, response_buffer.h, client_limits.h,
// call_gate.h).
//
// Example config file:
//   max-batch = 1000
//   max-message-size = "64M"
#ifndef ROOST_SERVER_LIMIT_OPTIONS_H_
#define ROOST_SERVER_LIMIT_OPTIONS_H_

#include <cstdint>

namespace CLI {
class App;
}

namespace roost {

struct LimitOptions {
  // Most keys in one MultiGet (or one StreamMultiGet message). The default
  // value is 10000.
  uint32_t max_batch = 10000;
  // Most entries one Scan returns; a Scan's limit 0 means this, and a
  // larger limit is refused (INVALID_ARGUMENT). The default value is 10000.
  uint32_t max_scan_keys = 10000;
  // Longest key accepted, in bytes. The default value is 65536.
  uint32_t max_key_size = 65536;
  // Largest request received, in bytes (gRPC's receive limit): 10,000 keys
  // of up to about 400 bytes. The default value is 4 MiB.
  uint32_t max_request_size = 4 << 20;
  // Largest response sent, in bytes: a response that would be larger is
  // refused (RESOURCE_EXHAUSTED) before any value is copied. roost-load
  // refuses values over 16 MiB by default, so any one value fits. The
  // default value is 32 MiB.
  uint32_t max_message_size = 32 << 20;
  // Bytes all responses in flight may hold at once (built and not yet
  // taken by their clients); past it responses are refused
  // (RESOURCE_EXHAUSTED) until some are gone. The default value is 1 GiB.
  uint64_t max_response_memory = uint64_t{1} << 30;
  // Bytes of responses in flight one client may hold: one connection, and
  // all the connections of one TLS client certificate together; past it
  // that client's responses are refused (RESOURCE_EXHAUSTED) while others'
  // are not. 0: a quarter of max_response_memory, or max_message_size if
  // that is more. The default value is 0.
  uint64_t max_client_response_memory = 0;
  // gRPC's own memory (connection and request buffers), as a resource
  // quota. The default value is 1 GiB.
  uint64_t grpc_memory = uint64_t{1} << 30;
  // StreamMultiGet calls open at once over all connections; past it a new
  // one is refused (RESOURCE_EXHAUSTED). The default value is 10000.
  uint32_t max_streams = 10000;
  // Health Watch calls open at once (each holds a call for as long as its
  // client likes, and needs no credentials); past it a new one is refused
  // (RESOURCE_EXHAUSTED). The default value is 100.
  uint32_t max_health_watches = 100;
  // Get, MultiGet and Scan calls in flight at once (from their handler's
  // start until the response, or a Scan's last message, is sent); past it a
  // new one is refused
  // (RESOURCE_EXHAUSTED) before any work. The default value is 20000.
  uint32_t max_in_flight = 20000;
  // Get, MultiGet and Scan calls one client (as for
  // max_client_response_memory) may have in flight; past it that client's
  // calls are refused. 0: a quarter of max_in_flight. The default value is
  // 0.
  uint32_t max_client_in_flight = 0;
  // Cancel a call whose client has not taken its response for this long (it
  // stopped reading, or never opened its flow-control window): a unary
  // call's response, a StreamMultiGet's or a Scan's next message. The
  // default value is 30 seconds.
  double send_timeout_seconds = 30;
};

// Adds the "Limits" group (--max-batch, --max-scan-keys, --max-key-size,
// --max-request-size, --max-message-size, --max-response-memory,
// --max-client-response-memory, --grpc-memory, --max-streams,
// --max-health-watches, --max-in-flight, --max-client-in-flight,
// --send-timeout) to `app`, bound to `*options`.
void AddLimitFlags(CLI::App& app, LimitOptions* options);

}  // namespace roost

#endif  // ROOST_SERVER_LIMIT_OPTIONS_H_
