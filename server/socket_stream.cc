#include "server/socket_stream.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace roost {

void SocketStream::SslFree::operator()(ssl_st* ssl) const { SSL_free(ssl); }

SocketStream::SocketStream(int fd) : fd_(fd) {}

SocketStream::~SocketStream() {
  ssl_.reset();
  ::close(fd_);
}

bool SocketStream::StartTls(ssl_ctx_st* context) {
  ssl_.reset(SSL_new(context));
  if (ssl_ == nullptr || SSL_set_fd(ssl_.get(), fd_) != 1) {
    ssl_.reset();
    ERR_clear_error();
    return false;
  }
  SSL_set_accept_state(ssl_.get());
  // Write() may send part of what it is given, and be given the rest from
  // another address (a buffer that grew meanwhile).
  SSL_set_mode(ssl_.get(), SSL_MODE_ENABLE_PARTIAL_WRITE |
                               SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  return true;
}

ssize_t SocketStream::SslOutcome(int result) {
  switch (SSL_get_error(ssl_.get(), result)) {
    case SSL_ERROR_WANT_READ:
      wait_ = Wait::kRead;
      return kWouldBlock;
    case SSL_ERROR_WANT_WRITE:
      wait_ = Wait::kWrite;
      return kWouldBlock;
    case SSL_ERROR_ZERO_RETURN:
      return kEnd;
    default:
      // The error queue is per thread and shared by every stream on it.
      ERR_clear_error();
      return kFailed;
  }
}

ssize_t SocketStream::Handshake() {
  if (ssl_ == nullptr) return kDone;
  const int result = SSL_accept(ssl_.get());
  if (result == 1) return kDone;
  const ssize_t outcome = SslOutcome(result);
  return outcome == kWouldBlock ? kWouldBlock : kFailed;
}

ssize_t SocketStream::Read(char* buffer, size_t size) {
  if (ssl_ != nullptr) {
    const int n = SSL_read(ssl_.get(), buffer,
                           static_cast<int>(std::min<size_t>(size, 1 << 30)));
    return n > 0 ? n : SslOutcome(n);
  }
  for (;;) {
    const ssize_t n = ::recv(fd_, buffer, size, 0);
    if (n > 0) return n;
    if (n == 0) return kEnd;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      wait_ = Wait::kRead;
      return kWouldBlock;
    }
    return kFailed;
  }
}

ssize_t SocketStream::Write(std::string_view bytes) {
  if (ssl_ != nullptr) {
    const int n =
        SSL_write(ssl_.get(), bytes.data(),
                  static_cast<int>(std::min<size_t>(bytes.size(), 1 << 30)));
    if (n > 0) return n;
    const ssize_t outcome = SslOutcome(n);
    return outcome == kWouldBlock ? kWouldBlock : kFailed;
  }
  for (;;) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n >= 0) return n > 0 ? n : kWouldBlock;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      wait_ = Wait::kWrite;
      return kWouldBlock;
    }
    return kFailed;
  }
}

bool SocketStream::HasPending() const {
  return ssl_ != nullptr && SSL_has_pending(ssl_.get()) == 1;
}

void SocketStream::ShutdownWrite() {
  if (ssl_ != nullptr) {
    SSL_shutdown(ssl_.get());
    ERR_clear_error();
  } else {
    ::shutdown(fd_, SHUT_WR);
  }
}

std::vector<std::string> SocketStream::PeerCertificateNames() const {
  std::vector<std::string> names;
  if (ssl_ == nullptr || SSL_get_verify_result(ssl_.get()) != X509_V_OK) {
    return names;
  }
  // Not owned: the session keeps it.
  X509* cert = SSL_get0_peer_certificate(ssl_.get());
  if (cert == nullptr) return names;
  auto* sans = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; i < sk_GENERAL_NAME_num(sans); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(sans, i);
    const ASN1_STRING* text = nullptr;
    switch (name->type) {
      case GEN_DNS:
        text = name->d.dNSName;
        break;
      case GEN_URI:
        text = name->d.uniformResourceIdentifier;
        break;
      case GEN_EMAIL:
        text = name->d.rfc822Name;
        break;
      case GEN_IPADD: {
        const ASN1_OCTET_STRING* ip = name->d.iPAddress;
        char printed[INET6_ADDRSTRLEN] = {};
        const int family = ip->length == 4    ? AF_INET
                           : ip->length == 16 ? AF_INET6
                                              : AF_UNSPEC;
        if (family != AF_UNSPEC && ::inet_ntop(family, ip->data, printed,
                                               sizeof(printed)) != nullptr) {
          names.emplace_back(printed);
        }
        break;
      }
      default:
        break;
    }
    if (text != nullptr) {
      names.emplace_back(
          reinterpret_cast<const char*>(ASN1_STRING_get0_data(text)),
          static_cast<size_t>(ASN1_STRING_length(text)));
    }
  }
  GENERAL_NAMES_free(sans);
  const X509_NAME* subject = X509_get_subject_name(cert);
  for (int i = X509_NAME_get_index_by_NID(subject, NID_commonName, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(subject, NID_commonName, i)) {
    unsigned char* utf8 = nullptr;
    const int n = ASN1_STRING_to_UTF8(
        &utf8, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i)));
    if (n >= 0) {
      names.emplace_back(reinterpret_cast<const char*>(utf8),
                         static_cast<size_t>(n));
    }
    OPENSSL_free(utf8);
  }
  return names;
}

}  // namespace roost
