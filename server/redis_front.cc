#include "server/redis_front.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "server/log.h"
#include "server/lookup_service.h"
#include "server/resp_parser.h"
#include "server/socket_stream.h"
#include "storage/table.h"
#include "util/escape.h"
#include "util/str_cat.h"

namespace roost {
namespace {

using Clock = std::chrono::steady_clock;

// Unsent replies past this stop a connection's reading until they drain.
constexpr size_t kHighWater = 1 << 20;
constexpr size_t kReadChunk = 64 << 10;
// Between commands a connection keeps this much room for the next one's
// bytes, and for its reply; more goes back.
constexpr size_t kKeepInput = 16 << 10;
constexpr size_t kKeepOutput = 64 << 10;

bool IsCommand(std::string_view arg, std::string_view upper) {
  if (arg.size() != upper.size()) return false;
  for (size_t i = 0; i < arg.size(); ++i) {
    char c = arg[i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c != upper[i]) return false;
  }
  return true;
}

// Redis's commands that write: refused as a read-only replica refuses
// them, so that a client's error handling knows the case.
constexpr std::string_view kWrites[] = {
    "SET",      "SETEX",     "PSETEX",      "SETNX",  "MSET",     "MSETNX",
    "DEL",      "UNLINK",    "APPEND",      "INCR",   "DECR",     "INCRBY",
    "DECRBY",   "GETSET",    "GETDEL",      "GETEX",  "EXPIRE",   "PEXPIRE",
    "HSET",     "HMSET",     "HDEL",        "LPUSH",  "RPUSH",    "SADD",
    "ZADD",     "FLUSHDB",   "FLUSHALL",    "RENAME", "SETRANGE", "PERSIST",
    "EXPIREAT", "PEXPIREAT", "INCRBYFLOAT", "COPY",   "RESTORE",  "MIGRATE"};

void AppendBulk(std::string* out, std::string_view value) {
  out->push_back('$');
  out->append(std::to_string(value.size()));
  out->append("\r\n");
  out->append(value);
  out->append("\r\n");
}
size_t BulkSize(size_t n) {
  size_t digits = 1;
  for (size_t v = n; v >= 10; v /= 10) ++digits;
  return 1 + digits + 2 + n + 2;
}
void AppendError(std::string* out, std::string_view prefix,
                 std::string_view message) {
  out->append("-");
  out->append(prefix);
  out->push_back(' ');
  // A simple string cannot hold CR or LF.
  for (char c : message) out->push_back(c == '\r' || c == '\n' ? ' ' : c);
  out->append("\r\n");
}

// A command's failure: the Redis error prefix and message, and the gRPC
// code it is counted under.
struct Refusal {
  grpc::StatusCode code;
  std::string prefix;
  std::string message;
};

struct Connection {
  explicit Connection(int fd) : stream(fd) {}

  SocketStream stream;  // owns the socket
  // TLS: the handshake is not done yet; the connection is closed when it
  // is not done by handshake_deadline.
  bool handshaking = false;
  Clock::time_point handshake_deadline;
  // TLS: the last read waits for the socket to be writable, the last write
  // for it to be readable (the protocol's own exchanges).
  bool read_waits_for_write = false;
  bool write_waits_for_read = false;
  std::string in;
  uint64_t in_held = 0;  // in.capacity(), as counted in the input budget
  size_t in_start = 0;   // bytes of `in` already run
  size_t needed = 0;     // parse again once `in` holds this many
  std::string out;
  size_t out_sent = 0;
  uint64_t reserved = 0;  // bytes of `out` counted in the response memory
  bool close_after_write = false;
  bool waiting =
      false;            // replies wait for the client since write_waiting_since
  uint32_t events = 0;  // the epoll interest set
  Clock::time_point active;
  Clock::time_point write_waiting_since;
  // The names of the client's certificate (mutual TLS), and the caller:
  // those names, then AUTH's token with them. Null: anonymous.
  std::vector<std::string> certificate_names;
  std::optional<Caller> caller;
};

}  // namespace

class RedisFront::Loop {
 public:
  explicit Loop(RedisFront* front) : front_(front) {
    limits_.max_args = std::max<size_t>(front->options_.max_batch + 1, 64);
    limits_.max_command_bytes = front->options_.max_request_size;
  }
  ~Loop() { Stop(); }

