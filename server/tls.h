// TLS for roost-server's listeners: credentials for the gRPC ones (lookup,
// admin) that re-read the certificate and key when they change on disk, an
// OpenSSL context for the /metrics endpoint over TLS (metrics_http.h), and
// a watch of the files that tells when that context must be built again.
//
// The files are checked with OpenSSL at start (a certificate, a key that
// belongs to it, a CA bundle that parses), so that a mistake is one clear
// line and exit 1 instead of handshakes failing later. A rotation is
// checked the same way: a key and certificate that do not match yet (one
// file renamed into place before the other) are not taken until they do;
// gRPC's file watcher reads them on its own schedule (--tls-refresh).
//
// Example:
//   TlsFiles files{.cert = "tls.crt", .key = "tls.key", .client_ca = ""};
//   auto watch = TlsWatch::Start(files);
//   builder.AddListeningPort(..., ServerCredentials(files, 60));
//   every second: if ((*watch)->Refresh()) rebuild MakeSslContext(files);
#ifndef ROOST_SERVER_TLS_H_
#define ROOST_SERVER_TLS_H_

#include <grpcpp/security/server_credentials.h>
#include <openssl/types.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "prometheus/metric_family.h"

namespace roost {

struct TlsFiles {
  std::string cert;       // PEM certificate chain, leaf first
  std::string key;        // PEM private key
  std::string client_ca;  // PEM CA bundle; empty: clients need no cert
  bool enabled() const { return !cert.empty(); }
  bool mutual() const { return !client_ca.empty(); }
};

// Plaintext credentials when `files` is not enabled; else TLS whose key and
// certificate (and client CA) gRPC re-reads every `refresh_seconds`, and
// which, with a client CA, requires and verifies a client certificate.
std::shared_ptr<grpc::ServerCredentials> ServerCredentials(
    const TlsFiles& files, unsigned refresh_seconds);

// Whether HOST:PORT names a loopback host (127.0.0.0/8, ::1, localhost).
bool IsLoopbackAddress(const std::string& address);

// An OpenSSL server context (TLS 1.2 and up) with `files`' certificate and
// key, requiring and verifying a client certificate when `files` has a
// client CA.
struct SslCtxFree {
  void operator()(ssl_ctx_st* ctx) const;
};
using SslContext = std::unique_ptr<ssl_ctx_st, SslCtxFree>;
absl::StatusOr<SslContext> MakeSslContext(const TlsFiles& files);

class TlsWatch {
 public:
  // Checks the files.
  static absl::StatusOr<std::unique_ptr<TlsWatch>> Start(const TlsFiles& files);

  // Re-reads the files: true when they changed and the new ones are good
  // (logged); a bad change is logged and counted once, and the last good
  // files stay in use.
  bool Refresh();

  void CollectMetrics(std::vector<prometheus::MetricFamily>* out) const;

 private:
  explicit TlsWatch(TlsFiles files) : files_(std::move(files)) {}
  // Reads and checks the files; their text in *pem, the certificate's end
  // of validity in *not_after.
  absl::Status Check(std::string* pem, int64_t* not_after) const;

  const TlsFiles files_;
  std::string last_pem_;
  std::atomic<int64_t> not_after_{0};
  std::atomic<uint64_t> reloads_ok_{0};
  std::atomic<uint64_t> reloads_failed_{0};
};

}  // namespace roost

#endif  // ROOST_SERVER_TLS_H_
