// redis_load: Redis's counterpart of bench/server_load.cc, over loopback
// only: the same keys, the same closed loop, the same histogram and JSON
// line, so that a report can set Redis beside roost-server. It speaks to
// Redis through hiredis, the client most Redis users run.
//
//   redis_load fill --addr 127.0.0.1:6379 --keys 10000000
//   redis_load run --addr 127.0.0.1:6379 --method mget --batch 1000
//       --keys 10000000 --server-pid 1234   (one line)
//
// The keys are those of bench/gen_records.cc for the same --keys and --seed
// (bench/generated_pairs.h: key i = Mix(base + i), value = Mix(key ^ c),
// each the 8 bytes of the number as they lie in memory).
//
// fill: MSETs of --batch pairs each, on one blocking connection, --pipeline
// of them in flight (appended ahead, their "+OK"s read as they come); then
// checks that DBSIZE is --keys and that a few hundred keys hold their
// values. One JSON line: {"keys":N,"seconds":S,"keys_per_s":R,"commands":C},
// where S covers the MSETs only, not the check.
//
// run: --connections TCP connections (hiredis sets TCP_NODELAY), each with
// one request in flight, so that the concurrency is the number of
// connections: GET of one key, or MGET of --batch keys, drawn uniformly at
// random from the set. One thread drives them all from one epoll loop, each
// connection a non-blocking redisContext (redisAppendCommandArgv, then
// redisBufferWrite when writable, redisBufferRead and
// redisGetReplyFromReader when readable): Redis executes commands on one
// thread, and the client costs less than the server it loads. On the 2-core
// machine this was written on, at K=64, GET at 200k QPS took the loop 0.39
// CPU-seconds a second and Redis 0.60; MGET of 100 keys, 0.06 and 0.94
// (client_cpu_s and server_cpu_s in the JSON line; measured with the
// hand-written RESP client this program had before hiredis). A second
// client thread would only compete with Redis for the cores.
//
// Every reply is checked whole. A nil for a key of the set is a miss, a
// wrong value a bad value; an error reply, a malformed reply, no reply
// within --timeout or a broken connection is a failed request (and, but for
// an error reply, the connection is opened anew: its stream is out of
// step). After --warmup seconds, the loop measures for --duration seconds:
// latencies, from a request's first byte sent to its reply's last byte
// parsed, of the requests that completed in the window without error. One
// JSON line with server_load's fields (bench/load_stats.h), "channels" and
// "concurrency" both being --connections; --server-pid adds Redis's CPU over
// the window (/proc/PID/stat). Exit status, as server_load's: 0 when the run
// had no errors, 1 when it had some, 2 for bad usage or a server that does
// not answer at all.

#include <hiredis/hiredis.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/generated_pairs.h"
#include "bench/load_stats.h"
#include "fmt/format.h"

