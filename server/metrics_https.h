// MetricsHttps: /metrics over TLS (and mutual TLS), when roost-server has
// --tls-cert.
//
// Plaintext /metrics is prometheus-cpp's Exposer (civetweb). Its TLS cannot
// be used: Debian 12's civetweb 1.15 loads OpenSSL at run time by the 1.1
// names, and OpenSSL 3 no longer exports one of them, so the first TLS
// connection calls a null pointer and the process dies (reproduced:
// SIGSEGV in a civetweb worker). So TLS connections, accepted by a
// Listener, are served here instead: a fixed pool of threads, each taking
// one connection at a time through the handshake, one HTTP/1.x request
// (GET or HEAD /metrics; anything else is 404), the Prometheus text answer
// and "Connection: close". Every read and write has a deadline (the
// metrics request timeout), so a client that stalls holds one thread for
// at most that long; connections that find every thread busy wait in a
// short queue, and past it are closed at once.
//
// Example:
//   MetricsHttps https(collector, /*threads=*/4, /*timeout_seconds=*/2);
//   https.SetContext(*MakeSslContext(files));
//   listener->Start([&](int, int fd) { https.Serve(fd); }, &limit);
//   on rotation: https.SetContext(*MakeSslContext(files));
#ifndef ROOST_SERVER_METRICS_HTTPS_H_
#define ROOST_SERVER_METRICS_HTTPS_H_

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "prometheus/collectable.h"
#include "server/tls.h"

namespace roost {

class MetricsHttps {
 public:
  MetricsHttps(std::shared_ptr<prometheus::Collectable> collectable,
               int threads, double timeout_seconds);
  ~MetricsHttps();  // closes waiting connections, joins the threads
  MetricsHttps(const MetricsHttps&) = delete;
  MetricsHttps& operator=(const MetricsHttps&) = delete;

  // The context new connections are served with (connections in progress
  // keep theirs).
  void SetContext(SslContext context);

  // Takes connection `fd` (it owns it from now on).
  void Serve(int fd);

 private:
  void Work();
  void Handle(int fd);

  const std::shared_ptr<prometheus::Collectable> collectable_;
  const double timeout_seconds_;
  std::mutex mu_;
  std::condition_variable ready_;
  std::shared_ptr<ssl_ctx_st> context_;  // guarded by mu_
  std::deque<int> waiting_;              // guarded by mu_
  bool stopping_ = false;                // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace roost

#endif  // ROOST_SERVER_METRICS_HTTPS_H_
