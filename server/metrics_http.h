// MetricsHttp: the /metrics endpoint, plaintext or over TLS (and mutual
// TLS, when roost-server has --tls-cert).
//
// Connections, accepted by a Listener, are served by a fixed pool of
// threads, each taking one connection at a time through the TLS handshake
// (with TLS), one HTTP/1.x request (GET or HEAD /metrics; anything else is
// 404), the Prometheus text answer and "Connection: close". Every read and
// write has a deadline (the metrics request timeout), so a client that
// stalls holds one thread for at most that long; connections that find
// every thread busy wait in a short queue, and past it are closed at once.
//
// Why not prometheus-cpp's Exposer (civetweb), which served plaintext
// /metrics before: it adds series of its own to every answer that cannot
// be turned off (exposer_request_latencies, a summary in microseconds
// rather than seconds, exposer_scrapes_total and
// exposer_transferred_bytes_total: prometheus-cpp 1.0's Endpoint registers
// them on the same URI), it takes about 2 s to stop, and its TLS cannot be
// used (Debian 12's civetweb 1.15 loads OpenSSL at run time by the 1.1
// names, and OpenSSL 3 no longer exports one of them, so the first TLS
// connection calls a null pointer: SIGSEGV in a civetweb worker). One
// server for both keeps their behaviour the same.
//
// Example:
//   MetricsHttp http(collector, /*threads=*/4, /*timeout_seconds=*/2,
//                    /*tls=*/true);
//   http.SetContext(*MakeSslContext(watch->material()));  // with TLS only
//   listener->Start([&](int, int fd) { http.Serve(fd); }, &limit);
//   on rotation: http.SetContext(*MakeSslContext(watch->material()));
#ifndef ROOST_SERVER_METRICS_HTTP_H_
#define ROOST_SERVER_METRICS_HTTP_H_

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "prometheus/collectable.h"
#include "server/tls.h"

namespace roost {

class MetricsHttp {
 public:
  // With `tls`, connections are served once SetContext has given a context
  // (and dropped before); without, in plaintext.
  MetricsHttp(std::shared_ptr<prometheus::Collectable> collectable, int threads,
              double timeout_seconds, bool tls);
  ~MetricsHttp();  // closes waiting connections, joins the threads
  MetricsHttp(const MetricsHttp&) = delete;
  MetricsHttp& operator=(const MetricsHttp&) = delete;

  // The TLS context new connections are served with (connections in
  // progress keep theirs).
  void SetContext(SslContext context);

  // Takes connection `fd` (it owns it from now on).
  void Serve(int fd);

 private:
  void Work();
  void Handle(int fd);

  const std::shared_ptr<prometheus::Collectable> collectable_;
  const double timeout_seconds_;
  const bool tls_;
  std::mutex mu_;
  std::condition_variable ready_;
  std::shared_ptr<ssl_ctx_st> context_;  // guarded by mu_
  std::deque<int> waiting_;              // guarded by mu_
  bool stopping_ = false;                // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace roost

#endif  // ROOST_SERVER_METRICS_HTTP_H_
