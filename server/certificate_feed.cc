#include "server/certificate_feed.h"

#include <errno.h>
#include <fcntl.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "util/file.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// What gRPC opens to read the memory file under descriptor `fd`.
std::string ProcPath(int fd) { return StrCat("/proc/self/fd/", fd); }

absl::StatusOr<int> MakeMemoryFile() {
  const int fd = ::memfd_create("roost-tls", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    return absl::InternalError(
        StrCat("cannot make a memory file for TLS: ", std::strerror(errno)));
  }
  return fd;
}

// The one file gRPC reads both the key and the certificate chain from.
std::string Identity(const TlsMaterial& material) {
  return StrCat(material.key, material.cert_chain);
}

// Whether the memory file under `fd` reads back as `text` by its
// /proc/self/fd path, as gRPC will read it.
absl::Status ReadsBack(int fd, const std::string& text) {
  const std::string path = ProcPath(fd);
  absl::StatusOr<std::string> read = ReadRegularFile(path, text.size() + 1);
  if (!read.ok() || *read != text) {
    return absl::FailedPreconditionError(StrCat(
        "TLS needs /proc mounted (gRPC is handed the certificates by ", path,
        "): ",
        read.ok() ? "it reads back different bytes" : read.status().message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<CertificateFeed>> CertificateFeed::Create(
    const TlsMaterial& material) {
  absl::StatusOr<int> identity = MakeMemoryFile();
  if (!identity.ok()) return identity.status();
  int roots_fd = -1;
  if (material.mutual()) {
    absl::StatusOr<int> roots = MakeMemoryFile();
    if (!roots.ok()) {
      ::close(*identity);
      return roots.status();
    }
    roots_fd = *roots;
  }
  auto feed = std::unique_ptr<CertificateFeed>(
      new CertificateFeed(*identity, roots_fd));
  if (absl::Status s = feed->Publish(material); !s.ok()) return s;
  if (absl::Status s = ReadsBack(feed->identity_fd_, Identity(material));
      !s.ok()) {
    return s;
  }
  if (material.mutual()) {
    if (absl::Status s = ReadsBack(roots_fd, material.client_ca); !s.ok()) {
      return s;
    }
  }
  // gRPC's watcher reads the files once here, then every kRefreshSeconds.
  auto provider =
      std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
          ProcPath(feed->identity_fd_), ProcPath(feed->identity_fd_),
          material.mutual() ? ProcPath(roots_fd) : "", kRefreshSeconds);
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  if (material.mutual()) {
    options.watch_root_certs();
    options.set_cert_request_type(
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  } else {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  }
  feed->credentials_ = grpc::experimental::TlsServerCredentials(options);
  return feed;
}

CertificateFeed::~CertificateFeed() {
  if (credentials_ != nullptr) return;
  ::close(identity_fd_);
  if (roots_fd_ >= 0) ::close(roots_fd_);
}

absl::Status CertificateFeed::Publish(const TlsMaterial& material) {
  if (material.mutual() != (roots_fd_ >= 0)) {
    return absl::InvalidArgumentError(
        "a client CA bundle comes and goes only with a restart");
  }
  if (absl::Status s = Put(identity_fd_, Identity(material)); !s.ok()) {
    return s;
  }
  if (roots_fd_ >= 0) return Put(roots_fd_, material.client_ca);
  return absl::OkStatus();
}

absl::Status CertificateFeed::Put(int fd, const std::string& text) {
  absl::StatusOr<int> made = MakeMemoryFile();
  if (!made.ok()) return made.status();
  ScopedFd file(*made);
  if (absl::Status s = WriteAll(file.get(), text, "a TLS memory file");
      !s.ok()) {
    return s;
  }
  // A modification time no other generation has: gRPC reads again when it
  // changes between its reads of the key and of the certificate chain
  // (and takes 0 for an error, hence from 1 on).
  ++generation_;
  const timespec times[2] = {{static_cast<time_t>(generation_), 0},
                             {static_cast<time_t>(generation_), 0}};
  if (::futimens(file.get(), times) != 0 ||
      ::fcntl(file.get(), F_ADD_SEALS,
              F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0 ||
      ::dup3(file.get(), fd, O_CLOEXEC) < 0) {
    return absl::InternalError(
        StrCat("cannot replace a TLS memory file: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace roost
