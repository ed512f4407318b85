// TLS for roost-server's listeners: the certificate, key and client CA
// files read and checked by roost (TlsMaterial), one watch of them that
// hands every pair it has checked to the gRPC listeners (through a
// CertificateFeed, certificate_feed.h) and to /metrics (MakeSslContext),
// and loopback detection for the admin port.
//
// The files are checked with OpenSSL at start (regular files of bounded
// size, every PEM certificate in them whole, a key that belongs to the
// certificate, a client CA bundle with at least one certificate), so that
// a mistake is one clear line and exit 1 instead of handshakes failing
// later. A change is checked the same way, every --tls-refresh: a file
// that is bad, half written, or a key and certificate that do not match
// yet (one file copied over before the other) is refused, logged and
// counted, and the last good pair stays in use on every listener until
// the files are right. Nothing else reads the files: gRPC is handed what
// roost has checked, never their paths.
//
// Example:
//   TlsFiles files{.cert = "tls.crt", .key = "tls.key", .client_ca = ""};
//   ROOST_ASSIGN_OR_RETURN(auto watch, TlsWatch::Start(files));
//   builder.AddListeningPort(..., watch->Credentials());
//   http.SetContext(*MakeSslContext(watch->material()));
//   every --tls-refresh: if (watch->Refresh()) {
//     http.SetContext(*MakeSslContext(watch->material()));
//   }
#ifndef ROOST_SERVER_TLS_H_
#define ROOST_SERVER_TLS_H_

#include <grpcpp/security/server_credentials.h>
#include <openssl/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "prometheus/metric_family.h"

namespace roost {

class CertificateFeed;

struct TlsFiles {
  std::string cert;       // PEM certificate chain, leaf first
  std::string key;        // PEM private key
  std::string client_ca;  // PEM CA bundle; empty: clients need no cert
  bool enabled() const { return !cert.empty(); }
  bool mutual() const { return !client_ca.empty(); }
};

// A certificate chain, its key and the client CA bundle as roost checked
// them, written out again by OpenSSL from what it parsed (PEM, nothing
// else in them: no text between blocks, no unparsed block).
struct TlsMaterial {
  std::string key;         // one PKCS #8 private key
  std::string cert_chain;  // the certificates, leaf first
  std::string client_ca;   // the CA certificates; empty without mutual TLS
  // When the leaf certificate stops being valid, in seconds since the
  // epoch.
  int64_t not_after = 0;

  bool mutual() const { return !client_ca.empty(); }
  bool operator==(const TlsMaterial&) const = default;
};

// Reads and checks `files`. Each file must be a regular file (a FIFO or a
// device is refused without being read) of at most 16 MiB; every PEM
// certificate block in the certificate file and in the CA bundle must
// parse; the key must parse, have no passphrase and belong to the first
// certificate; the CA bundle must hold a certificate. The error names the
// flag, the file and what is wrong.
absl::StatusOr<TlsMaterial> ReadTlsMaterial(const TlsFiles& files);

// Whether HOST:PORT names a loopback host (127.0.0.0/8, ::1, localhost).
bool IsLoopbackAddress(const std::string& address);

// An OpenSSL server context (TLS 1.2 and up) with `material`'s certificate
// chain and key, requiring and verifying a client certificate when
// `material` has a client CA.
struct SslCtxFree {
  void operator()(ssl_ctx_st* ctx) const;
};
using SslContext = std::unique_ptr<ssl_ctx_st, SslCtxFree>;
absl::StatusOr<SslContext> MakeSslContext(const TlsMaterial& material);

// TlsWatch: the TLS files of one server, the pair in use, and its metrics
// (roost_tls_*). Refresh() and material() belong to one thread (the
// server's main loop); Credentials() and CollectMetrics() may be called
// from any.
class TlsWatch {
 public:
  // Reads and checks the files (ReadTlsMaterial) and hands them to the
  // credentials. Errors say which file is wrong and why.
  static absl::StatusOr<std::unique_ptr<TlsWatch>> Start(const TlsFiles& files);
  ~TlsWatch();

  // TLS credentials for the gRPC listeners (requiring and verifying a
  // client certificate with a client CA) that serve the pair in use.
  std::shared_ptr<grpc::ServerCredentials> Credentials() const;

  // The pair in use: the last good one.
  const TlsMaterial& material() const { return material_; }

  // Re-reads the files. True when they changed, are good and are now in
  // use (logged): new handshakes on the gRPC listeners get them within a
  // second, and the caller rebuilds /metrics' context. A bad change is
  // logged and counted once (again only when what is wrong changes), and
  // the last good pair stays in use on every listener.
  bool Refresh();

  void CollectMetrics(std::vector<prometheus::MetricFamily>* out) const;

 private:
  TlsWatch(TlsFiles files, TlsMaterial material,
           std::unique_ptr<CertificateFeed> feed);

  const TlsFiles files_;
  TlsMaterial material_;
  const std::unique_ptr<CertificateFeed> feed_;
  // What was wrong with the files at the last Refresh(); empty while they
  // are good.
  std::string error_;
  std::atomic<int64_t> not_after_{0};
  std::atomic<bool> rejected_{false};
  std::atomic<uint64_t> reloads_ok_{0};
  std::atomic<uint64_t> reloads_failed_{0};
};

}  // namespace roost

#endif  // ROOST_SERVER_TLS_H_
