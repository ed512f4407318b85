#include "server/limit_options.h"

#include <CLI/CLI.hpp>

#include "util/cli.h"

namespace roost {

void AddLimitFlags(CLI::App& app, LimitOptions* o) {
  // --help lists each group's flags in the order they are added here.
  app.option_defaults()->group("Limits");
  app.add_option("--max-batch", o->max_batch,
                 "Most keys in one MultiGet (or StreamMultiGet message)")
      ->check(CLI::Range(1u, 10000000u));
  app.add_option("--max-scan-keys", o->max_scan_keys,
                 "Most entries one Scan returns (its limit 0 means this; a "
                 "larger limit is INVALID_ARGUMENT)")
      ->check(CLI::Range(1u, 100000000u));
  app.add_option("--max-key-size", o->max_key_size,
                 "Longest key accepted, in bytes")
      ->type_name("BYTES")
      ->transform(SizeValue())
      ->check(CLI::Range(1u, 1u << 30));
  app.add_option("--max-request-size", o->max_request_size,
                 "Largest request received, in bytes")
      ->type_name("BYTES")
      ->transform(SizeValue())
      ->check(CLI::Range(1024u, 2147483647u));
  app.add_option("--max-message-size", o->max_message_size,
                 "Largest response sent, in bytes; larger ones are refused "
                 "before any value is copied (1k to 2G less 1 byte)")
      ->type_name("BYTES")
      ->transform(SizeValue())
      ->check(CLI::Range(1024u, 2147483647u));
  app.add_option("--max-response-memory", o->max_response_memory,
                 "Bytes all responses in flight may hold at once")
      ->type_name("BYTES")
      ->transform(SizeValue())
      ->check(CLI::Range(uint64_t{1} << 20, uint64_t{1} << 50));
  app.add_option("--max-client-response-memory", o->max_client_response_memory,
                 "Bytes of responses in flight one client (a connection; all "
                 "connections of one TLS client certificate) may hold; more "
                 "are refused for that client alone. 0: a quarter of "
                 "--max-response-memory, or --max-message-size if more")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 50));
  app.add_option("--grpc-memory", o->grpc_memory,
                 "gRPC's own memory (connections, request buffers), in "
                 "bytes; the Redis front end's commands being received are "
                 "held to it too, counted apart")
      ->type_name("BYTES")
      ->transform(SizeValue())
      ->check(CLI::Range(uint64_t{16} << 20, uint64_t{1} << 50));
  app.add_option("--max-streams", o->max_streams,
                 "StreamMultiGet calls open at once over all connections; "
                 "more are refused (RESOURCE_EXHAUSTED)")
      ->check(CLI::Range(1u, 10000000u));
  app.add_option("--max-health-watches", o->max_health_watches,
                 "Health Watch calls open at once over all connections; more "
                 "are refused (RESOURCE_EXHAUSTED)")
      ->check(CLI::Range(1u, 1000000u));
  app.add_option("--max-in-flight", o->max_in_flight,
                 "Get, MultiGet and Scan calls in flight at once (until "
                 "their response is sent); more are refused "
                 "(RESOURCE_EXHAUSTED)")
      ->check(CLI::Range(1u, 100000000u));
  app.add_option("--max-client-in-flight", o->max_client_in_flight,
                 "Get, MultiGet and Scan calls one client (as for "
                 "--max-client-response-memory) may have in flight; more are "
                 "refused for that client alone. 0: a quarter of "
                 "--max-in-flight")
      ->check(CLI::Range(0u, 100000000u));
  app.add_option("--send-timeout", o->send_timeout_seconds,
                 "Cancel a call whose client has not taken its response (a "
                 "Get's or MultiGet's, a StreamMultiGet's or Scan's next "
                 "message) for SECONDS")
      ->check(CLI::Range(0.1, 3600.0));
}

}  // namespace roost
