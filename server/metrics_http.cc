#include "server/metrics_http.h"

#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <sstream>
#include <string>
#include <string_view>

#include "prometheus/text_serializer.h"
#include "server/log.h"
#include "util/str_cat.h"

namespace roost {
namespace {

using Clock = std::chrono::steady_clock;

// Connections that may wait for a thread; more are closed at once.
constexpr size_t kMaxWaiting = 64;
// A request's head (request line and headers) may be this large.
constexpr size_t kMaxRequestHead = 16 << 10;

void SetTimeouts(int fd, Clock::duration left) {
  const auto us = std::max<int64_t>(
      1000,
      std::chrono::duration_cast<std::chrono::microseconds>(left).count());
  timeval tv{static_cast<time_t>(us / 1000000),
             static_cast<suseconds_t>(us % 1000000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

struct SslFree {
  void operator()(SSL* ssl) const { SSL_free(ssl); }
};

// One connection's bytes, through TLS when `ssl` is set. Socket errors
// and timeouts end the connection; they are the client's business, not
// worth a log line each.
struct Connection {
  int fd;
  SSL* ssl;  // nullptr: plaintext

  int Read(char* buffer, size_t size) {
    if (ssl != nullptr) {
      const int n = SSL_read(ssl, buffer, static_cast<int>(size));
      if (n <= 0) ERR_clear_error();
      return n;
    }
    for (;;) {
      const ssize_t n = ::recv(fd, buffer, size, 0);
      if (n < 0 && errno == EINTR) continue;
      return static_cast<int>(n);
    }
  }

  bool WriteAll(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n;
      if (ssl != nullptr) {
        n = SSL_write(ssl, bytes.data(), static_cast<int>(bytes.size()));
      } else {
        n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
      }
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // After the answer: the client reads until the connection ends.
  void Close() {
    if (ssl != nullptr) {
      SSL_shutdown(ssl);
      ERR_clear_error();
    } else {
      ::shutdown(fd, SHUT_WR);
    }
  }
};

}  // namespace

MetricsHttp::MetricsHttp(std::shared_ptr<prometheus::Collectable> collectable,
                         int threads, double timeout_seconds, bool tls)
    : collectable_(std::move(collectable)),
      timeout_seconds_(timeout_seconds),
      tls_(tls) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

MetricsHttp::~MetricsHttp() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (int fd : waiting_) ::close(fd);
    waiting_.clear();
  }
  ready_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void MetricsHttp::SetContext(SslContext context) {
  std::shared_ptr<ssl_ctx_st> shared(context.release(), SslCtxFree());
  std::lock_guard<std::mutex> lock(mu_);
  context_ = std::move(shared);
}

void MetricsHttp::Serve(int fd) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_ && waiting_.size() < kMaxWaiting) {
      waiting_.push_back(fd);
      ready_.notify_one();
      return;
    }
  }
  ::close(fd);
}

void MetricsHttp::Work() {
  for (;;) {
    int fd = -1;
    {
      std::unique_lock<std::mutex> lock(mu_);
      ready_.wait(lock, [this] { return stopping_ || !waiting_.empty(); });
      if (stopping_) return;
      fd = waiting_.front();
      waiting_.pop_front();
    }
    Handle(fd);
    ::close(fd);
  }
}

void MetricsHttp::Handle(int fd) {
  std::shared_ptr<ssl_ctx_st> context;
  if (tls_) {
    std::lock_guard<std::mutex> lock(mu_);
    context = context_;
    if (context == nullptr) return;
  }
  // Blocking, with a deadline for the whole handshake and request.
  const int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(timeout_seconds_));
  SetTimeouts(fd, deadline - Clock::now());
  std::unique_ptr<SSL, SslFree> ssl;
  if (tls_) {
    ssl.reset(SSL_new(context.get()));
    if (ssl == nullptr || SSL_set_fd(ssl.get(), fd) != 1) return;
    if (SSL_accept(ssl.get()) != 1) {
      // Bad certificates and port scans are the client's business; they
      // are not worth a log line each.
      ERR_clear_error();
      return;
    }
  }
  Connection connection{fd, ssl.get()};
  std::string head;
  char buffer[4096];
  while (head.find("\r\n\r\n") == std::string::npos) {
    if (head.size() > kMaxRequestHead || Clock::now() >= deadline) return;
    SetTimeouts(fd, deadline - Clock::now());
    const int n = connection.Read(buffer, sizeof(buffer));
    if (n <= 0) return;
    head.append(buffer, static_cast<size_t>(n));
  }
  // "GET /metrics HTTP/1.1": the method, then the path up to "?" or " ".
  const std::string_view line(head.data(), head.find("\r\n"));
  const size_t space = line.find(' ');
  const std::string_view method = line.substr(0, space);
  std::string_view path =
      space == std::string_view::npos ? "" : line.substr(space + 1);
  path = path.substr(0, path.find_first_of(" ?"));
  std::string response;
  if ((method == "GET" || method == "HEAD") && path == "/metrics") {
    std::ostringstream body;
    prometheus::TextSerializer().Serialize(body, collectable_->Collect());
    const std::string text = std::move(body).str();
    response = StrCat(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; "
        "charset=utf-8\r\nContent-Length: ",
        text.size(), "\r\nConnection: close\r\n\r\n",
        method == "GET" ? text : std::string());
  } else {
    response =
        "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n"
        "Content-Length: 22\r\nConnection: close\r\n\r\nonly /metrics is "
        "here\n";
  }
  // The same deadline, renewed: a scrape that reads slowly gets as long as
  // the request had.
  SetTimeouts(fd, std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double>(timeout_seconds_)));
  if (connection.WriteAll(response)) connection.Close();
  ERR_clear_error();
}

}  // namespace roost
