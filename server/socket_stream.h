// SocketStream: one accepted, non-blocking connection's bytes, in
// plaintext or through TLS as the server side, for the event loops that
// drive many connections on one thread (/metrics, server/metrics_http.h,
// and the Redis front end, server/redis_front.h). gRPC's listeners have
// TLS of their own.
//
// A call that cannot go on without the peer returns kWouldBlock, and
// wait() says what to wait for: with TLS a read may need the socket to be
// writable (and a write readable) while the protocol does its own
// exchanges. A TLS stream starts with the handshake: Handshake() until it
// returns kDone. With a client CA in the context (server/tls.h,
// MakeSslContext), the handshake has verified the client's certificate,
// and PeerCertificateNames() gives what an access policy matches on.
//
// Thread-compatible: one thread drives a stream.
//
// Example:
//   SocketStream stream(fd);                  // owns fd from now on
//   if (tls && !stream.StartTls(context)) return;  // dropped: closes fd
//   ... when ready: if (stream.Handshake() == SocketStream::kDone) ...
//   const ssize_t n = stream.Read(buffer, sizeof(buffer));
//   if (n == SocketStream::kWouldBlock) poll for stream.wait();
#ifndef ROOST_SERVER_SOCKET_STREAM_H_
#define ROOST_SERVER_SOCKET_STREAM_H_

#include <openssl/types.h>
#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace roost {

class SocketStream {
 public:
  // What Handshake(), Read() and Write() return besides a byte count.
  static constexpr ssize_t kDone = 1;  // Handshake() only
  static constexpr ssize_t kWouldBlock = 0;
  static constexpr ssize_t kEnd = -1;     // the peer sends no more
  static constexpr ssize_t kFailed = -2;  // a socket or TLS error

  enum class Wait { kRead, kWrite };

  // Takes `fd`, a non-blocking connected socket; closes it when destroyed.
  explicit SocketStream(int fd);
  ~SocketStream();
  SocketStream(const SocketStream&) = delete;
  SocketStream& operator=(const SocketStream&) = delete;

  // Serves TLS from `context` (which the stream holds a reference to): the
  // handshake comes first. False when OpenSSL cannot make the session.
  bool StartTls(ssl_ctx_st* context);

  // TLS: takes the handshake as far as it can go: kDone when finished,
  // kWouldBlock, or kFailed (a client that is not TLS, a certificate the
  // context refuses). Plaintext: kDone.
  ssize_t Handshake();

  // Reads into `buffer`: the bytes read (> 0), kWouldBlock, kEnd (end of
  // stream, or the TLS close_notify) or kFailed.
  ssize_t Read(char* buffer, size_t size);
  // Writes what it can of `bytes` (not empty): the bytes written (> 0),
  // kWouldBlock or kFailed. After kWouldBlock, the next Write gives the
  // same bytes again first (more may follow them, and they may have moved).
  ssize_t Write(std::string_view bytes);
  // Ends the sending side: TLS close_notify, or shutdown(SHUT_WR).
  void ShutdownWrite();

  // After kWouldBlock: what the socket must become.
  Wait wait() const { return wait_; }
  int fd() const { return fd_; }
  bool tls() const { return ssl_ != nullptr; }
  // TLS: whether OpenSSL holds bytes already taken from the socket that
  // Read() has not given out (epoll_wait does not see them).
  bool HasPending() const;

  // The names of the client's verified certificate, as gRPC gives them to
  // roost's access policy: each subject alternative name (DNS, URI, email,
  // IP address) and the subject's common name. Empty without TLS, or when
  // the client sent no certificate the context verified.
  std::vector<std::string> PeerCertificateNames() const;

 private:
  struct SslFree {
    void operator()(ssl_st* ssl) const;
  };
  // After an OpenSSL call returned `result` <= 0.
  ssize_t SslOutcome(int result);

  const int fd_;
  std::unique_ptr<ssl_st, SslFree> ssl_;
  Wait wait_ = Wait::kRead;
};

}  // namespace roost

#endif  // ROOST_SERVER_SOCKET_STREAM_H_
