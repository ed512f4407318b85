// ThrottledProxy: a slow network between a client and a real server on
// loopback (a real MinIO, in the tests of what a slow download does). It
// listens on a port of its own and relays each connection to the target
// port byte for byte: requests as they come, answers at most
// `bytes_per_second`. Nothing is changed or answered by the proxy itself, so
// S3 signatures (which cover the Host header the client sent) still hold.
//
// Thread-safety: the constructor starts the threads, the destructor closes
// every connection and joins them; relayed() may be called from any thread.
//
// Example:
//   ThrottledProxy slow(minio->port(), 64 << 10);  // 64 KiB a second
//   ScopedEnv endpoint("AWS_ENDPOINT_URL", slow.endpoint());
//   ... a download through it now takes size / 64 KiB seconds ...
#ifndef ROOST_TESTS_HARNESS_THROTTLED_PROXY_H_
#define ROOST_TESTS_HARNESS_THROTTLED_PROXY_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace roost::testing {

class ThrottledProxy {
 public:
  // Aborts the test binary if it cannot listen (a loopback port is always
  // to be had).
  ThrottledProxy(int target_port, uint64_t bytes_per_second);
  ~ThrottledProxy();
  ThrottledProxy(const ThrottledProxy&) = delete;
  ThrottledProxy& operator=(const ThrottledProxy&) = delete;

  int port() const { return port_; }
  std::string endpoint() const;  // "http://127.0.0.1:PORT"
  // Bytes of answers passed on so far, over every connection.
  uint64_t relayed() const { return relayed_.load(); }

 private:
  void Accept();
  // Relays one connection until either side closes it or the proxy stops.
  void Relay(int client);

  const int target_port_;
  const uint64_t rate_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> relayed_{0};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> relays_;  // guarded by mu_
};

}  // namespace roost::testing

#endif  // ROOST_TESTS_HARNESS_THROTTLED_PROXY_H_