  absl::Status Start() {
    epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    wake_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epoll_ < 0 || wake_ < 0) {
      return absl::InternalError(
          StrCat("cannot make an event loop: ", std::strerror(errno)));
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = wake_;
    ::epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &ev);
    thread_ = std::thread([this] { Run(); });
    return absl::OkStatus();
  }

  void Stop() {
    if (thread_.joinable()) {
      {
        std::lock_guard lock(mu_);
        stopping_ = true;
      }
      Wake();
      thread_.join();
    }
    if (epoll_ >= 0) ::close(epoll_);
    if (wake_ >= 0) ::close(wake_);
    epoll_ = wake_ = -1;
  }

  void Add(int fd) {
    {
      std::lock_guard lock(mu_);
      incoming_.push_back(fd);
    }
    Wake();
  }

 private:
  void Wake() {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_, &one, sizeof(one));
  }

  void Run() {
    std::vector<epoll_event> events(256);
    Clock::time_point last_sweep = Clock::now();
    for (;;) {
      const int n = ::epoll_wait(epoll_, events.data(),
                                 static_cast<int>(events.size()), 1000);
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == wake_) {
          if (!TakeIncoming()) {
            CloseAll();
            return;
          }
          continue;
        }
        auto it = connections_.find(fd);
        if (it == connections_.end()) continue;
        Serve(it->second.get(), events[i].events);
      }
      if (Clock::now() - last_sweep >= std::chrono::seconds(1)) {
        last_sweep = Clock::now();
        Sweep(last_sweep);
      }
    }
  }

  // Takes the connections the listener handed over; false when stopping.
  bool TakeIncoming() {
    uint64_t count;
    [[maybe_unused]] ssize_t r = ::read(wake_, &count, sizeof(count));
    std::vector<int> fds;
    {
      std::lock_guard lock(mu_);
      if (stopping_) {
        for (int fd : incoming_) ::close(fd);
        incoming_.clear();
        return false;
      }
      fds.swap(incoming_);
    }
    const std::shared_ptr<ssl_ctx_st> context = front_->Context();
    for (int fd : fds) {
      auto c = std::make_unique<Connection>(fd);
      c->active = Clock::now();
      c->events = EPOLLIN;
      if (front_->tls_) {
        // No context yet, or no session: dropped (closed as `c` goes).
        if (context == nullptr || !c->stream.StartTls(context.get())) continue;
        c->handshaking = true;
        c->handshake_deadline =
            c->active + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(
                                front_->options_.handshake_timeout_seconds));
      }
      epoll_event ev{};
      ev.events = c->events;
      ev.data.fd = fd;
      if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev) != 0) continue;
      front_->open_.fetch_add(1);
      connections_[fd] = std::move(c);
    }
    return true;
  }

  void Close(Connection* c) {
    const int fd = c->stream.fd();
    ::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
    if (c->reserved > 0) front_->memory_->Release(c->reserved);
    front_->input_held_.fetch_sub(c->in_held);
    front_->open_.fetch_sub(1);
    connections_.erase(fd);  // frees *c, closing the socket
  }

  void CloseAll() {
    while (!connections_.empty()) Close(connections_.begin()->second.get());
  }

  // Closes the connections idle past --max-connection-idle, those whose
  // client has not taken a reply for --send-timeout, and those whose TLS
  // handshake is not done after --handshake-timeout.
  void Sweep(Clock::time_point now) {
    const auto& o = front_->options_;
    std::vector<Connection*> gone;
    for (auto& [fd, c] : connections_) {
      const bool waiting = c->waiting;
      if (c->handshaking) {
        if (now > c->handshake_deadline) gone.push_back(c.get());
      } else if (waiting &&
                 now - c->write_waiting_since >
                     std::chrono::duration<double>(o.send_timeout_seconds)) {
        gone.push_back(c.get());
      } else if (!waiting && o.max_connection_idle_seconds > 0 &&
                 now - c->active > std::chrono::duration<double>(
                                       o.max_connection_idle_seconds)) {
        gone.push_back(c.get());
      }
    }
    for (Connection* c : gone) Close(c);
  }

  void SetInterest(Connection* c, uint32_t events) {
    if (c->events == events) return;
    c->events = events;
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = c->stream.fd();
    ::epoll_ctl(epoll_, EPOLL_CTL_MOD, c->stream.fd(), &ev);
  }

  void Serve(Connection* c, uint32_t ready) {
    if (ready & (EPOLLERR | EPOLLHUP)) {
      Close(c);
      return;
    }
    if (c->handshaking) {
      if (!Handshake(c)) return;  // closed, or waiting for the client
      ready |= EPOLLIN;           // the first command may have come with it
    }
    bool peer_done = false;
    if ((ready & EPOLLIN) || c->read_waits_for_write) {
      const ssize_t end = ReadInput(c);
      if (end == SocketStream::kFailed) {
        Close(c);
        return;
      }
      peer_done = end == SocketStream::kEnd;
    }
    RunCommands(c);
    if (peer_done) c->close_after_write = true;
    if (!Flush(c)) return;  // closed
    // Reads while the replies are under the high water mark.
    const bool waiting = c->out.size() > c->out_sent;
    uint32_t want = 0;
    if (waiting) {
      want |= c->write_waits_for_read ? uint32_t{EPOLLIN} : uint32_t{EPOLLOUT};
    }
    if (!c->close_after_write && c->out.size() - c->out_sent < kHighWater) {
      want |= EPOLLIN;
    }
    if (c->read_waits_for_write) want |= EPOLLOUT;
    SetInterest(c, want);
  }

  // TLS: takes the handshake on; true when it is done. False when it
  // waits for the client (the interest set says for what) or failed (the
  // connection is closed).
  bool Handshake(Connection* c) {
    const ssize_t step = c->stream.Handshake();
    if (step == SocketStream::kFailed) {
      Close(c);
      return false;
    }
    if (step == SocketStream::kWouldBlock) {
      SetInterest(c, c->stream.wait() == SocketStream::Wait::kRead
                         ? uint32_t{EPOLLIN}
                         : uint32_t{EPOLLOUT});
      return false;
    }
    c->handshaking = false;
    c->certificate_names = c->stream.PeerCertificateNames();
    if (!c->certificate_names.empty()) {
      c->caller.emplace();
      c->caller->certificate_names = c->certificate_names;
    }
    return true;
  }

  // Reads what the client sent into `in`. Returns kWouldBlock when it read
  // what there was (or enough for now), kEnd when the client sends no more
  // (its commands are still answered), kFailed when the connection failed.
  // A connection whose input the budget cannot hold (HoldInput) is told
  // why, and closed after the reply.
  ssize_t ReadInput(Connection* c) {
    c->read_waits_for_write = false;
    c->active = Clock::now();
    for (;;) {
      const ssize_t n = c->stream.Read(read_buffer_, kReadChunk);
      if (n == SocketStream::kWouldBlock) {
        c->read_waits_for_write =
            c->stream.wait() == SocketStream::Wait::kWrite;
        return n;
      }
      if (n < 0) return n;  // kEnd, kFailed
      c->in.append(read_buffer_, n);
      if (!HoldInput(c)) {
        std::string().swap(c->in);
        c->in_start = c->needed = 0;
        HoldInput(c);
        AppendError(&c->out, "ERR",
                    StrCat("the server's memory for commands being received "
                           "is full (--grpc-memory ",
                           front_->options_.grpc_memory, " bytes); retry"));
        c->close_after_write = true;
        return SocketStream::kWouldBlock;
      }
      // A short read took what there was. (A TLS read gives one record at
      // most: what is left in the socket wakes epoll_wait again, but bytes
      // OpenSSL already holds would not, so they are read now.)
      if (static_cast<size_t>(n) < kReadChunk && !c->stream.HasPending()) {
        return SocketStream::kWouldBlock;
      }
      // A pipeline is run a megabyte at a time; a command longer than that
      // (up to --max-request-size) is read whole first.
      if (c->in.size() >= std::max(c->in_start + kHighWater, c->needed)) {
        return SocketStream::kWouldBlock;
      }
    }
  }

  // Runs the complete commands `in` holds, while the replies are under the
  // high water mark.
  void RunCommands(Connection* c) {
    while (!c->close_after_write && c->out.size() - c->out_sent < kHighWater &&
           c->in.size() > c->in_start && c->in.size() >= c->needed) {
      const std::string_view pending =
          std::string_view(c->in).substr(c->in_start);
      switch (ParseRespCommand(pending, limits_, &command_)) {
        case RespParse::kIncomplete:
          c->needed = c->in_start + command_.needed;
          if (pending.size() >= limits_.max_command_bytes) {
            AppendError(&c->out, "ERR",
                        StrCat("Protocol error: a command of more than ",
                               limits_.max_command_bytes,
                               " bytes (--max-request-size)"));
            c->close_after_write = true;
          }
          goto compact;
        case RespParse::kError:
          AppendError(&c->out, "ERR", command_.error);
          c->close_after_write = true;
          goto compact;
        case RespParse::kCommand:
          c->in_start += command_.consumed;
          c->needed = 0;
          if (!command_.args.empty()) Execute(c, command_.args);
          break;
      }
    }
  compact:
    if (c->in_start == c->in.size()) {
      c->in.clear();
      c->needed = 0;
      c->in_start = 0;
      if (c->in.capacity() > kKeepInput) std::string().swap(c->in);
    } else if (c->in_start > 0 && c->in_start >= c->in.size() / 2) {
      c->in.erase(0, c->in_start);
      if (c->needed > 0) c->needed -= std::min(c->needed, c->in_start);
      c->in_start = 0;
    }
    HoldInput(c);  // gives back what `in` no longer holds
  }

  // Counts the room `in` holds (its capacity) in the front end's budget
  // for commands being received (--grpc-memory, as gRPC's own buffers are
  // held to). False when the budget cannot hold its growth: nothing more
  // is counted, and the caller gives the room back. The growth was made
  // by the read before: the budget is passed by at most one read's growth
  // per event loop, for as long as closing that connection takes.
  bool HoldInput(Connection* c) {
    const uint64_t room = c->in.capacity();
    if (room <= c->in_held) {
      front_->input_held_.fetch_sub(c->in_held - room);
      c->in_held = room;
      return true;
    }
    const uint64_t more = room - c->in_held;
    if (front_->input_held_.fetch_add(more) + more >
        front_->options_.grpc_memory) {
      front_->input_held_.fetch_sub(more);
      front_->inputs_refused_.fetch_add(1);
      return false;
    }
    c->in_held = room;
    return true;
  }

  // Writes what it can of the replies; false when the connection closed.
  // When they all went out, runs the commands held back by the high water
  // mark and writes their replies too, until the socket is full or no
  // complete command is left.
  bool Flush(Connection* c) {
    for (;;) {
      if (!c->waiting && c->out_sent < c->out.size()) {
        c->waiting = true;
        c->write_waiting_since = Clock::now();
      }
      c->write_waits_for_read = false;
      while (c->out_sent < c->out.size()) {
        const ssize_t n =
            c->stream.Write(std::string_view(c->out).substr(c->out_sent));
        if (n == SocketStream::kWouldBlock) {
          c->write_waits_for_read =
              c->stream.wait() == SocketStream::Wait::kRead;
          return true;
        }
        if (n < 0) {
          Close(c);
          return false;
        }
        const uint64_t released = std::min<uint64_t>(c->reserved, n);
        if (released > 0) {
          front_->memory_->Release(released);
          c->reserved -= released;
        }
        c->out_sent += n;
        c->write_waiting_since = Clock::now();
      }
      c->waiting = false;
      c->out.clear();
      c->out_sent = 0;
      // A big reply's room goes back; a small one's is kept for the next.
      if (c->out.capacity() > kKeepOutput) std::string().swap(c->out);
      if (c->close_after_write) {
        Close(c);
        return false;
      }
      if (c->in.size() <= c->in_start || c->in.size() < c->needed) {
        return true;
      }
      RunCommands(c);
    }
  }

  void Execute(Connection* c, std::span<const std::string_view> args) {
    const std::string_view name = args[0];
    if (IsCommand(name, "GET")) {
      if (args.size() != 2) return WrongArgs(c, "get");
      Lookup(c, Method::kRedisGet, args.subspan(1));
    } else if (IsCommand(name, "MGET")) {
      if (args.size() < 2) return WrongArgs(c, "mget");
      Lookup(c, Method::kRedisMGet, args.subspan(1));
    } else if (IsCommand(name, "EXISTS")) {
      if (args.size() < 2) return WrongArgs(c, "exists");
      Lookup(c, Method::kRedisExists, args.subspan(1));
    } else if (IsCommand(name, "PING")) {
      if (args.size() > 2) return WrongArgs(c, "ping");
      if (args.size() == 2) {
        AppendBulk(&c->out, args[1]);
      } else {
        c->out.append("+PONG\r\n");
      }
    } else if (IsCommand(name, "ECHO")) {
      if (args.size() != 2) return WrongArgs(c, "echo");
      AppendBulk(&c->out, args[1]);
    } else if (IsCommand(name, "AUTH")) {
      if (args.size() < 2 || args.size() > 3) return WrongArgs(c, "auth");
      Auth(c, args.back());
    } else if (IsCommand(name, "HELLO")) {
      Hello(c, args);
    } else if (IsCommand(name, "SELECT")) {
      if (args.size() != 2) return WrongArgs(c, "select");
      if (args[1] == "0") {
        c->out.append("+OK\r\n");
      } else {
        AppendError(&c->out, "ERR",
                    "DB index is out of range (roost has database 0; "
                    "keys name their table as TABLE:KEY)");
      }
    } else if (IsCommand(name, "QUIT")) {
      c->out.append("+OK\r\n");
      c->close_after_write = true;
    } else if (IsCommand(name, "CLIENT") && args.size() >= 2 &&
               (IsCommand(args[1], "SETNAME") ||
                IsCommand(args[1], "SETINFO"))) {
      c->out.append("+OK\r\n");  // what clients send on connecting
    } else if (IsCommand(name, "COMMAND")) {
      c->out.append("*0\r\n");  // redis-cli asks COMMAND DOCS: no docs here
    } else if (IsCommand(name, "CONFIG") && args.size() >= 2 &&
               IsCommand(args[1], "GET")) {
      ConfigGet(c, args.subspan(2));
    } else {
      for (std::string_view w : kWrites) {
        if (IsCommand(name, w)) {
          AppendError(&c->out, "READONLY",
                      "roost serves tables published in batch and takes no "
                      "writes: publish a new version with roost-load");
          return;
        }
      }
      AppendError(&c->out, "ERR",
                  StrCat("unknown command ", PrintableKey(name, 64),
                         "; roost reads with GET, MGET and EXISTS"));
    }
  }

  // redis-benchmark asks for "save" and "appendonly" and warns without
  // them. roost persists nothing through this protocol, so it says so:
  // save "" and appendonly "no". Other parameters (and patterns) match
  // nothing.
  void ConfigGet(Connection* c, std::span<const std::string_view> names) {
    struct Known {
      std::string_view param, upper, value;
    };
    static constexpr Known kKnown[] = {{"save", "SAVE", ""},
                                       {"appendonly", "APPENDONLY", "no"}};
    std::string pairs;
    int count = 0;
    for (const auto& [param, upper, value] : kKnown) {
      for (std::string_view asked : names) {
        if (IsCommand(asked, upper)) {
          AppendBulk(&pairs, param);
          AppendBulk(&pairs, value);
          count += 2;
          break;
        }
      }
    }
    c->out.append(StrCat("*", count, "\r\n"));
    c->out.append(pairs);
  }

  void WrongArgs(Connection* c, std::string_view command) {
    AppendError(
        &c->out, "ERR",
        StrCat("wrong number of arguments for '", command, "' command"));
  }

  void Auth(Connection* c, std::string_view token) {
    AccessControl* access = front_->access_;
    if (access == nullptr) {
      AppendError(&c->out, "ERR",
                  "AUTH given, but this roost-server has no --access-policy");
      return;
    }
    Caller caller;
    caller.certificate_names = c->certificate_names;
    caller.has_token = true;
    caller.token_hash = HashToken(token);
    if (access->policy()->ForTable(caller, "") ==
        AccessPolicy::Verdict::kUnknownToken) {
      access->Refused(AccessControl::Refusal::kUnknownToken);
      // Back to what the connection was before any AUTH.
      c->caller.reset();
      if (!c->certificate_names.empty()) {
        c->caller.emplace();
        c->caller->certificate_names = c->certificate_names;
      }
      AppendError(&c->out, "WRONGPASS",
                  "the token is not in the access policy");
      return;
    }
    c->caller = std::move(caller);
    c->out.append("+OK\r\n");
  }

  // HELLO [2 [AUTH USER TOKEN] [SETNAME NAME]]: RESP2 only.
  void Hello(Connection* c, std::span<const std::string_view> args) {
    size_t i = 1;
    if (args.size() > 1) {
      if (args[1] != "2") {
        AppendError(&c->out, "NOPROTO",
                    "roost speaks RESP2 only: send HELLO 2, or no HELLO");
        return;
      }
      i = 2;
    }
    std::optional<std::string_view> token;
    for (; i < args.size(); ++i) {
      if (IsCommand(args[i], "AUTH") && i + 2 < args.size()) {
        token = args[i + 2];
        i += 2;
      } else if (IsCommand(args[i], "SETNAME") && i + 1 < args.size()) {
        ++i;
      } else {
        AppendError(
            &c->out, "ERR",
            StrCat("syntax error in HELLO at ", PrintableKey(args[i], 64)));
        return;
      }
    }
    if (token) {
      const size_t before = c->out.size();
      Auth(c, *token);
      if (c->out[before] == '-') return;
      c->out.resize(before);
    }
    c->out.append(
        "*14\r\n$6\r\nserver\r\n$5\r\nroost\r\n$7\r\nversion\r\n$5\r\n7.0.0"
        "\r\n$5\r\nproto\r\n:2\r\n$2\r\nid\r\n:0\r\n$4\r\nmode\r\n$10\r\n"
        "standalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n");
  }

  // The table and key that argument `arg` names.
  std::optional<Refusal> Split(std::string_view arg, std::string_view* table,
                               std::string_view* key) const {
    const std::string& fixed = front_->options_.redis_table;
    if (!fixed.empty()) {
      *table = fixed;
      *key = arg;
      return std::nullopt;
    }
    const size_t colon = arg.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return Refusal{grpc::StatusCode::INVALID_ARGUMENT, "ERR",
                     StrCat("key ", PrintableKey(arg, 64),
                            " names no table: write TABLE:KEY (or start "
                            "roost-server with --redis-table)")};
    }
    *table = arg.substr(0, colon);
    *key = arg.substr(colon + 1);
    return std::nullopt;
  }

  // May this connection read `table`?
  std::optional<Refusal> Allowed(Connection* c, std::string_view table) {
    AccessControl* access = front_->access_;
    if (access == nullptr) return std::nullopt;
    // Before AUTH a connection without a client certificate is anonymous:
    // it reads the policy's anonymous_tables.
    static const Caller kAnonymous;
    if (access->policy()->ForTable(c->caller ? *c->caller : kAnonymous,
                                   table) == AccessPolicy::Verdict::kAllowed) {
      return std::nullopt;
    }
    access->Refused(AccessControl::Refusal::kDenied);
    if (!c->caller) {
      return Refusal{grpc::StatusCode::UNAUTHENTICATED, "NOAUTH",
                     StrCat("Authentication required to read table ",
                            PrintableKey(table, 128),
                            ": AUTH with a token of the access policy")};
    }
    if (!c->caller->has_token) {  // known by its certificate alone
      return Refusal{grpc::StatusCode::PERMISSION_DENIED, "NOAUTH",
                     StrCat("this client certificate may not read table ",
                            PrintableKey(table, 128),
                            ": AUTH with a token of the access policy that "
                            "may")};
    }
    return Refusal{
        grpc::StatusCode::PERMISSION_DENIED, "NOPERM",
        StrCat("this token may not read table ", PrintableKey(table, 128))};
  }

  // GET, MGET, EXISTS of `keys`: the lookups of each run of keys of one
  // table against one pinned version, then the reply.
  void Lookup(Connection* c, Method method,
              std::span<const std::string_view> args) {
    const Clock::time_point start = Clock::now();
    RpcMetrics* metrics = front_->metrics_;
    metrics->Started(method);
    std::optional<Refusal> refused = LookupAll(c, method, args);
    if (refused) {
      AppendError(&c->out, refused->prefix, refused->message);
    }
    metrics->Handled(method, refused ? refused->code : grpc::StatusCode::OK,
                     Clock::now() - start);
  }

  std::optional<Refusal> LookupAll(Connection* c, Method method,
                                   std::span<const std::string_view> args) {
    const ServerOptions& o = front_->options_;
    if (args.size() > o.max_batch) {
      return Refusal{grpc::StatusCode::INVALID_ARGUMENT, "ERR",
                     StrCat("a command of ", args.size(),
                            " keys exceeds --max-batch ", o.max_batch)};
    }
    keys_.resize(args.size());
    tables_.resize(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      if (auto r = Split(args[i], &tables_[i], &keys_[i])) return r;
      if (keys_[i].size() > o.max_key_size) {
        return Refusal{
            grpc::StatusCode::INVALID_ARGUMENT, "ERR",
            StrCat("key ", i + 1, " is ", keys_[i].size(),
                   " bytes, more than --max-key-size ", o.max_key_size)};
      }
    }
    front_->metrics_->RequestKeys(method, args.size());
    results_.resize(args.size());
    // Declared in this order so that the versions are released before the
    // table entries may be freed.
    const auto tables = front_->registry_->Tables();
    versions_.clear();
    pins_.resize(0);
    size_t runs = 0;
    for (size_t begin = 0; begin < args.size(); ++runs) {
      size_t end = begin + 1;
      while (end < args.size() && tables_[end] == tables_[begin]) ++end;
      const std::string_view table = tables_[begin];
      if (auto r = Allowed(c, table)) return r;
      TableEntry* entry = tables.Find(table);
      if (entry == nullptr) {
        return Refusal{grpc::StatusCode::NOT_FOUND, "ERR",
                       StrCat("no table ", PrintableKey(table, 128))};
      }
      VersionSlots<ServingVersion>::Pin version;
      if (grpc::Status s = PinVersion(*entry, 0, &version); !s.ok()) {
        return Refusal{s.error_code(), "TRYAGAIN", s.error_message()};
      }
      const std::span<const std::string_view> run(keys_.data() + begin,
                                                  end - begin);
      if (const auto other = version->FirstKeyOfAnotherShard(run)) {
        return Refusal{
            grpc::StatusCode::FAILED_PRECONDITION, "ERR",
            StrCat("key ", begin + other->index + 1, " belongs to shard ",
                   other->shard, " of ", version->opened.manifest.shards,
                   "; this server serves shard ", *version->opened.shard)};
      }
      if (pins_.size() <= runs) pins_.resize(runs + 1);
      pins_[runs].Clear();
      const std::span<LookupResult> out(results_.data() + begin, end - begin);
      if (absl::Status s = version->MultiGet(run, out, &pins_[runs]); !s.ok()) {
        return Refusal{
            grpc::StatusCode::INTERNAL, "ERR",
            StrCat("table ", PrintableKey(table, 128), ": ", s.message())};
      }
      LookupTally tally;
      tally.has_probes = version->table().counts_blocks_touched();
      for (const LookupResult& r : out) tally.Add(r.found, r.blocks_touched);
      entry->lookups.Add(tally);
      versions_.push_back(std::move(version));
      begin = end;
    }
    Reply(c, method);
    for (size_t i = 0; i < runs; ++i) pins_[i].Clear();
    versions_.clear();
    return std::nullopt;
  }

  void Reply(Connection* c, Method method) {
    if (method == Method::kRedisExists) {
      size_t found = 0;
      for (const LookupResult& r : results_) found += r.found;
      c->out.push_back(':');
      c->out.append(std::to_string(found));
      c->out.append("\r\n");
      return;
    }
    size_t size = method == Method::kRedisMGet ? BulkSize(results_.size()) : 0;
    for (const LookupResult& r : results_) {
      size += r.found ? BulkSize(r.value.size()) : 5;
    }
    const ServerOptions& o = front_->options_;
    if (size > o.max_message_size) {
      AppendError(&c->out, "ERR",
                  StrCat("a reply of ", size,
                         " bytes exceeds "
                         "--max-message-size ",
                         o.max_message_size, "; ask for fewer keys"));
      return;
    }
    if (!front_->memory_->Reserve(size)) {
      AppendError(&c->out, "ERR",
                  StrCat("the server's response memory is full "
                         "(--max-response-memory ",
                         front_->memory_->limit(), "); retry later"));
      return;
    }
    c->reserved += size;
    c->out.reserve(c->out.size() + size);
    if (method == Method::kRedisMGet) {
      c->out.push_back('*');
      c->out.append(std::to_string(results_.size()));
      c->out.append("\r\n");
    }
    for (const LookupResult& r : results_) {
      if (r.found) {
        AppendBulk(&c->out, r.value);
      } else {
        c->out.append("$-1\r\n");
      }
    }
  }

  RedisFront* const front_;
  RespLimits limits_;
  int epoll_ = -1;
  int wake_ = -1;
  std::thread thread_;
  std::mutex mu_;
  std::vector<int> incoming_;
  bool stopping_ = false;
  std::unordered_map<int, std::unique_ptr<Connection>> connections_;
  // Scratch reused by every command of this loop.
  char read_buffer_[kReadChunk];
  RespCommand command_;
  std::vector<std::string_view> keys_;
  std::vector<std::string_view> tables_;
  std::vector<LookupResult> results_;
  std::vector<ValuePins> pins_;
  std::vector<VersionSlots<ServingVersion>::Pin> versions_;
};

