// RedisFront: roost's tables read through the Redis protocol (RESP2), so
// that any Redis client, in any language, can look keys up: GET, MGET and
// EXISTS, read-only, beside the gRPC lookup service and on the same tables.
//
// Why a second front end: a unary gRPC call costs the server about 25 us of
// CPU whatever it does (bench/noop_server answers without a lookup in the
// same time), two and a half times a Redis GET; the per-call work is
// gRPC's (HTTP/2 framing, its call objects, a thread hop). A Redis command
// is a few bytes read from a socket, parsed in place and answered into one
// buffer, with pipelined commands answered in one write. docs/redis.md has
// the argument and the figures.
//
// Keys name their table: "TABLE:KEY" (split at the first ':'), or, with
// --redis-table NAME, every key is of that table. A command runs to
// completion on its connection's event loop (--redis-threads loops, each a
// thread with its own epoll; the listener deals connections out in turn):
// it pins each table's serving version once, looks its keys up in the
// mapped file (MultiGet), and writes the reply. Write commands are refused
// with READONLY, unknown ones with ERR, as Redis words them.
//
// Limits: connections count against --max-connections with the gRPC
// lookup port's; a command of more than --max-request-size bytes closes its
// connection; a command past --max-batch keys or a key past --max-key-size
// is refused; the bytes of commands being received, on every connection
// together, are held to --grpc-memory (as gRPC's own buffers are), and a
// connection whose command would pass that is closed; a reply is counted
// against the response memory budget until it is sent and refused past
// --max-message-size; a connection stops being read while its unsent
// replies pass 1 MiB, and is closed when a reply waits --send-timeout or
// it is idle --max-connection-idle. A command that is not RESP closes its
// connection after an "ERR Protocol error" reply.
//
// Security, as on the gRPC port: with --tls-cert the front end speaks TLS
// only (redis-cli --tls), from the certificate and key roost-server checked
// and rotates (SetContext; connections open keep their session), and a
// handshake not done within --handshake-timeout closes its connection.
// With --tls-client-ca a client must present a certificate of that CA, and
// under --access-policy its names identify the client as they do on gRPC;
// AUTH adds a token to them. A connection with neither reads only the
// policy's anonymous tables.
//
// Commands are counted as grpc_server_* metrics with grpc_service="redis"
// and the table lookup metrics as any lookup's.
//
// Example:
//   RedisFront front(&registry, &metrics, &memory, options, access);
//   if (tls) front.SetContext(*MakeSslContext(watch->material()));
//   ROOST_RETURN_IF_ERROR(front.Start(listener.get(), &connections));
//   on rotation: front.SetContext(*MakeSslContext(watch->material()));
//   ...
//   front.Stop();
#ifndef ROOST_SERVER_REDIS_FRONT_H_
#define ROOST_SERVER_REDIS_FRONT_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "prometheus/metric_family.h"
#include "server/access_policy.h"
#include "server/listener.h"
#include "server/metrics.h"
#include "server/response_buffer.h"
#include "server/server_options.h"
#include "server/table_registry.h"
#include "server/tls.h"

namespace roost {

class RedisFront {
 public:
  // `access` may be null: every client may read every table. With
  // options.tls_cert, connections speak TLS, and are served once
  // SetContext() has given a context (dropped before).
  RedisFront(TableRegistry* registry, RpcMetrics* metrics,
             ResponseMemory* memory, const ServerOptions& options,
             AccessControl* access);
  ~RedisFront();  // Stop()s
  RedisFront(const RedisFront&) = delete;
  RedisFront& operator=(const RedisFront&) = delete;

  // Starts the event loops, and `listener` handing them its connections
  // (counted in `limit`). Both must outlive Stop().
  absl::Status Start(Listener* listener, ConnectionLimit* limit);
  // Closes every connection and joins the loops. The listener must be
  // stopped first.
  void Stop();

  // The TLS context new connections are served with (those open keep
  // theirs). Any thread.
  void SetContext(SslContext context);

  // Connections open now.
  size_t connections_open() const { return open_.load(); }

  // roost_redis_input_bytes and roost_redis_inputs_refused_total.
  void CollectMetrics(std::vector<prometheus::MetricFamily>* out) const;

 private:
  class Loop;
  friend class Loop;

  std::shared_ptr<ssl_ctx_st> Context() const;

  TableRegistry* const registry_;
  RpcMetrics* const metrics_;
  ResponseMemory* const memory_;
  const ServerOptions options_;
  AccessControl* const access_;
  const bool tls_;
  mutable std::mutex context_mu_;
  std::shared_ptr<ssl_ctx_st> context_;  // guarded by context_mu_
  std::vector<std::unique_ptr<Loop>> loops_;
  std::atomic<size_t> next_loop_{0};
  std::atomic<size_t> open_{0};
  // The room of every connection's `in`, and the connections closed
  // because it would pass --grpc-memory.
  std::atomic<uint64_t> input_held_{0};
  std::atomic<uint64_t> inputs_refused_{0};
};

}  // namespace roost

#endif  // ROOST_SERVER_REDIS_FRONT_H_
