// MetricsHttp: the /metrics endpoint, plaintext or over TLS (and mutual
// TLS, when roost-server has --tls-cert).
//
// Each connection, accepted by a Listener, gets one HTTP/1.x request (GET
// or HEAD /metrics; anything else is 404), the Prometheus text answer and
// "Connection: close". Slow or idle peers must not keep Prometheus out, so
// no thread waits on a peer:
//
//   - one thread drives every connection without blocking (poll): the TLS
//     handshake, reading the request, writing the answer;
//   - the handshake and the request together have one deadline, the
//     request timeout from the connection's start (a peer that sends a
//     byte now and then gets no more time for it), and the answer as long
//     again to be taken; a connection past its deadline is closed;
//   - at most kMaxConnections are open at once: a new one past that lets go
//     of the oldest still waiting for its request (a flood of idle
//     connections pushes out its own, not a scrape that has just arrived);
//   - a fixed pool of threads builds the answers (collecting the metrics is
//     the only slow work), one request at a time each.
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
// Thread-safe: Serve() and SetContext() from any thread.
//
// Example:
//   MetricsHttp http(collector, /*threads=*/4, /*timeout_seconds=*/2,
//                    /*tls=*/true);
//   http.SetContext(*MakeSslContext(watch->material()));  // with TLS only
//   listener->Start([&](int, int fd) { http.Serve(fd); }, &limit);
//   on rotation: http.SetContext(*MakeSslContext(watch->material()));
#ifndef ROOST_SERVER_METRICS_HTTP_H_
#define ROOST_SERVER_METRICS_HTTP_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "prometheus/collectable.h"
#include "server/tls.h"

namespace roost {

class MetricsHttp {
 public:
  // Connections open at once; a new one past it lets go of the oldest
  // still waiting for its request.
  static constexpr size_t kMaxConnections = 64;

  // With `tls`, connections are served once SetContext has given a context
  // (and dropped before); without, in plaintext. `threads` build answers;
  // `timeout_seconds` is each connection's time for its handshake and
  // request, and again for taking the answer.
  MetricsHttp(std::shared_ptr<prometheus::Collectable> collectable, int threads,
              double timeout_seconds, bool tls);
  ~MetricsHttp();  // closes every connection, joins the threads
  MetricsHttp(const MetricsHttp&) = delete;
  MetricsHttp& operator=(const MetricsHttp&) = delete;

  // The TLS context new connections are served with (connections in
  // progress keep theirs).
  void SetContext(SslContext context);

  // Takes connection `fd`, a non-blocking socket (it owns it from now on).
  void Serve(int fd);

 private:
  struct Connection;
  using Clock = std::chrono::steady_clock;
  // An answer to build: connection `id` asked for /metrics (`head`: HEAD).
  struct Job {
    uint64_t id;
    bool head;
  };
  struct Answer {
    uint64_t id;
    std::string bytes;
  };

  void Loop();  // the connections' thread
  void Work();  // a builder's
  void Wake();
  void Admit(int fd);
  // Moves `c` on as far as it goes without waiting; false when it is done
  // with (answered, failed or refused), to be closed.
  bool Advance(Connection& c);

  const std::shared_ptr<prometheus::Collectable> collectable_;
  const Clock::duration timeout_;
  const bool tls_;
  const int wake_fd_;
  std::mutex mu_;
  std::condition_variable jobs_ready_;
  std::shared_ptr<ssl_ctx_st> context_;  // guarded by mu_
  std::deque<int> incoming_;             // guarded by mu_
  std::deque<Job> jobs_;                 // guarded by mu_
  std::deque<Answer> answers_;           // guarded by mu_
  bool stopping_ = false;                // guarded by mu_
  // The loop's own.
  std::vector<std::unique_ptr<Connection>> connections_;  // oldest first
  uint64_t next_id_ = 0;
  std::thread loop_;
  std::vector<std::thread> workers_;
};

}  // namespace roost

#endif  // ROOST_SERVER_METRICS_HTTP_H_
