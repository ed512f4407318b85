#include "server/listener.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "server/log.h"
#include "server/metrics.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// Splits "HOST:PORT" or "[HOST]:PORT".
bool SplitAddress(const std::string& address, std::string* host,
                  std::string* port) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size()) return false;
  *host = address.substr(0, colon);
  *port = address.substr(colon + 1);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  return !host->empty();
}

int BoundPort(int fd) {
  sockaddr_storage addr;
  socklen_t len = sizeof(addr);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return 0;
  }
  return addr.ss_family == AF_INET6
             ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
             : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

void SetPort(sockaddr* addr, int port) {
  if (addr->sa_family == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(addr)->sin6_port = htons(port);
  } else {
    reinterpret_cast<sockaddr_in*>(addr)->sin_port = htons(port);
  }
}

}  // namespace

bool ConnectionLimit::Admit(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return false;
  std::lock_guard lock(mu_);
  // A descriptor number comes back only after gRPC closed its connection.
  open_.erase(fd);
  if (open_.size() >= max_) SweepLocked();
  if (open_.size() >= max_) {
    ++refused_;
    return false;
  }
  open_[fd] = {st.st_dev, st.st_ino};
  return true;
}

void ConnectionLimit::Sweep() {
  std::lock_guard lock(mu_);
  SweepLocked();
}

void ConnectionLimit::SweepLocked() {
  for (auto it = open_.begin(); it != open_.end();) {
    struct stat st;
    const bool same = ::fstat(it->first, &st) == 0 &&
                      st.st_dev == it->second.dev &&
                      st.st_ino == it->second.ino;
    it = same ? std::next(it) : open_.erase(it);
  }
}

void ConnectionLimit::CollectMetrics(
    const std::vector<ConnectionLimit*>& limits,
    std::vector<prometheus::MetricFamily>* out) {
  using prometheus::MetricType;
  auto open = MakeFamily("roost_connections",
                         "Connections open, by listener (lookup, admin).",
                         MetricType::Gauge);
  auto refused =
      MakeFamily("roost_connections_refused_total",
                 "Connections closed on accept because their listener's cap "
                 "(--max-connections, --max-admin-connections) were open.",
                 MetricType::Counter);
  auto max = MakeFamily(
      "roost_connections_max",
      "Connections a listener may have open: --max-connections (lookup), "
      "--max-admin-connections (admin).",
      MetricType::Gauge);
  for (ConnectionLimit* limit : limits) {
    std::lock_guard lock(limit->mu_);
    limit->SweepLocked();
    AddMetric(&open, {{"listener", limit->listener_}}).gauge.value =
        static_cast<double>(limit->open_.size());
    AddMetric(&refused, {{"listener", limit->listener_}}).counter.value =
        static_cast<double>(limit->refused_);
    AddMetric(&max, {{"listener", limit->listener_}}).gauge.value =
        static_cast<double>(limit->max_);
  }
  out->push_back(std::move(open));
  out->push_back(std::move(refused));
  out->push_back(std::move(max));
}

absl::StatusOr<std::unique_ptr<Listener>> Listener::Bind(
    const std::string& address, std::string name) {
  std::string host, port_text;
  if (!SplitAddress(address, &host, &port_text)) {
    return absl::InvalidArgumentError("not HOST:PORT");
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int rc =
          ::getaddrinfo(host.c_str(), port_text.c_str(), &hints, &found);
      rc != 0) {
    return absl::InvalidArgumentError(::gai_strerror(rc));
  }
  std::vector<int> fds;
  int port = 0;
  std::string error;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd =
        ::socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    const int one = 1, zero = 0;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    // "[::]" takes IPv4 too.
    if (a->ai_family == AF_INET6) {
      ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    }
    // Port 0 on a host of several addresses: all on the first one's port.
    if (port != 0) SetPort(a->ai_addr, port);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 ||
        ::listen(fd, SOMAXCONN) != 0) {
      error = std::strerror(errno);
      ::close(fd);
      continue;
    }
    port = BoundPort(fd);
    fds.push_back(fd);
  }
  ::freeaddrinfo(found);
  if (fds.empty()) {
    return absl::UnavailableError(error.empty() ? "no address" : error);
  }
  const int wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  auto listener = std::unique_ptr<Listener>(
      new Listener(std::move(name), std::move(fds), port, wake_fd));
  listener->reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  return listener;
}