namespace {

using Clock = std::chrono::steady_clock;

using roost::bench::GeneratedPairs;
using roost::bench::Histogram;
using roost::bench::LoadReport;
using roost::bench::LoadReportJson;
using roost::bench::Mix;
using roost::bench::ProcessCpuSeconds;
using roost::bench::SelfCpuSeconds;

constexpr int kExitErrors = 1;
constexpr int kExitUsage = 2;  // also: the server does not answer at all

struct ContextFree {
  void operator()(redisContext* c) const { redisFree(c); }
};
struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
// A hiredis connection, and a reply; both freed with hiredis's own calls.
using Context = std::unique_ptr<redisContext, ContextFree>;
using Reply = std::unique_ptr<redisReply, ReplyFree>;

std::string_view Bytes(const uint64_t& v) {
  return {reinterpret_cast<const char*>(&v), sizeof(v)};
}

// A loopback address as hiredis takes it.
struct Endpoint {
  std::string host;  // "127.0.0.1" or "::1"
  int port = 0;
};

// 127.0.0.1:PORT, localhost:PORT (as 127.0.0.1) or [::1]:PORT; nullopt for
// anything else.
std::optional<Endpoint> ParseLoopback(std::string_view s) {
  struct Host {
    std::string_view prefix;
    const char* host;
  };
  for (const Host& h :
       {Host{"127.0.0.1:", "127.0.0.1"}, Host{"localhost:", "127.0.0.1"},
        Host{"[::1]:", "::1"}}) {
    if (s.substr(0, h.prefix.size()) != h.prefix) continue;
    const std::string_view digits = s.substr(h.prefix.size());
    int port = 0;
    const char* end = digits.data() + digits.size();
    const auto [ptr, ec] = std::from_chars(digits.data(), end, port);
    if (digits.empty() || ec != std::errc() || ptr != end || port <= 0 ||
        port > 65535) {
      return std::nullopt;
    }
    return Endpoint{h.host, port};
  }
  return std::nullopt;
}

timeval Timeval(double seconds) {
  timeval t{};
  t.tv_sec = static_cast<time_t>(seconds);
  t.tv_usec = static_cast<suseconds_t>((seconds - t.tv_sec) * 1e6);
  return t;
}

// Up to 48 bytes of `s`, quoted, with what is not printable escaped.
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

// A reply as an error message shows it.
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

// What a context's error says, as this program words it.
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

// Bytes read and not parsed into a reply yet.
std::string_view Unparsed(const redisContext& c) {
  return {c.reader->buf + c.reader->pos, c.reader->len - c.reader->pos};
}

// --- fill -------------------------------------------------------------------

struct FillFlags {
  std::string addr;
  uint64_t keys = 0;
  uint64_t seed = 20261122;
  uint32_t batch = 1000;
  uint32_t pipeline = 8;
  double timeout = 10;
};

// Keys checked after a fill: the first, the last, and random ones.
constexpr int kCheckedKeys = 300;

int RunFill(const FillFlags& f, const Endpoint& endpoint) {
  // A blocking context: redisGetReply writes what was appended, then waits
  // for the next reply; a wait past --timeout fails.
  const Context conn(redisConnectWithTimeout(
      endpoint.host.c_str(), endpoint.port, Timeval(f.timeout)));
  if (conn == nullptr || conn->err != 0) {
    fmt::print(stderr, "redis_load: {}: {}\n", f.addr,
               conn == nullptr ? "out of memory" : ContextError(*conn));
    return kExitUsage;
  }
  redisSetTimeout(conn.get(), Timeval(f.timeout));
  auto fail = [](std::string_view what) {
    fmt::print(stderr, "redis_load: fill: {}\n", what);
    return kExitErrors;
  };
  auto next_reply = [&conn](Reply* reply) {
    void* r = nullptr;
    const bool ok = redisGetReply(conn.get(), &r) == REDIS_OK;
    reply->reset(static_cast<redisReply*>(r));
    return ok;
  };
  auto call = [&conn](std::initializer_list<std::string_view> args) {
    std::vector<const char*> argv;
    std::vector<size_t> argvlen;
    for (const std::string_view a : args) {
      argv.push_back(a.data());
      argvlen.push_back(a.size());
    }
    return Reply(static_cast<redisReply*>(
        redisCommandArgv(conn.get(), static_cast<int>(argv.size()), argv.data(),
                         argvlen.data())));
  };

  const GeneratedPairs pairs(f.seed);
  const uint64_t commands = (f.keys + f.batch - 1) / f.batch;
  // One MSET's arguments: its name, then key and value of each pair.
  std::vector<uint64_t> numbers(2 * size_t{f.batch});
  std::vector<const char*> argv(1 + numbers.size());
  std::vector<size_t> argvlen(argv.size(), sizeof(uint64_t));
  argv[0] = "MSET";
  argvlen[0] = 4;
  for (size_t j = 0; j < numbers.size(); ++j) {
    argv[1 + j] = reinterpret_cast<const char*>(&numbers[j]);
  }
  uint64_t sent = 0;
  Reply reply;
  const Clock::time_point t0 = Clock::now();
  for (uint64_t answered = 0; answered < commands; ++answered) {
    // Append up to --pipeline MSETs ahead; the next redisGetReply writes
    // them in one send.
    for (; sent < commands && sent - answered < f.pipeline; ++sent) {
      const uint64_t first = sent * f.batch;
      const uint64_t end = std::min(f.keys, first + f.batch);
      for (uint64_t i = first; i < end; ++i) {
        const uint64_t key = pairs.Key(i);
        numbers[2 * (i - first)] = key;
        numbers[2 * (i - first) + 1] = GeneratedPairs::ValueOf(key);
      }
      redisAppendCommandArgv(conn.get(),
                             static_cast<int>(1 + 2 * (end - first)),
                             argv.data(), argvlen.data());
    }
    if (!next_reply(&reply)) {
      return fail(fmt::format("MSET #{}: {}", answered, ContextError(*conn)));
    }
    if (!IsString(*reply, REDIS_REPLY_STATUS, "OK")) {
      return fail(
          fmt::format("MSET #{} answered {}", answered, Describe(*reply)));
    }
  }
  const double seconds =
      std::chrono::duration<double>(Clock::now() - t0).count();

  reply = call({"DBSIZE"});
  if (reply == nullptr) return fail("DBSIZE: " + ContextError(*conn));
  if (reply->type != REDIS_REPLY_INTEGER ||
      reply->integer != static_cast<long long>(f.keys)) {
    return fail(
        fmt::format("DBSIZE answered {}, not {}: the database held other keys "
                    "(FLUSHALL it first)",
                    Describe(*reply), f.keys));
  }
  for (int c = 0; c < kCheckedKeys; ++c) {
    const uint64_t i = c == 0   ? 0
                       : c == 1 ? f.keys - 1
                                : Mix(f.seed + 0x2000 + c) % f.keys;
    const uint64_t key = pairs.Key(i);
    const uint64_t value = GeneratedPairs::ValueOf(key);
    reply = call({"GET", Bytes(key)});
    if (reply == nullptr) {
      return fail(fmt::format("GET of key #{}: {}", i, ContextError(*conn)));
    }
    if (!IsString(*reply, REDIS_REPLY_STRING, Bytes(value))) {
      return fail(fmt::format("GET of key #{} answered {}, not its value {}", i,
                              Describe(*reply), Excerpt(Bytes(value))));
    }
  }
  fmt::print(
      "{{\"keys\":{},\"seconds\":{:.3f},\"keys_per_s\":{:.1f},"
      "\"commands\":{}}}\n",
      f.keys, seconds, f.keys / seconds, commands);
  return 0;
}

// --- run --------------------------------------------------------------------

struct RunFlags {
  std::string addr;
  std::string method = "get";
  uint32_t batch = 0;  // 0: 1 for get, 100 for mget
  int connections = 64;
  double duration = 10;
  double warmup = 2;
  uint64_t keys = 0;
  uint64_t seed = 20261122;
  int server_pid = 0;
  double timeout = 10;
};

// A non-blocking context connected to `e` within `timeout_s` seconds; null
// (and *error) when it is not.
Context ConnectNonBlock(const Endpoint& e, double timeout_s,
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

// Writes what was appended to the non-blocking `c` and waits up to
// `timeout_s` seconds for the next reply; false (and *error) without one.
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

enum class Phase { kWarmup, kMeasure, kStop };

// One connection of the closed loop, and its one request in flight.
struct Slot {
  Context conn;                   // null: broken, and not reopened
  bool want_write = false;        // EPOLLOUT on: the request only partly sent
  bool in_flight = false;         // a request sent, its reply not parsed
  std::vector<uint64_t> picked;   // the key numbers of the request
  std::vector<uint64_t> keys;     // their keys, where argv points
  std::vector<const char*> argv;  // GET k, or MGET k1 ... kB
  std::vector<size_t> argvlen;
  bool answer_ok = true;  // no error in the reply so far
  Clock::time_point start;
  uint64_t rng = 0;
};

// The closed loop: every connection, the phase, and what was counted.
class ClosedLoop {
 public:
  ClosedLoop(const RunFlags& flags, const Endpoint& endpoint)
      : flags_(flags),
        endpoint_(endpoint),
        pairs_(flags.seed),
        mget_(flags.method == "mget"),
        timeout_(std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double>(flags.timeout))),
        slots_(static_cast<size_t>(flags.connections)) {
    for (size_t i = 0; i < slots_.size(); ++i) {
      Slot& s = slots_[i];
      s.picked.resize(flags.batch);
      s.keys.resize(flags.batch);
      s.argv.push_back(mget_ ? "MGET" : "GET");
      s.argvlen.push_back(mget_ ? 4 : 3);
      for (const uint64_t& key : s.keys) {
        s.argv.push_back(reinterpret_cast<const char*>(&key));
        s.argvlen.push_back(sizeof(key));
      }
      s.rng = Mix(flags.seed + 0x1000 + i);
    }
  }
  ClosedLoop(const ClosedLoop&) = delete;
  ClosedLoop& operator=(const ClosedLoop&) = delete;
  ~ClosedLoop() {
    slots_.clear();
    if (epoll_ >= 0) close(epoll_);
  }

  // Opens every connection and PINGs it; false (and *error) when the
  // server does not answer.
  bool Connect(std::string* error) {
    epoll_ = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_ < 0) {
      *error = fmt::format("epoll_create1: {}", std::strerror(errno));
      return false;
    }
    for (size_t i = 0; i < slots_.size(); ++i) {
      Slot& s = slots_[i];
      s.conn = ConnectNonBlock(endpoint_, flags_.timeout, error);
      if (s.conn == nullptr) return false;
      Reply pong;
      redisAppendCommand(s.conn.get(), "PING");
      if (!AwaitReply(s.conn.get(), flags_.timeout, &pong, error)) {
        return false;
      }
      if (!IsString(*pong, REDIS_REPLY_STATUS, "PONG")) {
        *error = fmt::format("PING answered {}", Describe(*pong));
        return false;
      }
      if (!Unparsed(*s.conn).empty()) {
        *error = "bytes after PING's reply";
        return false;
      }
      if (!Watch(i, error)) return false;
    }
    return true;
  }

