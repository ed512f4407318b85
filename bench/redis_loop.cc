// The loop of `redis_load run`: one thread drives every connection from one
// epoll loop, each connection a non-blocking redisContext. In the closed
// loop each connection has one request in flight, the next sent when its
// reply is parsed; in the open loop (--rate, open_loop.h) a request is sent
// when it is due, on the next connection round-robin, pipelined behind
// those already out on it. A request is appended with
// redisAppendCommandArgv (its arguments point at the slot's key numbers,
// rewritten per request; hiredis copies them) and written with
// redisBufferWrite, now or when EPOLLOUT says the socket takes more; when
// EPOLLIN says bytes came, redisBufferRead reads them and
// redisGetReplyFromReader hands over each whole reply, which answers the
// oldest request out on the connection and is checked key by key. A
// connection out of step (a malformed reply, a reply of the wrong shape, no
// reply within --timeout) is closed, its requests out failed, and opened
// anew.

#include "bench/redis_loop.h"

#include <hiredis/hiredis.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/closed_loop.h"
#include "bench/generated_pairs.h"
#include "bench/load_stats.h"
#include "bench/open_loop.h"
#include "bench/redis_client.h"
#include "bench/text_pairs.h"
#include "fmt/format.h"

namespace roost::bench {
namespace {

constexpr int kExitErrors = 1;
constexpr int kExitUsage = 2;  // also: the server does not answer at all

// A request sent on a connection, its reply not parsed yet.
struct Sent {
  Clock::time_point start;  // when sent; in the open loop, when it was due
  Phase phase;              // the open loop's: the window's, when it was due
};

// One connection, and its requests out: at most one in the closed loop.
struct Slot {
  Context conn;                        // null: broken, and not reopened
  bool want_write = false;             // EPOLLOUT on: requests only partly sent
  std::deque<Sent> sent;               // the requests out, oldest first
  std::deque<uint64_t> picked;         // their key numbers, --batch each
  std::vector<uint64_t> keys;          // the keys of the one appended, for argv
  std::vector<std::string> text_keys;  // or, with text pairs, these
  std::vector<const char*> argv;       // GET k, or MGET k1 ... kB
  std::vector<size_t> argvlen;
  bool answer_ok = true;  // no error in the reply being checked so far
  std::optional<KeySchedule> schedule;
};

// The loop: every connection, the phase, and what was counted.
class RedisLoop {
 public:
  RedisLoop(const LoadFlags& flags, int connections, const Loopback& endpoint)
      : flags_(flags),
        endpoint_(endpoint),
        pairs_(flags.seed),
        mget_(flags.method == "mget"),
        timeout_(std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double>(flags.timeout))),
        window_(flags),
        slots_(static_cast<size_t>(connections)) {
    if (flags.rate > 0) open_.emplace(flags, &window_);
    for (size_t i = 0; i < slots_.size(); ++i) {
      Slot& s = slots_[i];
      s.keys.resize(flags.batch);
      if (flags.text_pairs) s.text_keys.resize(flags.batch);
      s.argv.push_back(mget_ ? "MGET" : "GET");
      s.argvlen.push_back(mget_ ? 4 : 3);
      for (const uint64_t& key : s.keys) {
        s.argv.push_back(reinterpret_cast<const char*>(&key));
        s.argvlen.push_back(sizeof(key));
      }
      s.schedule.emplace(flags.seed, i);
    }
  }
  RedisLoop(const RedisLoop&) = delete;
  RedisLoop& operator=(const RedisLoop&) = delete;
  ~RedisLoop() {
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
    if (open_) {
      open_->Start(now);
    } else {
      window_.Start(now);
      for (Slot& s : slots_) Issue(s, std::nullopt, Phase::kWarmup);
    }
    Clock::time_point last_deadline_check = now;
    std::vector<epoll_event> events(256);
    while (true) {
      now = Clock::now();
      const Phase phase =
          open_ ? open_->Dispatch(now,
                                  [this](Clock::time_point due, Phase phase) {
                                    SendDue(due, phase);
                                  })
                : window_.Tick(now);
      if (phase == Phase::kStop && in_flight_ == 0) break;
      if (now - last_deadline_check >= std::chrono::milliseconds(50)) {
        CheckDeadlines(now);
        last_deadline_check = now;
      }
      while (!reopened_.empty()) {
        Slot& s = slots_[reopened_.back()];
        reopened_.pop_back();
        if (!open_ && window_.phase() != Phase::kStop && s.conn != nullptr) {
          Issue(s, std::nullopt, Phase::kWarmup);
        }
      }
      int n = 0;
      if (open_) {
        // Until the next request is due, to the nanosecond: epoll_wait's
        // milliseconds would send each one up to 1 ms late.
        Clock::duration wait = std::chrono::milliseconds(50);
        if (phase != Phase::kStop) {
          wait = std::clamp<Clock::duration>(open_->next() - Clock::now(),
                                             Clock::duration::zero(), wait);
        }
        const auto ns =
            std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
        const timespec ts{static_cast<time_t>(ns / 1000000000),
                          static_cast<long>(ns % 1000000000)};
        n = epoll_pwait2(epoll_, events.data(), static_cast<int>(events.size()),
                         &ts, nullptr);
      } else {
        int wait_ms = 50;
        if (window_.phase() != Phase::kStop) {
          const auto left = std::chrono::ceil<std::chrono::milliseconds>(
              window_.phase_end() - now);
          wait_ms = std::clamp<int>(static_cast<int>(left.count()), 0, 50);
        }
        n = epoll_wait(epoll_, events.data(), static_cast<int>(events.size()),
                       wait_ms);
      }
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

  // The run's figures.
  LoadReport Report() const {
    if (!open_) {
      return counts_.Report(flags_, static_cast<int>(slots_.size()),
                            static_cast<int>(slots_.size()), window_);
    }
    LoadReport r = counts_.Report(flags_, static_cast<int>(slots_.size()),
                                  static_cast<int>(kMaxOutstanding), window_);
    open_->AddTo(&r);
    return r;
  }
  std::string first_error() const { return counts_.first_error(); }
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

  // The open loop's: sends a request due at `due`, when the window was in
  // `phase`, on the next connection that is open.
  void SendDue(Clock::time_point due, Phase phase) {
    for (size_t tried = 0; tried < slots_.size(); ++tried) {
      Slot& s = slots_[next_slot_];
      next_slot_ = (next_slot_ + 1) % slots_.size();
      if (s.conn != nullptr) return Issue(s, due, phase);
    }
    counts_.RpcError("every connection broke and could not be opened anew");
    open_->Finished();
  }

  // Sends a request on `s`, timed from `due` in the open loop (where
  // `phase` is the window's then), else from now.
  void Issue(Slot& s, std::optional<Clock::time_point> due, Phase phase) {
    for (size_t j = 0; j < s.keys.size(); ++j) {
      const uint64_t i = s.schedule->Next(flags_.keys);
      s.picked.push_back(i);
      if (flags_.text_pairs) {
        s.text_keys[j] = TextKey(i);
        s.argv[1 + j] = s.text_keys[j].data();
        s.argvlen[1 + j] = s.text_keys[j].size();
      } else {
        s.keys[j] = pairs_.Key(i);
      }
    }
    s.sent.push_back({due ? *due : Clock::now(), phase});
    ++in_flight_;
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
      if (s.sent.empty()) {
        return Broken(s, fmt::format("a reply that answers no request: {}",
                                     Describe(*reply)));
      }
      OnReply(s, *reply);
    }
  }

  // Checks the reply to the oldest request out on `s`.
  void OnReply(Slot& s, const redisReply& r) {
    const char* command = mget_ ? "MGET" : "GET";
    s.answer_ok = true;
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
    if (r.type != REDIS_REPLY_ARRAY || r.elements != flags_.batch) {
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
      counts_.Miss(fmt::format("key #{} not found", i));
      return true;
    }
    if (r.type != REDIS_REPLY_STRING) return false;
    if (flags_.text_pairs) {
      if (std::string_view(r.str, r.len) != TextValue(TextKey(i))) {
        s.answer_ok = false;
        counts_.BadValue(fmt::format("key #{}: not the key's value", i));
      }
      return true;
    }
    const uint64_t value = GeneratedPairs::ValueOf(pairs_.Key(i));
    if (r.len != sizeof(value)) {
      s.answer_ok = false;
      counts_.BadValue(
          fmt::format("key #{}: a value of {} bytes, not 8", i, r.len));
    } else if (std::memcmp(r.str, &value, sizeof(value)) != 0) {
      s.answer_ok = false;
      counts_.BadValue(fmt::format("key #{}: not the key's value", i));
    }
    return true;
  }

  // The oldest request out on `s` is answered.
  void Complete(Slot& s) {
    const Clock::time_point now = Clock::now();
    const Sent done = s.sent.front();
    s.sent.pop_front();
    s.picked.erase(s.picked.begin(), s.picked.begin() + flags_.batch);
    --in_flight_;
    if (open_) open_->Finished();
    // Its reply came while it was the last one out and not all written.
    if (s.want_write && s.sent.empty()) {
      return Broken(s, "a reply before the whole request was sent");
    }
    // The closed loop's window moves on as requests complete; the open
    // loop's, as they fall due.
    const Phase phase = open_ ? done.phase : window_.Tick(now);
    if (s.answer_ok) {
      counts_.Done(phase, flags_.batch,
                   static_cast<uint64_t>(
                       std::chrono::duration_cast<std::chrono::nanoseconds>(
                           now - done.start)
                           .count()));
    }
    // No request out: more bytes now answer nothing.
    if (const std::string_view more = Unparsed(*s.conn);
        s.sent.empty() && !more.empty()) {
      return Broken(
          s, fmt::format("bytes that answer no request: {}", Excerpt(more)));
    }
    if (!open_ && phase != Phase::kStop) Issue(s, std::nullopt, phase);
  }

  // A failed request whose connection stays in step (an error reply).
  void RpcError(Slot& s, std::string what) {
    s.answer_ok = false;
    counts_.RpcError(std::move(what));
  }

  // A failed request, or a connection out of step: fails every request out
  // on it (one error at least), closes the connection and, but in the stop
  // phase, opens a new one (the closed loop issues on it from the loop).
  void Broken(Slot& s, std::string what) {
    const size_t failed = std::max<size_t>(1, s.sent.size());
    for (size_t k = 0; k < failed; ++k) counts_.RpcError(what);
    for (size_t k = 0; k < s.sent.size(); ++k) {
      --in_flight_;
      if (open_) open_->Finished();
    }
    s.sent.clear();
    s.picked.clear();
    s.conn.reset();  // closing the socket takes it out of the epoll set
    s.want_write = false;
    if (window_.phase() == Phase::kStop) return;
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

  void CheckDeadlines(Clock::time_point now) {
    for (Slot& s : slots_) {
      if (!s.sent.empty() && now - s.sent.front().start > timeout_) {
        Broken(s, fmt::format("no reply within {} s", flags_.timeout));
      }
    }
  }

  const LoadFlags& flags_;
  const Loopback endpoint_;
  const GeneratedPairs pairs_;
  const bool mget_;
  const Clock::duration timeout_;
  Window window_;
  std::optional<OpenLoop> open_;  // with --rate
  LoadCounts counts_;
  std::vector<Slot> slots_;
  std::vector<size_t> reopened_;  // slots reconnected, to issue from
  size_t next_slot_ = 0;          // the open loop's next connection
  int epoll_ = -1;
  int in_flight_ = 0;  // requests out, over every connection
  int lost_connections_ = 0;
};

}  // namespace

int RunRedisLoad(const LoadFlags& flags, int connections,
                 const Loopback& endpoint) {
  RedisLoop loop(flags, connections, endpoint);
  std::string error;
  if (!loop.Connect(&error)) {
    fmt::print(stderr, "redis_load: {}: {}\n", flags.addr, error);
    return kExitUsage;
  }
  loop.Run();
  const LoadReport r = loop.Report();
  const int status = Finish("redis_load", "request", r, loop.first_error());
  if (r.rpc_errors + r.misses + r.bad_values > 0 &&
      loop.lost_connections() > 0) {
    fmt::print(stderr,
               "redis_load: {} connections broke during the run and could "
               "not be opened anew\n",
               loop.lost_connections());
  }
  return status;
}

}  // namespace roost::bench