Listener::~Listener() {
  Stop();
  if (reserve_fd_ >= 0) ::close(reserve_fd_);
  ::close(wake_fd_);
}

void Listener::Start(grpc::experimental::ExternalConnectionAcceptor* acceptor,
                     ConnectionLimit* limit) {
  Start(
      [acceptor](int listen_fd, int fd) {
        grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters
            p;
        p.listener_fd = listen_fd;
        p.fd = fd;
        acceptor->HandleNewConnection(&p);
      },
      limit);
}

void Listener::Start(Handler handler, ConnectionLimit* limit) {
  thread_ = std::thread(
      [this, handler = std::move(handler), limit] { Run(handler, limit); });
}

void Listener::Stop() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
    thread_.join();
  }
  for (int fd : fds_) ::close(fd);
  fds_.clear();
}

void Listener::Run(const Handler& handler, ConnectionLimit* limit) {
  std::vector<pollfd> polled;
  polled.push_back({wake_fd_, POLLIN, 0});
  for (int fd : fds_) polled.push_back({fd, POLLIN, 0});
  for (;;) {
    // Once a second at least, forget the connections gRPC has closed.
    const int n = ::poll(polled.data(), polled.size(), 1000);
    if (polled[0].revents != 0) return;
    if (n <= 0) {
      limit->Sweep();
      continue;
    }
    for (size_t i = 1; i < polled.size(); ++i) {
      if (polled[i].revents != 0) AcceptFrom(polled[i].fd, handler, limit);
    }
  }
}

void Listener::AcceptFrom(int listen_fd, const Handler& handler,
                          ConnectionLimit* limit) {
  for (;;) {
    const int fd =
        ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      if (err == EAGAIN || err == EWOULDBLOCK) return;
      if (err == EINTR || err == ECONNABORTED) continue;
      CountError(err);
      if ((err == EMFILE || err == ENFILE) && reserve_fd_ >= 0) {
        // Out of descriptors: free the reserve to take the connection off
        // the queue and close it (its client fails at once instead of
        // waiting), then take the reserve back.
        ::close(reserve_fd_);
        const int dropped =
            ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (dropped >= 0) ::close(dropped);
        reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        continue;
      }
      // Anything else (ENOBUFS, ENOMEM): back off a little; the next poll
      // tries again.
      ::usleep(10000);
      return;
    }
    if (!limit->Admit(fd)) {
      static LogLimiter limiter;
      if (uint64_t dropped = 0; limiter.Allow(&dropped)) {
        Log("closed a new ", name_, " connection: ", limit->flag(), " ",
            limit->max(), " are open", LogLimiter::Suppressed(dropped));
      }
      ::close(fd);
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    handler(listen_fd, fd);
  }
}

void Listener::CountError(int err) {
  const char* name = ::strerrorname_np(err);
  static LogLimiter limiter;
  if (uint64_t dropped = 0; limiter.Allow(&dropped)) {
    Log("accept on the ", name_, " port failed: ", std::strerror(err),
        LogLimiter::Suppressed(dropped));
  }
  std::lock_guard lock(mu_);
  errors_[name != nullptr ? name : StrCat("errno ", err)]++;
}

void Listener::AddAcceptErrors(prometheus::MetricFamily* family) {
  std::lock_guard lock(mu_);
  for (const auto& [error, n] : errors_) {
    AddMetric(family, {{"error", error}, {"listener", name_}}).counter.value =
        static_cast<double>(n);
  }
}

}  // namespace roost
