// Listener and ConnectionLimit: roost's own listening sockets for its gRPC
// services, so that running out of file descriptors can never stop them.
//
// gRPC 1.51's own listener stops polling its socket for good after one
// accept4() fails with EMFILE: the process lives, the port is open (a TCP
// probe passes), and no connection is ever accepted again. So roost binds
// and accepts itself, on one thread per listener, and hands each accepted
// connection to its gRPC server through an external connection acceptor.
// It keeps each listener's connections under a cap of its own
// (ConnectionLimit: --max-connections for the lookup port,
// --max-admin-connections for the admin port, together below the file
// descriptor limit): past it a new connection is closed as soon as it is
// accepted, so its client fails fast, the descriptors left over stay free
// for table files and the metrics endpoint, and a flood on the lookup port
// never shuts the operator out of the admin port. Should accept4() fail anyway
// (EMFILE, ENFILE), the listener closes a descriptor it keeps in reserve,
// accepts and closes the pending connection, takes the reserve back and goes
// on; every such event is counted and logged.
//
// Example:
//   ConnectionLimit limit(1000, "lookup", "--max-connections");
//   ROOST_ASSIGN_OR_RETURN(auto listener, Listener::Bind("0.0.0.0:50051",
//                                                        "lookup"));
//   auto acceptor = builder.experimental().AddExternalConnectionAcceptor(
//       ExternalConnectionType::FROM_FD, credentials);
//   server = builder.BuildAndStart();
//   listener->Start(acceptor.get(), &limit);
#ifndef ROOST_SERVER_LISTENER_H_
#define ROOST_SERVER_LISTENER_H_

#include <grpcpp/server_builder.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "prometheus/metric_family.h"

namespace roost {

// One listener's connections open, against a cap. Thread-safe.
class ConnectionLimit {
 public:
  // At most `max` connections of `listener` ("lookup"), the cap set by
  // `flag` ("--max-connections"), which the log names.
  ConnectionLimit(size_t max, std::string listener, std::string flag)
      : max_(max), listener_(std::move(listener)), flag_(std::move(flag)) {}

  // Counts connection `fd` in; false (counting it as refused) when `max`
  // are open already.
  bool Admit(int fd);
  // Forgets connections gRPC has closed since.
  void Sweep();
  size_t max() const { return max_; }
  const std::string& flag() const { return flag_; }
  // roost_connections, roost_connections_refused_total and
  // roost_connections_max of `limits`, by listener.
  static void CollectMetrics(const std::vector<ConnectionLimit*>& limits,
                             std::vector<prometheus::MetricFamily>* out);

 private:
  struct Connection {
    dev_t dev;
    ino_t ino;
  };
  void SweepLocked();

  const size_t max_;
  const std::string listener_;
  const std::string flag_;
  std::mutex mu_;
  // By descriptor; a descriptor that now names another file (or none) was
  // closed by gRPC.
  std::unordered_map<int, Connection> open_;
  uint64_t refused_ = 0;
};

class Listener {
 public:
  // Binds `address` ("HOST:PORT", "[V6ADDR]:PORT"; port 0 picks a free
  // one; every address the host resolves to). `name` labels the logs and
  // metrics ("lookup", "admin"). The error message says why, without the
  // address.
  static absl::StatusOr<std::unique_ptr<Listener>> Bind(
      const std::string& address, std::string name);
  ~Listener();  // Stop()s
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // The bound port.
  int port() const { return port_; }
  // Starts accepting: each connection goes to `acceptor` if `limit` admits
  // it. Both must outlive Stop().
  void Start(grpc::experimental::ExternalConnectionAcceptor* acceptor,
             ConnectionLimit* limit);
  // The same, handing each admitted connection (a non-blocking socket the
  // handler then owns) to `handler`.
  using Handler = std::function<void(int listen_fd, int fd)>;
  void Start(Handler handler, ConnectionLimit* limit);
  // Closes the listening sockets; accepts nothing more.
  void Stop();
  // Adds this listener's failed accepts, by errno name, to `family`
  // (roost_accept_errors_total, shared by all listeners).
  void AddAcceptErrors(prometheus::MetricFamily* family);

 private:
  Listener(std::string name, std::vector<int> fds, int port, int wake_fd)
      : name_(std::move(name)),
        fds_(std::move(fds)),
        port_(port),
        wake_fd_(wake_fd) {}
  void Run(const Handler& handler, ConnectionLimit* limit);
  void AcceptFrom(int listen_fd, const Handler& handler,
                  ConnectionLimit* limit);
  void CountError(int err);

  const std::string name_;
  std::vector<int> fds_;
  const int port_;
  const int wake_fd_;
  int reserve_fd_ = -1;  // given up to accept (and drop) past EMFILE
  std::thread thread_;
  std::mutex mu_;
  std::map<std::string, uint64_t> errors_;  // by errno name
};

}  // namespace roost

#endif  // ROOST_SERVER_LISTENER_H_
