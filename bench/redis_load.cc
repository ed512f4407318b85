// redis_load: Redis's counterpart of bench/server_load.cc, over loopback
// only: the same keys, the same closed loop, the same histogram and JSON
// line, so that a report can set Redis beside roost-server. It speaks RESP2
// on plain sockets (bench/resp.h); no hiredis.
//
//   redis_load fill --addr 127.0.0.1:6379 --keys 10000000
//   redis_load run --addr 127.0.0.1:6379 --method mget --batch 1000
//       --keys 10000000 --server-pid 1234   (one line)
//
// The keys are those of bench/gen_records.cc for the same --keys and --seed
// (bench/generated_pairs.h: key i = Mix(base + i), value = Mix(key ^ c),
// each the 8 bytes of the number as they lie in memory).
//
// fill: MSETs of --batch pairs each, on one connection, --pipeline of them
// in flight (written ahead, their "+OK"s read as they come); then checks
// that DBSIZE is --keys and that a few hundred keys hold their values. One
// JSON line: {"keys":N,"seconds":S,"keys_per_s":R,"commands":C}, where S
// covers the MSETs only, not the check.
//
// run: --connections TCP connections (TCP_NODELAY), each with one request
// in flight, so that the concurrency is the number of connections: GET of
// one key, or MGET of --batch keys, drawn uniformly at random from the set.
// One thread drives them all from one epoll loop: Redis executes commands on
// one thread, and the client costs less than the server it loads. On the
// 2-core machine this was written on, at K=64, GET at 200k QPS took the loop
// 0.39 CPU-seconds a second and Redis 0.60; MGET of 100 keys, 0.06 and 0.94
// (client_cpu_s and server_cpu_s in the JSON line). A second client thread
// would only compete with Redis for the cores.
//
// Every reply is parsed whole and checked. A nil for a key of the set is a
// miss, a wrong value a bad value; an error reply, a malformed reply, no
// reply within --timeout or a broken connection is a failed request (and,
// but for an error reply, the connection is opened anew: its stream is out
// of step). After --warmup seconds, the loop measures for --duration seconds:
// latencies, from a request's first byte sent to its reply's last byte
// parsed, of the requests that completed in the window without error. One
// JSON line with server_load's fields (bench/load_stats.h), "channels" and
// "concurrency" both being --connections; --server-pid adds Redis's CPU over
// the window (/proc/PID/stat). Exit status, as server_load's: 0 when the run
// had no errors, 1 when it had some, 2 for bad usage or a server that does
// not answer at all.

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/generated_pairs.h"
#include "bench/load_stats.h"
#include "bench/resp.h"
#include "bench/resp_client.h"
#include "fmt/format.h"

