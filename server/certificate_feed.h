// CertificateFeed: the key, certificate chain and client CA bundle that
// gRPC's TLS listeners serve, handed over by roost once it has read and
// checked them (TlsMaterial, tls.h). gRPC never reads an operator's file.
//
// Why not simpler: gRPC 1.51 (Debian 12) offers two certificate providers
// in its public API, static data (never changes) and a file watcher that
// reads paths on a thread of its own, every refresh interval, and takes
// whatever it finds: garbage, half a file, or a certificate copied over
// before its key breaks every new handshake until the files are right, and
// a FIFO at the path blocks that thread in open(2) for good (no later
// rotation is seen; the server hangs at exit joining the thread). A
// provider fed from code (grpc_tls_certificate_distributor) is internal in
// that version. So the feed keeps what roost checked in memory files of
// its own (memfd_create(2)) and points gRPC's file watcher at them through
// /proc/self/fd: those paths only ever hold a pair roost has checked.
//
// How a change stays whole: the key and the certificate chain are one
// memory file, whose path gRPC is given as both the key file and the
// certificate file (OpenSSL picks each out by its PEM type). Publish()
// writes a new memory file, seals it, gives it a modification time of its
// own (its generation: 1, 2, 3, ...) and puts it in place under the same
// descriptor number with one dup3(2). gRPC compares the file's
// modification time before and after reading it twice, and reads again
// when it changed, so it never pairs a key with another generation's
// certificate. The client CA bundle is a second memory file, replaced the
// same way.
//
// The memory files stay open until the process ends: gRPC's watcher
// thread belongs to every server built with Credentials() and may outlive
// this object, and must never find another file under those descriptor
// numbers.
//
// Thread-safety: Publish() from one thread at a time; Credentials() from
// any.
//
// Example:
//   ROOST_ASSIGN_OR_RETURN(TlsMaterial material, ReadTlsMaterial(files));
//   ROOST_ASSIGN_OR_RETURN(auto feed, CertificateFeed::Create(material));
//   builder.AddListeningPort(..., feed->Credentials());
//   on a checked change: feed->Publish(new_material);
#ifndef ROOST_SERVER_CERTIFICATE_FEED_H_
#define ROOST_SERVER_CERTIFICATE_FEED_H_

#include <grpcpp/security/server_credentials.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/tls.h"

namespace roost {

class CertificateFeed {
 public:
  // How often gRPC reads the memory files: a Publish() reaches new
  // handshakes within this long. Reading them costs no disk access.
  static constexpr unsigned kRefreshSeconds = 1;

  // Serves `material` from now on. Fails when the memory files cannot be
  // made or cannot be read back by their /proc/self/fd paths (/proc not
  // mounted).
  static absl::StatusOr<std::unique_ptr<CertificateFeed>> Create(
      const TlsMaterial& material);
  // Closes the memory files only if Create() failed before gRPC had them.
  ~CertificateFeed();
  CertificateFeed(const CertificateFeed&) = delete;
  CertificateFeed& operator=(const CertificateFeed&) = delete;

  // New handshakes get `material` within kRefreshSeconds; connections open
  // keep theirs. `material` has a client CA if and only if Create()'s had.
  // On an error the material in use stays.
  absl::Status Publish(const TlsMaterial& material);

  // TLS server credentials serving the material last published; with a
  // client CA, they require and verify a client certificate.
  std::shared_ptr<grpc::ServerCredentials> Credentials() const {
    return credentials_;
  }

 private:
  CertificateFeed(int identity_fd, int roots_fd)
      : identity_fd_(identity_fd), roots_fd_(roots_fd) {}
  // Replaces the memory file under descriptor `fd` with one holding `text`.
  absl::Status Put(int fd, const std::string& text);

  const int identity_fd_;  // the key, then the chain
  const int roots_fd_;     // the client CA bundle, or -1
  int64_t generation_ = 0;
  std::shared_ptr<grpc::ServerCredentials> credentials_;
};

}  // namespace roost

#endif  // ROOST_SERVER_CERTIFICATE_FEED_H_