  // Warm-up, measured window, then the requests still in flight.
  void Run() {
    Clock::time_point now = Clock::now();
    warmup_end_ = now + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(flags_.warmup));
    for (Slot& s : slots_) Issue(s);
    Clock::time_point last_deadline_check = now;
    std::vector<epoll_event> events(256);
    while (true) {
      now = Clock::now();
      Tick(now);
      if (phase_ == Phase::kStop && in_flight_ == 0) break;
      if (now - last_deadline_check >= std::chrono::milliseconds(50)) {
        CheckDeadlines(now);
        last_deadline_check = now;
      }
      while (!reopened_.empty()) {
        Slot& s = slots_[reopened_.back()];
        reopened_.pop_back();
        if (phase_ != Phase::kStop && s.conn != nullptr) Issue(s);
      }
      int wait_ms = 50;
      if (phase_ != Phase::kStop) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(
            (phase_ == Phase::kWarmup ? warmup_end_ : measure_end_) - now);
        wait_ms = std::clamp<int>(static_cast<int>(left.count()), 0, 50);
      }
      const int n = epoll_wait(epoll_, events.data(),
                               static_cast<int>(events.size()), wait_ms);
      if (n < 0 && errno != EINTR) {
        fmt::print(stderr, "redis_load: epoll_wait: {}\n",
                   std::strerror(errno));
        std::_Exit(kExitErrors);
      }
      for (int k = 0; k < n; ++k) {
        Slot& s = slots_[events[k].data.u32];
        if (s.conn == nullptr) continue;
        if ((events[k].events & EPOLLOUT) != 0) Flush(s);
        if (s.conn != nullptr &&
            (events[k].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) != 0) {
          OnReadable(s);
        }
      }
    }
  }

  // The measured window's figures.
  LoadReport Report() const {
    LoadReport r;
    r.method = flags_.method;
    r.batch = flags_.batch;
    r.channels = flags_.connections;
    r.concurrency = flags_.connections;
    r.seconds =
        std::chrono::duration<double>(measure_stop_ - measure_start_).count();
    r.rpcs = rpcs_;
    r.keys = keys_done_;
    r.latency = &latency_;
    r.rpc_errors = rpc_errors_;
    r.misses = misses_;
    r.bad_values = bad_values_;
    r.client_cpu_s = self_cpu1_ - self_cpu0_;
    if (server_cpu0_ && server_cpu1_) {
      r.server_cpu_s = *server_cpu1_ - *server_cpu0_;
    }
    return r;
  }
  const std::string& first_error() const { return first_error_; }
  // Connections that broke before the window ended and could not be opened
  // anew (their slots stayed idle).
  int lost_connections() const { return lost_connections_; }

 private:
  // Puts slot i's connection in the epoll set, for reading.
  bool Watch(size_t i, std::string* error) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(i);
    slots_[i].want_write = false;
    if (epoll_ctl(epoll_, EPOLL_CTL_ADD, slots_[i].conn->fd, &ev) != 0) {
      *error = fmt::format("epoll_ctl: {}", std::strerror(errno));
      return false;
    }
    return true;
  }

  uint64_t NextRandom(Slot& s) { return Mix(s.rng += 0x9e3779b97f4a7c15ULL); }

  void Issue(Slot& s) {
    for (size_t j = 0; j < s.picked.size(); ++j) {
      s.picked[j] = NextRandom(s) % flags_.keys;
      s.keys[j] = pairs_.Key(s.picked[j]);
    }
    s.in_flight = true;
    s.answer_ok = true;
    ++in_flight_;
    s.start = Clock::now();
    if (redisAppendCommandArgv(s.conn.get(), static_cast<int>(s.argv.size()),
                               s.argv.data(), s.argvlen.data()) != REDIS_OK) {
      return Broken(s, ContextError(*s.conn));
    }
    Flush(s);
  }

  // Sends what is left of the request; waits for EPOLLOUT if it cannot.
  void Flush(Slot& s) {
    int done = 0;
    if (redisBufferWrite(s.conn.get(), &done) != REDIS_OK) {
      return Broken(s, fmt::format("send: {}", ContextError(*s.conn)));
    }
    if (done == 0 && !s.want_write) SetWantWrite(s, true);
    if (done != 0 && s.want_write) SetWantWrite(s, false);
  }

  void SetWantWrite(Slot& s, bool on) {
    epoll_event ev{};
    ev.events = on ? EPOLLIN | EPOLLOUT : EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(&s - slots_.data());
    epoll_ctl(epoll_, EPOLL_CTL_MOD, s.conn->fd, &ev);
    s.want_write = on;
  }

  void OnReadable(Slot& s) {
    if (redisBufferRead(s.conn.get()) != REDIS_OK) {
      return Broken(s, s.conn->err == REDIS_ERR_EOF
                           ? ContextError(*s.conn)
                           : fmt::format("read: {}", ContextError(*s.conn)));
    }
    while (s.conn != nullptr) {
      void* r = nullptr;
      if (redisGetReplyFromReader(s.conn.get(), &r) != REDIS_OK) {
        return Broken(s, fmt::format("{}: {}", ContextError(*s.conn),
                                     Excerpt(Unparsed(*s.conn))));
      }
      if (r == nullptr) return;
      const Reply reply(static_cast<redisReply*>(r));
      if (!s.in_flight) {
        return Broken(s, fmt::format("a reply that answers no request: {}",
                                     Describe(*reply)));
      }
      OnReply(s, *reply);
    }
  }

  void OnReply(Slot& s, const redisReply& r) {
    const char* command = mget_ ? "MGET" : "GET";
    if (r.type == REDIS_REPLY_ERROR) {
      RpcError(s, fmt::format("{} answered {}", command, Describe(r)));
      return Complete(s);
    }
    if (!mget_) {
      if (!Check(s, 0, r)) {
        return Broken(s, fmt::format("GET answered {}", Describe(r)));
      }
      return Complete(s);
    }
    if (r.type != REDIS_REPLY_ARRAY || r.elements != s.picked.size()) {
      return Broken(s, fmt::format("MGET answered {}", Describe(r)));
    }
    for (size_t j = 0; j < r.elements; ++j) {
      if (!Check(s, j, *r.element[j])) {
        return Broken(s,
                      fmt::format("MGET answered {}", Describe(*r.element[j])));
      }
    }
    Complete(s);
  }

  // Checks the answer for key s.picked[j]: false when it is neither a value
  // nor nil.
  bool Check(Slot& s, size_t j, const redisReply& r) {
    const uint64_t i = s.picked[j];
    if (r.type == REDIS_REPLY_NIL) {
      s.answer_ok = false;
      Count(&misses_, fmt::format("key #{} not found", i));
      return true;
    }
    if (r.type != REDIS_REPLY_STRING) return false;
    const uint64_t value = GeneratedPairs::ValueOf(pairs_.Key(i));
    if (r.len != sizeof(value)) {
      s.answer_ok = false;
      Count(&bad_values_,
            fmt::format("key #{}: a value of {} bytes, not 8", i, r.len));
    } else if (std::memcmp(r.str, &value, sizeof(value)) != 0) {
      s.answer_ok = false;
      Count(&bad_values_, fmt::format("key #{}: not the key's value", i));
    }
    return true;
  }

  void Complete(Slot& s) {
    const Clock::time_point now = Clock::now();
    s.in_flight = false;
    --in_flight_;
    if (s.want_write) {
      return Broken(s, "a reply before the whole request was sent");
    }
    Tick(now);
    if (s.answer_ok && phase_ == Phase::kMeasure) {
      ++rpcs_;
      keys_done_ += s.picked.size();
      latency_.Record(static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(now - s.start)
              .count()));
    }
    // One request in flight: more bytes now answer nothing.
    if (const std::string_view more = Unparsed(*s.conn); !more.empty()) {
      return Broken(
          s, fmt::format("bytes that answer no request: {}", Excerpt(more)));
    }
    if (phase_ != Phase::kStop) Issue(s);
  }

  // A failed request whose connection stays in step (an error reply).
  void RpcError(Slot& s, std::string what) {
    s.answer_ok = false;
    Count(&rpc_errors_, std::move(what));
  }

  // A failed request, or a connection out of step: closes the connection
  // and, but in the stop phase, opens a new one (issued from the loop).
  void Broken(Slot& s, std::string what) {
    if (s.in_flight) {
      s.in_flight = false;
      --in_flight_;
    }
    Count(&rpc_errors_, std::move(what));
    s.conn.reset();  // closing the socket takes it out of the epoll set
    s.want_write = false;
    if (phase_ == Phase::kStop) return;
    std::string error;
    const size_t i = static_cast<size_t>(&s - slots_.data());
    s.conn = ConnectNonBlock(endpoint_, flags_.timeout, &error);
    if (s.conn != nullptr && Watch(i, &error)) {
      reopened_.push_back(i);
    } else {
      s.conn.reset();
      ++lost_connections_;
    }
  }

  void Count(uint64_t* counter, std::string what) {
    if ((*counter)++ == 0 && first_error_.empty()) {
      first_error_ = std::move(what);
    }
  }

  void CheckDeadlines(Clock::time_point now) {
    for (Slot& s : slots_) {
      if (s.in_flight && now - s.start > timeout_) {
        Broken(s, fmt::format("no reply within {} s", flags_.timeout));
      }
    }
  }

  // Moves to the next phase when its time has come.
  void Tick(Clock::time_point now) {
    if (phase_ == Phase::kWarmup && now >= warmup_end_) {
      phase_ = Phase::kMeasure;
      if (flags_.server_pid != 0) {
        server_cpu0_ = ProcessCpuSeconds(flags_.server_pid);
      }
      self_cpu0_ = SelfCpuSeconds();
      measure_start_ = now;
      measure_end_ = now + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(flags_.duration));
    } else if (phase_ == Phase::kMeasure && now >= measure_end_) {
      phase_ = Phase::kStop;
      measure_stop_ = now;
      self_cpu1_ = SelfCpuSeconds();
      if (flags_.server_pid != 0) {
        server_cpu1_ = ProcessCpuSeconds(flags_.server_pid);
      }
    }
  }

  const RunFlags& flags_;
  const Endpoint endpoint_;
  const GeneratedPairs pairs_;
  const bool mget_;
  const Clock::duration timeout_;
  std::vector<Slot> slots_;
  std::vector<size_t> reopened_;  // slots reconnected, to issue from
  int epoll_ = -1;
  int in_flight_ = 0;
  int lost_connections_ = 0;

  Phase phase_ = Phase::kWarmup;
  Clock::time_point warmup_end_;
  Clock::time_point measure_start_;
  Clock::time_point measure_end_;
  Clock::time_point measure_stop_;
  double self_cpu0_ = 0;
  double self_cpu1_ = 0;
  std::optional<double> server_cpu0_;
  std::optional<double> server_cpu1_;

  // The whole run's.
  uint64_t rpc_errors_ = 0;
  uint64_t misses_ = 0;
  uint64_t bad_values_ = 0;
  std::string first_error_;
  // The measured window's (requests completed in it without error).
  uint64_t rpcs_ = 0;
  uint64_t keys_done_ = 0;
  Histogram latency_;
};

