// The client side of RESP for bench/redis_load.cc: loopback addresses,
// connected sockets, a per-connection read buffer, and a connection used in
// lock step (send a command, read its reply) with blocking I/O. The protocol
// itself is bench/resp.h.
//
// Example:
//   std::optional<Endpoint> e = ParseLoopback("127.0.0.1:6379");
//   SyncConnection conn;
//   RespElement reply;
//   std::string error;
//   if (!conn.Open(*e, 10, &error) || !conn.Call({"PING"}, &reply, &error)) {
//     ... error says why ...
//   }
#ifndef ROOST_BENCH_RESP_CLIENT_H_
#define ROOST_BENCH_RESP_CLIENT_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/resp.h"
#include "fmt/format.h"

namespace roost::bench {

// A loopback TCP address.
struct Endpoint {
  sockaddr_storage addr{};
  socklen_t len = 0;
};

// 127.0.0.1:PORT, localhost:PORT (as 127.0.0.1) or [::1]:PORT; nullopt for
// anything else.
inline std::optional<Endpoint> ParseLoopback(std::string_view s) {
  struct Host {
    std::string_view prefix;
    int family;
  };
  for (const Host& h :
       {Host{"127.0.0.1:", AF_INET}, Host{"localhost:", AF_INET},
        Host{"[::1]:", AF_INET6}}) {
    if (s.substr(0, h.prefix.size()) != h.prefix) continue;
    const std::string_view digits = s.substr(h.prefix.size());
    unsigned port = 0;
    const char* end = digits.data() + digits.size();
    const auto [ptr, ec] = std::from_chars(digits.data(), end, port);
    if (digits.empty() || ec != std::errc() || ptr != end || port == 0 ||
        port > 65535) {
      return std::nullopt;
    }
    Endpoint e;
    if (h.family == AF_INET) {
      auto* a = reinterpret_cast<sockaddr_in*>(&e.addr);
      a->sin_family = AF_INET;
      a->sin_port = htons(static_cast<uint16_t>(port));
      a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      e.len = sizeof(sockaddr_in);
    } else {
      auto* a = reinterpret_cast<sockaddr_in6*>(&e.addr);
      a->sin6_family = AF_INET6;
      a->sin6_port = htons(static_cast<uint16_t>(port));
      a->sin6_addr = in6addr_loopback;
      e.len = sizeof(sockaddr_in6);
    }
    return e;
  }
  return std::nullopt;
}

// A connected blocking socket with TCP_NODELAY, or -1 (and *error).
inline int OpenSocket(const Endpoint& e, std::string* error) {
  const int fd = socket(e.addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = fmt::format("socket: {}", std::strerror(errno));
    return -1;
  }
  if (connect(fd, reinterpret_cast<const sockaddr*>(&e.addr), e.len) != 0) {
    *error = fmt::format("connect: {}", std::strerror(errno));
    close(fd);
    return -1;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

// Up to 48 bytes of `s`, quoted, with what is not printable escaped.
inline std::string Excerpt(std::string_view s) {
  std::string out = "\"";
  for (const char c : s.substr(0, 48)) {
    if (c == '\r') {
      out += "\\r";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c >= 0x20 && c < 0x7f) {
      out += c;
    } else {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    }
  }
  out += s.size() > 48 ? "\"..." : "\"";
  return out;
}

// An element as an error message shows it.
inline std::string Describe(const RespElement& e) {
  switch (e.type) {
    case RespType::kSimpleString:
    case RespType::kError:
    case RespType::kBulkString:
      return fmt::format("{} {}", RespTypeName(e.type), Excerpt(e.text));
    case RespType::kInteger:
    case RespType::kArray:
      return fmt::format("{} {}", RespTypeName(e.type), e.integer);
    case RespType::kNil:
      break;
  }
  return "nil";
}

// The bytes received on a connection and not parsed yet. It grows only for
// an element larger than itself; bench/resp.h bounds those.
class ReadBuffer {
 public:
  explicit ReadBuffer(size_t capacity) : data_(capacity) {}

  std::string_view view() const {
    return {data_.data() + begin_, end_ - begin_};
  }
  void Consume(size_t n) {
    begin_ += n;
    if (begin_ == end_) begin_ = end_ = 0;
  }
  void Clear() { begin_ = end_ = 0; }

  // One read(2) of what `fd` has: its result (and errno). Moves the
  // unparsed bytes, so views into them end here.
  ssize_t ReadFrom(int fd) {
    if (begin_ > 0 && data_.size() - end_ < data_.size() / 4) {
      std::memmove(data_.data(), data_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (end_ == data_.size()) data_.resize(2 * data_.size());
    const ssize_t n = read(fd, data_.data() + end_, data_.size() - end_);
    if (n > 0) end_ += static_cast<size_t>(n);
    return n;
  }

 private:
  std::vector<char> data_;
  size_t begin_ = 0;
  size_t end_ = 0;
};

// A connection used in lock step, with blocking I/O: send commands, then
// read their replies' elements in order.
class SyncConnection {
 public:
  SyncConnection() = default;
  SyncConnection(const SyncConnection&) = delete;
  SyncConnection& operator=(const SyncConnection&) = delete;
  ~SyncConnection() {
    if (fd_ >= 0) close(fd_);
  }

  // Connects; a send or a read that waits `timeout_s` seconds fails.
  bool Open(const Endpoint& e, double timeout_s, std::string* error) {
    fd_ = OpenSocket(e, error);
    if (fd_ < 0) return false;
    timeval t{};
    t.tv_sec = static_cast<time_t>(timeout_s);
    t.tv_usec = static_cast<suseconds_t>((timeout_s - t.tv_sec) * 1e6);
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof(t));
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &t, sizeof(t));
    timeout_s_ = timeout_s;
    return true;
  }

  bool Send(std::string_view bytes, std::string* error) {
    while (!bytes.empty()) {
      const ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        *error = errno == EAGAIN || errno == EWOULDBLOCK
                     ? fmt::format("send blocked for {} s", timeout_s_)
                     : fmt::format("send: {}", std::strerror(errno));
        return false;
      }
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Reads the next element, waiting for its bytes; its text stays valid
  // until the next call.
  bool Next(RespElement* e, std::string* error) {
    in_.Consume(last_size_);
    last_size_ = 0;
    while (true) {
      switch (ParseRespElement(in_.view(), e)) {
        case RespParse::kOk:
          last_size_ = e->size;
          return true;
        case RespParse::kMalformed:
          *error = fmt::format("malformed reply ({}): {}", e->text,
                               Excerpt(in_.view()));
          return false;
        case RespParse::kIncomplete:
          break;
      }
      const ssize_t n = in_.ReadFrom(fd_);
      if (n > 0) continue;
      if (n < 0 && errno == EINTR) continue;
      if (n == 0) {
        *error = "the server closed the connection";
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        *error = fmt::format("no reply within {} s", timeout_s_);
      } else {
        *error = fmt::format("read: {}", std::strerror(errno));
      }
      return false;
    }
  }

  // Sends a command of `args` and reads the first element of its reply.
  bool Call(std::initializer_list<std::string_view> args, RespElement* e,
            std::string* error) {
    std::string request;
    AppendArrayHeader(&request, args.size());
    for (std::string_view a : args) AppendBulk(&request, a);
    return Send(request, error) && Next(e, error);
  }

  // Hands the socket over to the caller; -1 (keeping it) when bytes past
  // the last element were read already, which the caller would not see.
  int Release() {
    if (!in_.view().substr(last_size_).empty()) return -1;
    return std::exchange(fd_, -1);
  }

 private:
  int fd_ = -1;
  double timeout_s_ = 0;
  ReadBuffer in_{64 * 1024};
  size_t last_size_ = 0;  // the last element's, consumed by the next call
};

}  // namespace roost::bench

#endif  // ROOST_BENCH_RESP_CLIENT_H_
