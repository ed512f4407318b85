#include "bench/redis_client.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "fmt/format.h"

namespace roost::bench {

timeval Timeval(double seconds) {
  timeval t{};
  t.tv_sec = static_cast<time_t>(seconds);
  t.tv_usec = static_cast<suseconds_t>((seconds - t.tv_sec) * 1e6);
  return t;
}

std::string Excerpt(std::string_view s) {
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

std::string Describe(const redisReply& r) {
  const std::string_view text(r.str != nullptr ? r.str : "", r.len);
  switch (r.type) {
    case REDIS_REPLY_STATUS:
      return "simple string " + Excerpt(text);
    case REDIS_REPLY_ERROR:
      return "error " + Excerpt(text);
    case REDIS_REPLY_STRING:
      return "bulk string " + Excerpt(text);
    case REDIS_REPLY_INTEGER:
      return fmt::format("integer {}", r.integer);
    case REDIS_REPLY_ARRAY:
      return fmt::format("array {}", r.elements);
    default:
      return "nil";
  }
}

bool IsString(const redisReply& r, int type, std::string_view text) {
  return r.type == type && std::string_view(r.str, r.len) == text;
}

std::string ContextError(const redisContext& c) {
  switch (c.err) {
    case REDIS_ERR_EOF:
      return "the server closed the connection";
    case REDIS_ERR_PROTOCOL:
      return fmt::format("malformed reply ({})", c.errstr);
    default:
      return c.errstr;
  }
}

std::string_view Unparsed(const redisContext& c) {
  return {c.reader->buf + c.reader->pos, c.reader->len - c.reader->pos};
}

Context ConnectNonBlock(const Loopback& e, double timeout_s,
                        std::string* error) {
  Context c(redisConnectNonBlock(e.host.c_str(), e.port));
  if (c == nullptr || c->err != 0) {
    *error = c == nullptr ? "out of memory" : ContextError(*c);
    return nullptr;
  }
  pollfd p{c->fd, POLLOUT, 0};
  const int n = poll(&p, 1, static_cast<int>(timeout_s * 1e3));
  int so_error = 0;
  socklen_t len = sizeof(so_error);
  if (n == 0) {
    *error = fmt::format("connect: no connection within {} s", timeout_s);
    return nullptr;
  }
  if (n < 0 || getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &so_error, &len) != 0 ||
      so_error != 0) {
    *error =
        fmt::format("connect: {}", std::strerror(n < 0 ? errno : so_error));
    return nullptr;
  }
  return c;
}

bool AwaitReply(redisContext* c, double timeout_s, Reply* reply,
                std::string* error) {
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(timeout_s));
  int written = 0;
  while (true) {
    void* r = nullptr;
    if (redisGetReplyFromReader(c, &r) != REDIS_OK ||
        (written == 0 && redisBufferWrite(c, &written) != REDIS_OK)) {
      *error = ContextError(*c);
      return false;
    }
    if (r != nullptr) {
      reply->reset(static_cast<redisReply*>(r));
      return true;
    }
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd p{c->fd,
             static_cast<short>(written == 0 ? POLLIN | POLLOUT : POLLIN), 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) == 0) {
      *error = fmt::format("no reply within {} s", timeout_s);
      return false;
    }
    if ((p.revents & (POLLIN | POLLERR | POLLHUP)) != 0 &&
        redisBufferRead(c) != REDIS_OK) {
      *error = ContextError(*c);
      return false;
    }
  }
}

}  // namespace roost::bench