RedisFront::RedisFront(TableRegistry* registry, RpcMetrics* metrics,
                       ResponseMemory* memory, const ServerOptions& options,
                       AccessControl* access)
    : registry_(registry),
      metrics_(metrics),
      memory_(memory),
      options_(options),
      access_(access),
      tls_(!options.tls_cert.empty()) {}

void RedisFront::CollectMetrics(
    std::vector<prometheus::MetricFamily>* out) const {
  AddScalar(out, "roost_redis_input_bytes",
            "Bytes held by the Redis front end's commands being received (at "
            "most --grpc-memory).",
            prometheus::MetricType::Gauge,
            static_cast<double>(input_held_.load()));
  AddScalar(out, "roost_redis_inputs_refused_total",
            "Redis connections closed because the commands being received "
            "held --grpc-memory.",
            prometheus::MetricType::Counter,
            static_cast<double>(inputs_refused_.load()));
}

void RedisFront::SetContext(SslContext context) {
  std::shared_ptr<ssl_ctx_st> shared(context.release(), SslCtxFree());
  std::lock_guard lock(context_mu_);
  context_ = std::move(shared);
}

std::shared_ptr<ssl_ctx_st> RedisFront::Context() const {
  std::lock_guard lock(context_mu_);
  return context_;
}

RedisFront::~RedisFront() { Stop(); }

absl::Status RedisFront::Start(Listener* listener, ConnectionLimit* limit) {
  for (uint32_t i = 0; i < std::max<uint32_t>(1, options_.redis_threads); ++i) {
    loops_.push_back(std::make_unique<Loop>(this));
    if (absl::Status s = loops_.back()->Start(); !s.ok()) {
      Stop();
      return s;
    }
  }
  listener->Start(
      [this](int /*listen_fd*/, int fd) {
        loops_[next_loop_.fetch_add(1) % loops_.size()]->Add(fd);
      },
      limit);
  return absl::OkStatus();
}

void RedisFront::Stop() {
  for (auto& loop : loops_) loop->Stop();
  loops_.clear();
}

}  // namespace roost