namespace {

using Clock = std::chrono::steady_clock;

using roost::bench::AppendArrayHeader;
using roost::bench::AppendBulk;
using roost::bench::Describe;
using roost::bench::Endpoint;
using roost::bench::Excerpt;
using roost::bench::GeneratedPairs;
using roost::bench::Histogram;
using roost::bench::LoadReport;
using roost::bench::LoadReportJson;
using roost::bench::Mix;
using roost::bench::OpenSocket;
using roost::bench::ParseLoopback;
using roost::bench::ParseRespElement;
using roost::bench::ProcessCpuSeconds;
using roost::bench::ReadBuffer;
using roost::bench::RespElement;
using roost::bench::RespParse;
using roost::bench::RespType;
using roost::bench::SelfCpuSeconds;
using roost::bench::SyncConnection;

constexpr int kExitErrors = 1;
constexpr int kExitUsage = 2;  // also: the server does not answer at all

std::string_view Bytes(const uint64_t& v) {
  return {reinterpret_cast<const char*>(&v), sizeof(v)};
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
  SyncConnection conn;
  std::string error;
  if (!conn.Open(endpoint, f.timeout, &error)) {
    fmt::print(stderr, "redis_load: {}: {}\n", f.addr, error);
    return kExitUsage;
  }
  auto fail = [](std::string_view what) {
    fmt::print(stderr, "redis_load: fill: {}\n", what);
    return kExitErrors;
  };

  const GeneratedPairs pairs(f.seed);
  const uint64_t commands = (f.keys + f.batch - 1) / f.batch;
  std::string request;
  uint64_t sent = 0;
  RespElement e;
  const Clock::time_point t0 = Clock::now();
  for (uint64_t answered = 0; answered < commands; ++answered) {
    // Write ahead up to --pipeline MSETs, in one send.
    request.clear();
    for (; sent < commands && sent - answered < f.pipeline; ++sent) {
      const uint64_t first = sent * f.batch;
      const uint64_t end = std::min(f.keys, first + f.batch);
      AppendArrayHeader(&request, 1 + 2 * (end - first));
      AppendBulk(&request, "MSET");
      for (uint64_t i = first; i < end; ++i) {
        const uint64_t key = pairs.Key(i);
        const uint64_t value = GeneratedPairs::ValueOf(key);
        AppendBulk(&request, Bytes(key));
        AppendBulk(&request, Bytes(value));
      }
    }
    if (!request.empty() && !conn.Send(request, &error)) return fail(error);
    if (!conn.Next(&e, &error)) {
      return fail(fmt::format("MSET #{}: {}", answered, error));
    }
    if (e.type != RespType::kSimpleString || e.text != "OK") {
      return fail(fmt::format("MSET #{} answered {}", answered, Describe(e)));
    }
  }
  const double seconds =
      std::chrono::duration<double>(Clock::now() - t0).count();

  if (!conn.Call({"DBSIZE"}, &e, &error)) return fail("DBSIZE: " + error);
  if (e.type != RespType::kInteger ||
      e.integer != static_cast<int64_t>(f.keys)) {
    return fail(
        fmt::format("DBSIZE answered {}, not {}: the database held other keys "
                    "(FLUSHALL it first)",
                    Describe(e), f.keys));
  }
  for (int c = 0; c < kCheckedKeys; ++c) {
    const uint64_t i = c == 0   ? 0
                       : c == 1 ? f.keys - 1
                                : Mix(f.seed + 0x2000 + c) % f.keys;
    const uint64_t key = pairs.Key(i);
    const uint64_t value = GeneratedPairs::ValueOf(key);
    if (!conn.Call({"GET", Bytes(key)}, &e, &error)) {
      return fail(fmt::format("GET of key #{}: {}", i, error));
    }
    if (e.type != RespType::kBulkString || e.text != Bytes(value)) {
      return fail(fmt::format("GET of key #{} answered {}, not its value {}", i,
                              Describe(e), Excerpt(Bytes(value))));
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

enum class Phase { kWarmup, kMeasure, kStop };

// One connection of the closed loop, and its one request in flight.
struct Slot {
  int fd = -1;  // -1: broken, and not reopened
  ReadBuffer in{32 * 1024};
  std::string request;      // the command; its keys rewritten for each request
  size_t written = 0;       // bytes of `request` sent
  bool want_write = false;  // EPOLLOUT on: `request` only partly sent
  bool in_flight = false;   // a request sent, its reply not parsed
  std::vector<uint64_t> picked;  // the key numbers of the request
  int64_t awaited = -1;          // MGET elements to come; -1: the header
  size_t next = 0;               // the key the next element answers
  bool answer_ok = true;         // no error in the reply so far
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
    // The command, with zeros for keys: GET k, or MGET k1 ... kB.
    std::string request;
    AppendArrayHeader(&request, 1 + flags.batch);
    AppendBulk(&request, mget_ ? "MGET" : "GET");
    for (uint32_t j = 0; j < flags.batch; ++j) {
      key_offsets_.push_back(AppendBulk(&request, Bytes(uint64_t{0})));
    }
    for (size_t i = 0; i < slots_.size(); ++i) {
      slots_[i].request = request;
      slots_[i].picked.resize(flags.batch);
      slots_[i].rng = Mix(flags.seed + 0x1000 + i);
    }
  }
  ClosedLoop(const ClosedLoop&) = delete;
  ClosedLoop& operator=(const ClosedLoop&) = delete;
  ~ClosedLoop() {
    for (Slot& s : slots_) {
      if (s.fd >= 0) close(s.fd);
    }
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
      SyncConnection conn;
      RespElement e;
      if (!conn.Open(endpoint_, flags_.timeout, error) ||
          !conn.Call({"PING"}, &e, error)) {
        return false;
      }
      if (e.type != RespType::kSimpleString || e.text != "PONG") {
        *error = fmt::format("PING answered {}", Describe(e));
        return false;
      }
      if (!Adopt(i, conn.Release(), error)) return false;
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
        if (phase_ != Phase::kStop && s.fd >= 0) Issue(s);
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
        if (s.fd < 0) continue;
        if ((events[k].events & EPOLLOUT) != 0) Flush(s);
        if ((events[k].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) != 0) {
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
  // What one element of a reply did.
  enum class Step { kMore, kDone, kOutOfStep };

  // Makes `fd` slot i's connection, non-blocking, in the epoll set.
  bool Adopt(size_t i, int fd, std::string* error) {
    Slot& s = slots_[i];
    s.fd = fd;
    s.in.Clear();
    s.want_write = false;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(i);
    if (fd < 0 || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0 ||
        epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      *error = fd < 0 ? "bytes after PING's reply"
                      : fmt::format("epoll_ctl: {}", std::strerror(errno));
      if (fd >= 0) close(fd);
      s.fd = -1;
      return false;
    }
    return true;
  }

  uint64_t NextRandom(Slot& s) { return Mix(s.rng += 0x9e3779b97f4a7c15ULL); }

  void Issue(Slot& s) {
    for (size_t j = 0; j < s.picked.size(); ++j) {
      s.picked[j] = NextRandom(s) % flags_.keys;
      const uint64_t key = pairs_.Key(s.picked[j]);
      std::memcpy(s.request.data() + key_offsets_[j], &key, sizeof(key));
    }
    s.written = 0;
    s.in_flight = true;
    s.awaited = -1;
    s.next = 0;
    s.answer_ok = true;
    ++in_flight_;
    s.start = Clock::now();
    Flush(s);
  }

  // Sends what is left of the request; waits for EPOLLOUT if it cannot.
  void Flush(Slot& s) {
    while (s.written < s.request.size()) {
      const ssize_t n = send(s.fd, s.request.data() + s.written,
                             s.request.size() - s.written, MSG_NOSIGNAL);
      if (n > 0) {
        s.written += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (!s.want_write) SetWantWrite(s, true);
        return;
      } else {
        return Broken(s, fmt::format("send: {}", std::strerror(errno)));
      }
    }
    if (s.want_write) SetWantWrite(s, false);
  }

  void SetWantWrite(Slot& s, bool on) {
    epoll_event ev{};
    ev.events = on ? EPOLLIN | EPOLLOUT : EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(&s - slots_.data());
    epoll_ctl(epoll_, EPOLL_CTL_MOD, s.fd, &ev);
    s.want_write = on;
  }

  void OnReadable(Slot& s) {
    const ssize_t n = s.in.ReadFrom(s.fd);
    if (n == 0) return Broken(s, "the server closed the connection");
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      return Broken(s, fmt::format("read: {}", std::strerror(errno)));
    }
    while (s.fd >= 0 && !s.in.view().empty()) {
      if (!s.in_flight) {
        return Broken(s, fmt::format("bytes that answer no request: {}",
                                     Excerpt(s.in.view())));
      }
      RespElement e;
      const RespParse r = ParseRespElement(s.in.view(), &e);
      if (r == RespParse::kIncomplete) return;
      if (r == RespParse::kMalformed) {
        return Broken(s, fmt::format("malformed reply ({}): {}", e.text,
                                     Excerpt(s.in.view())));
      }
      const Step step = OnElement(s, e);
      s.in.Consume(e.size);
      if (step == Step::kOutOfStep) {
        return Broken(s, fmt::format("{} answered {}", mget_ ? "MGET" : "GET",
                                     Describe(e)));
      }
      if (step == Step::kDone) Complete(s);
    }
  }

  Step OnElement(Slot& s, const RespElement& e) {
    if (s.awaited < 0) {  // the reply's first element
      if (e.type == RespType::kError) {
        RpcError(s, fmt::format("{} answered {}", mget_ ? "MGET" : "GET",
                                Describe(e)));
        return Step::kDone;
      }
      if (!mget_) return Check(s, e) ? Step::kDone : Step::kOutOfStep;
      if (e.type != RespType::kArray ||
          e.integer != static_cast<int64_t>(s.picked.size())) {
        return Step::kOutOfStep;
      }
      s.awaited = e.integer;
      return s.awaited == 0 ? Step::kDone : Step::kMore;
    }
    if (!Check(s, e)) return Step::kOutOfStep;
    return --s.awaited == 0 ? Step::kDone : Step::kMore;
  }

  // Checks the answer for the next key of s.picked: false when it is
  // neither a value nor nil.
  bool Check(Slot& s, const RespElement& e) {
    const uint64_t i = s.picked[s.next++];
    if (e.type == RespType::kNil) {
      s.answer_ok = false;
      Count(&misses_, fmt::format("key #{} not found", i));
      return true;
    }
    if (e.type != RespType::kBulkString) return false;
    const uint64_t value = GeneratedPairs::ValueOf(pairs_.Key(i));
    if (e.text.size() != sizeof(value)) {
      s.answer_ok = false;
      Count(&bad_values_, fmt::format("key #{}: a value of {} bytes, not 8", i,
                                      e.text.size()));
    } else if (std::memcmp(e.text.data(), &value, sizeof(value)) != 0) {
      s.answer_ok = false;
      Count(&bad_values_, fmt::format("key #{}: not the key's value", i));
    }
    return true;
  }

  void Complete(Slot& s) {
    const Clock::time_point now = Clock::now();
    s.in_flight = false;
    --in_flight_;
    if (s.written < s.request.size()) {
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
    // One request in flight: more bytes now answer nothing (the loop in
    // OnReadable reports them).
    if (phase_ != Phase::kStop && s.in.view().empty()) Issue(s);
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
    close(s.fd);  // which takes it out of the epoll set
    s.fd = -1;
    s.in.Clear();
    s.want_write = false;
    if (phase_ == Phase::kStop) return;
    std::string error;
    const size_t i = static_cast<size_t>(&s - slots_.data());
    const int fd = OpenSocket(endpoint_, &error);
    if (fd >= 0 && Adopt(i, fd, &error)) {
      reopened_.push_back(i);
    } else {
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
  std::vector<size_t> key_offsets_;  // in the request, of each key's bytes
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