int RunLoad(const RunFlags& flags, const Endpoint& endpoint) {
  ClosedLoop loop(flags, endpoint);
  std::string error;
  if (!loop.Connect(&error)) {
    fmt::print(stderr, "redis_load: {}: {}\n", flags.addr, error);
    return kExitUsage;
  }
  loop.Run();
  const LoadReport r = loop.Report();
  fmt::print("{}\n", LoadReportJson(r));
  std::fflush(stdout);
  const uint64_t errors = r.rpc_errors + r.misses + r.bad_values;
  if (errors > 0) {
    fmt::print(stderr,
               "redis_load: {} errors ({} failed requests, {} misses, {} "
               "wrong values); the first: {}\n",
               errors, r.rpc_errors, r.misses, r.bad_values,
               loop.first_error());
    if (loop.lost_connections() > 0) {
      fmt::print(stderr,
                 "redis_load: {} connections broke during the run and could "
                 "not be opened anew\n",
                 loop.lost_connections());
    }
    return kExitErrors;
  }
  if (r.rpcs == 0) {
    fmt::print(stderr, "redis_load: no request completed in the window\n");
    return kExitErrors;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "redis_load: Redis's counterpart of server_load, over loopback: fill "
      "loads gen_records's pairs with MSET; run loads Redis closed-loop with "
      "GET or MGET and prints one JSON line with server_load's fields. Exits "
      "1 when a request failed or an answer was wrong, 2 on bad usage or an "
      "unreachable server."};
  // A flag given twice: the last one wins.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.require_subcommand(1);
  const std::string addr_help =
      "Redis's address: 127.0.0.1:PORT, localhost:PORT or [::1]:PORT";

  FillFlags fill;
  CLI::App* fill_cmd = app.add_subcommand(
      "fill",
      "Load keys 0 to N-1 of gen_records's pairs with pipelined MSETs, check "
      "DBSIZE and a few hundred values; print "
      "{\"keys\",\"seconds\",\"keys_per_s\",\"commands\"} (seconds: the "
      "MSETs').");
  fill_cmd->add_option("--addr", fill.addr, addr_help)->required();
  fill_cmd->add_option("--keys", fill.keys, "Keys to load")
      ->required()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  fill_cmd->add_option("--seed", fill.seed, "gen_records's seed")
      ->capture_default_str();
  fill_cmd->add_option("--batch", fill.batch, "Pairs per MSET")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  fill_cmd->add_option("--pipeline", fill.pipeline, "MSETs in flight")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  fill_cmd
      ->add_option("--timeout", fill.timeout,
                   "Longest wait for a reply, seconds")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();

  RunFlags run;
  CLI::App* run_cmd = app.add_subcommand(
      "run",
      "Closed-loop load: --connections connections with one GET or MGET in "
      "flight each; every reply checked; one JSON line as server_load's.");
  run_cmd->add_option("--addr", run.addr, addr_help)->required();
  run_cmd->add_option("--method", run.method, "get or mget")
      ->check(CLI::IsMember({"get", "mget"}))
      ->capture_default_str();
  run_cmd
      ->add_option("--batch", run.batch,
                   "Keys per MGET (default 100; GET takes 1)")
      ->check(CLI::Range(1, 1 << 20));
  run_cmd
      ->add_option("--connections", run.connections,
                   "TCP connections, each with one request in flight")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  run_cmd->add_option("--duration", run.duration, "Measured seconds")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  run_cmd
      ->add_option("--warmup", run.warmup, "Seconds of load before measuring")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  run_cmd
      ->add_option("--keys", run.keys,
                   "Keys loaded (by fill): requests draw from the first N")
      ->required()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  run_cmd->add_option("--seed", run.seed, "gen_records's seed")
      ->capture_default_str();
  run_cmd->add_option("--server-pid", run.server_pid,
                      "Report this process's CPU over the measured window");
  run_cmd
      ->add_option("--timeout", run.timeout,
                   "Longest wait for a reply, seconds")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }
  auto usage_error = [](const std::string& what) {
    fmt::print(stderr, "redis_load: {}\n", what);
    return kExitUsage;
  };
  const std::string& addr = fill_cmd->parsed() ? fill.addr : run.addr;
  const std::optional<Endpoint> endpoint = ParseLoopback(addr);
  if (!endpoint) {
    return usage_error(fmt::format(
        "refusing {}: loopback only (127.0.0.1:PORT, localhost:PORT, "
        "[::1]:PORT)",
        addr));
  }
  if (fill_cmd->parsed()) return RunFill(fill, *endpoint);

  const bool mget = run.method == "mget";
  if (run.batch == 0) run.batch = mget ? 100 : 1;
  if (!mget && run.batch != 1) return usage_error("get takes --batch 1");
  if (run.server_pid != 0 && !ProcessCpuSeconds(run.server_pid)) {
    return usage_error(
        fmt::format("cannot read /proc/{}/stat", run.server_pid));
  }
  return RunLoad(run, *endpoint);
}
