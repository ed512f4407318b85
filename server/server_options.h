// roost-server's settings: flags, also readable from a config file (TOML or
// INI, `--config FILE`; flags on the command line win).
//
// Example config file:
//   data-dir = "/var/lib/roost"
//   listen = "0.0.0.0:50051"
//   keep-versions = 3
#ifndef ROOST_SERVER_SERVER_OPTIONS_H_
#define ROOST_SERVER_SERVER_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "server/repository_options.h"
#include "storage/file.h"

namespace roost {

struct ServerOptions {
  // Where tables are published: DATA_DIR/<table>/v<N>/. Required.
  std::string data_dir;
  // The lookup service's address; port 0 picks a free port. The default
  // value is "127.0.0.1:50051".
  std::string listen = "127.0.0.1:50051";
  // The admin service's address (rollback); empty turns it off. The default
  // value is "127.0.0.1:50052".
  std::string admin_listen = "127.0.0.1:50052";
  // The Prometheus endpoint's address (/metrics); empty turns it off. The
  // default value is "127.0.0.1:9464".
  std::string metrics_listen = "127.0.0.1:9464";
  // Serve this shard of every sharded table version (roost-load build
  // --shards N): its file, shard-000I-of-000N.sst. Unsharded versions are
  // served as always. Without it, a sharded version is refused (a load
  // failure, reason "unsupported"), never served in part. The default value
  // is std::nullopt.
  std::optional<uint32_t> shard;
  // Pulling this server's shard of each table from a table repository
  // (--repository and its flags: repository_options.h).
  RepositoryOptions repository;
  // How tables are brought into memory. The default value is kMmap.
  LoadMode load_mode = LoadMode::kMmap;
  // Verify every checksum of a version before serving it (the header is
  // always checked). The default value is true.
  bool verify_checksums = true;
  // Bytes of decompressed data blocks kept for the compressed block tables,
  // in one cache every table shares (storage/block/block_cache.h); 0 keeps
  // none, and each lookup of a compressed block decompresses it again.
  // Uncompressed tables are read in place and use none. The default value
  // is 256 MiB.
  uint64_t block_cache_bytes = uint64_t{256} << 20;
  // Rescan the data directory this often, whether or not inotify reported
  // anything. The default value is 5 seconds.
  double poll_interval_seconds = 5;
  // Watch the data directory with inotify. The default value is true.
  bool inotify = true;
  // Versions kept on disk per table, newest first (the serving and pinned
  // ones are always kept); older ones are deleted. 0 keeps all. The default
  // value is 0.
  uint32_t keep_versions = 0;
  // Most keys in one MultiGet (or one StreamMultiGet message). The default
  // value is 10000.
  uint32_t max_batch = 10000;
  // After a swap, keep answering requests that name the version replaced
  // (lookup.proto, "Versions") for this long; it stays mapped meanwhile. 0
  // answers only the serving version. The default value is 30 seconds.
  double version_grace_seconds = 30;
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
  // Connections open at once on the lookup service; past it new ones are
  // closed as soon as they are accepted. 0: the file descriptor limit less
  // an eighth (at least 64) for tables, watches and the metrics endpoint,
  // and less max_admin_connections. The default value is 0.
  uint32_t max_connections = 0;
  // Connections open at once on the admin service, a budget of its own so
  // that a flood on the lookup port never shuts the operator out. The
  // default value is 16.
  uint32_t max_admin_connections = 16;
  // Close a connection that has not finished its TLS handshake and sent
  // its HTTP/2 preface and SETTINGS within this long (gRPC's own default is
  // 120 s). The default value is 10 seconds.
  double handshake_timeout_seconds = 10;
  // Close a connection with no call in flight for this long. 0 never does.
  // The default value is 300 seconds.
  double max_connection_idle_seconds = 300;
  // Ask clients to reconnect after this long (GOAWAY), and close the
  // connection `max_connection_age_grace_seconds` later. 0 never does. The
  // default value is 0.
  double max_connection_age_seconds = 0;
  double max_connection_age_grace_seconds = 60;
  // Ping an idle client this often, and close the connection when a ping is
  // not answered within keepalive_timeout_seconds. The default values are
  // 60 and 20 seconds.
  double keepalive_seconds = 60;
  double keepalive_timeout_seconds = 20;
  // Calls (HTTP/2 streams) one connection may have open at once; more
  // wait in the client. The default value is 100.
  uint32_t max_concurrent_streams = 100;
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
  // On SIGTERM/SIGINT: keep serving this long with health NOT_SERVING, so
  // that load balancers move away. The default value is 5 seconds.
  double drain_seconds = 5;
  // Then wait this long for in-flight RPCs (and version loads) before
  // cancelling them. The default value is 10 seconds.
  double shutdown_timeout_seconds = 10;
  // Refresh roost_table_resident_bytes (mincore) this often. The default
  // value is 10 seconds.
  double resident_refresh_seconds = 10;
  // Serve gRPC server reflection. The default value is true.
  bool reflection = true;
  // Most table directories served; more are ignored (and logged). The
  // default value is 1024.
  uint32_t max_tables = 1024;
  // Threads that load (open and verify) versions. The default value is 2.
  uint32_t load_threads = 2;
  // Report the registry stalled (metric roost_registry_stalled, health of
  // roost.v1.Registry) when its thread has not come round its loop for
  // this long. The default value is 120 seconds.
  double stall_timeout_seconds = 120;
  // Threads that build /metrics answers, and a /metrics connection's time
  // for its TLS handshake and request together (and again for taking the
  // answer). The default values are 4 and 2 seconds.
  uint32_t metrics_threads = 4;
  double metrics_request_timeout_seconds = 2;

  // TLS (docs/operations.md, "Security"). With a certificate and key (PEM)
  // every listener speaks TLS only; with a client CA too, clients must
  // present a certificate it signed (mutual TLS). The files are re-read
  // when they change, every `tls_refresh_seconds`. The defaults are empty
  // (plaintext) and 60 seconds.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  uint32_t tls_refresh_seconds = 60;
  // /metrics speaks TLS too when the others do. The default value is true.
  bool metrics_tls = true;
  // The admin service on a non-loopback address requires mutual TLS unless
  // this is set (and loudly logged). The default value is false.
  bool admin_allow_insecure_remote = false;
  // Who may read which tables, and who may use the admin service: a JSON
  // policy file, re-read when it changes. Empty: everyone who can connect
  // may read every table. The default value is empty.
  std::string access_policy;
};

// Parses the command line (and the --config file it names) into *options.
// Returns an exit code when the process should stop here: 0 after --help,
// 64 (EX_USAGE) after printing what was wrong.
std::optional<int> ParseServerOptions(int argc, char** argv,
                                      ServerOptions* options);

}  // namespace roost

#endif  // ROOST_SERVER_SERVER_OPTIONS_H_
