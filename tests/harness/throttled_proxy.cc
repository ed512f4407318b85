#include "tests/harness/throttled_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>

#include "util/str_cat.h"

namespace roost::testing {
namespace {

using Clock = std::chrono::steady_clock;

sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

// Writes all of `data`; false when the peer is gone.
bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

ThrottledProxy::ThrottledProxy(int target_port, uint64_t bytes_per_second)
    : target_port_(target_port),
      rate_(std::max<uint64_t>(bytes_per_second, 1)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr = Loopback(0);
  socklen_t len = sizeof(addr);
  if (listen_fd_ < 0 ||
      ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) !=
          0 ||
      ::listen(listen_fd_, 16) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) !=
          0) {
    std::abort();
  }
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { Accept(); });
}

ThrottledProxy::~ThrottledProxy() {
  stop_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  ::close(listen_fd_);
  std::lock_guard lock(mu_);
  for (std::thread& t : relays_) t.join();
}

std::string ThrottledProxy::endpoint() const {
  return StrCat("http://127.0.0.1:", port_);
}

void ThrottledProxy::Accept() {
  while (!stop_) {
    const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) {
      if (errno == EINTR) continue;
      return;  // shut down
    }
    std::lock_guard lock(mu_);
    relays_.emplace_back([this, client] { Relay(client); });
  }
}

void ThrottledProxy::Relay(int client) {
  const int upstream = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_in target = Loopback(target_port_);
  if (upstream < 0 ||
      ::connect(upstream, reinterpret_cast<const sockaddr*>(&target),
                sizeof(target)) != 0) {
    if (upstream >= 0) ::close(upstream);
    ::close(client);
    return;
  }
  // Answers go out in slices of a twentieth of a second's worth, each when
  // the rate allows it.
  const size_t slice = static_cast<size_t>(
      std::clamp<uint64_t>(rate_ / 20, 1, uint64_t{64} << 10));
  std::vector<char> buffer(std::max<size_t>(slice, 64 << 10));
  const Clock::time_point start = Clock::now();
  uint64_t answered = 0;  // on this connection
  for (bool open = true; open && !stop_;) {
    const uint64_t allowed = static_cast<uint64_t>(
        std::chrono::duration<double>(Clock::now() - start).count() *
        static_cast<double>(rate_));
    const bool may_answer = answered < allowed;
    pollfd fds[2] = {
        {client, POLLIN, 0},
        {upstream, static_cast<short>(may_answer ? POLLIN : 0), 0}};
    if (::poll(fds, 2, 20) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      const ssize_t n = ::recv(client, buffer.data(), buffer.size(), 0);
      open = n > 0 && WriteAll(upstream, buffer.data(), static_cast<size_t>(n));
    }
    if (open && may_answer && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      const size_t want = static_cast<size_t>(
          std::min<uint64_t>(slice, std::max<uint64_t>(allowed - answered, 1)));
      const ssize_t n = ::recv(upstream, buffer.data(), want, 0);
      open = n > 0 && WriteAll(client, buffer.data(), static_cast<size_t>(n));
      if (n > 0) {
        answered += static_cast<uint64_t>(n);
        relayed_ += static_cast<uint64_t>(n);
      }
    }
  }
  ::close(upstream);
  ::close(client);
}

}  // namespace roost::testing
