#include "server/metrics_http.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <sstream>
#include <string_view>

#include "prometheus/text_serializer.h"
#include "server/socket_stream.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// A request's head (request line and headers) may be this large.
constexpr size_t kMaxRequestHead = 16 << 10;

}  // namespace

// One connection, driven by the loop's thread alone. Socket errors,
// refused handshakes and timeouts end it; they are the peer's business,
// not worth a log line each.
struct MetricsHttp::Connection {
  enum class Phase {
    kHandshake,  // TLS only
    kRequest,    // reading the request's head
    kBuilding,   // a builder thread is making the answer
    kAnswer,     // writing the answer
  };

  Connection(uint64_t id, int fd, Clock::time_point deadline)
      : id(id), stream(fd), deadline(deadline) {}

  // After a stream call returned `n`: true when it only has to wait
  // (setting `events`), false when the connection is done.
  bool Waits(ssize_t n) {
    if (n != SocketStream::kWouldBlock) return false;
    events = stream.wait() == SocketStream::Wait::kRead ? POLLIN : POLLOUT;
    return true;
  }

  const uint64_t id;
  SocketStream stream;
  Phase phase = Phase::kRequest;
  Clock::time_point deadline;
  short events = POLLIN;  // what it waits for
  std::string head;       // the request so far
  std::string answer;
  size_t sent = 0;  // of `answer`
};

MetricsHttp::MetricsHttp(std::shared_ptr<prometheus::Collectable> collectable,
                         int threads, double timeout_seconds, bool tls)
    : collectable_(std::move(collectable)),
      timeout_(std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(timeout_seconds))),
      tls_(tls),
      wake_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  loop_ = std::thread([this] { Loop(); });
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { Work(); });
}

MetricsHttp::~MetricsHttp() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  jobs_ready_.notify_all();
  Wake();
  loop_.join();
  for (std::thread& t : workers_) t.join();
  for (int fd : incoming_) ::close(fd);
  ::close(wake_fd_);
}

void MetricsHttp::SetContext(SslContext context) {
  std::shared_ptr<ssl_ctx_st> shared(context.release(), SslCtxFree());
  std::lock_guard<std::mutex> lock(mu_);
  context_ = std::move(shared);
}

void MetricsHttp::Serve(int fd) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_) {
      incoming_.push_back(fd);
      fd = -1;
    }
  }
  if (fd >= 0) {
    ::close(fd);
    return;
  }
  Wake();
}

void MetricsHttp::Wake() {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

void MetricsHttp::Admit(int fd) {
  std::shared_ptr<ssl_ctx_st> context;
  if (tls_) {
    std::lock_guard<std::mutex> lock(mu_);
    context = context_;
  }
  if (tls_ && context == nullptr) {
    ::close(fd);
    return;
  }
  if (connections_.size() >= kMaxConnections) {
    // Let go of the oldest still waiting for its request; with none (all
    // are being answered), of the new one.
    const auto waiting = std::find_if(
        connections_.begin(), connections_.end(), [](const auto& c) {
          return c->phase == Connection::Phase::kHandshake ||
                 c->phase == Connection::Phase::kRequest;
        });
    if (waiting == connections_.end()) {
      ::close(fd);
      return;
    }
    connections_.erase(waiting);
  }
  auto c =
      std::make_unique<Connection>(next_id_++, fd, Clock::now() + timeout_);
  if (tls_) {
    if (!c->stream.StartTls(context.get())) return;  // closed as `c` goes
    c->phase = Connection::Phase::kHandshake;
  }
  connections_.push_back(std::move(c));
}

bool MetricsHttp::Advance(Connection& c) {
  for (;;) {
    switch (c.phase) {
      case Connection::Phase::kHandshake: {
        const ssize_t result = c.stream.Handshake();
        if (result != SocketStream::kDone) return c.Waits(result);
        c.phase = Connection::Phase::kRequest;
        continue;
      }
      case Connection::Phase::kRequest: {
        char buffer[4096];
        const ssize_t n = c.stream.Read(buffer, sizeof(buffer));
        if (n <= 0) return c.Waits(n);
        c.head.append(buffer, static_cast<size_t>(n));
        if (c.head.find("\r\n\r\n") == std::string::npos) {
          if (c.head.size() > kMaxRequestHead) return false;
          continue;
        }
        // "GET /metrics HTTP/1.1": the method, then the path up to "?" or
        // " ".
        const std::string_view line(c.head.data(), c.head.find("\r\n"));
        const size_t space = line.find(' ');
        const std::string_view method = line.substr(0, space);
        std::string_view path =
            space == std::string_view::npos ? "" : line.substr(space + 1);
        path = path.substr(0, path.find_first_of(" ?"));
        if ((method == "GET" || method == "HEAD") && path == "/metrics") {
          c.phase = Connection::Phase::kBuilding;
          {
            std::lock_guard<std::mutex> lock(mu_);
            jobs_.push_back({c.id, method == "HEAD"});
          }
          jobs_ready_.notify_one();
          return true;
        }
        c.answer =
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n"
            "Content-Length: 22\r\nConnection: close\r\n\r\nonly /metrics is "
            "here\n";
        c.phase = Connection::Phase::kAnswer;
        c.deadline = Clock::now() + timeout_;
        continue;
      }
      case Connection::Phase::kBuilding:
        return true;
      case Connection::Phase::kAnswer: {
        while (c.sent < c.answer.size()) {
          const ssize_t n =
              c.stream.Write(std::string_view(c.answer).substr(c.sent));
          if (n <= 0) return c.Waits(n);
          c.sent += static_cast<size_t>(n);
        }
        // Answered: the client reads until the connection ends.
        c.stream.ShutdownWrite();
        return false;
      }
    }
  }
}

void MetricsHttp::Loop() {
  std::vector<pollfd> polled;
  std::vector<Connection*> of_polled;
  for (;;) {
    std::deque<int> incoming;
    std::deque<Answer> answers;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) break;
      incoming.swap(incoming_);
      answers.swap(answers_);
    }
    for (int fd : incoming) Admit(fd);
    // Answers built: on to writing them (poll says when), with the timeout
    // afresh.
    for (Answer& answer : answers) {
      for (auto& c : connections_) {
        if (c->id != answer.id) continue;
        c->answer = std::move(answer.bytes);
        c->phase = Connection::Phase::kAnswer;
        c->deadline = Clock::now() + timeout_;
        c->events = POLLOUT;
        break;
      }
    }
    // Connections past their deadline go; one waiting for its answer to be
    // built has none meanwhile.
    const Clock::time_point now = Clock::now();
    std::erase_if(connections_, [now](const auto& c) {
      return c->phase != Connection::Phase::kBuilding && c->deadline <= now;
    });
    polled.assign(1, pollfd{wake_fd_, POLLIN, 0});
    of_polled.assign(1, nullptr);
    Clock::time_point next = Clock::time_point::max();
    for (auto& c : connections_) {
      if (c->phase == Connection::Phase::kBuilding) continue;
      polled.push_back({c->stream.fd(), c->events, 0});
      of_polled.push_back(c.get());
      next = std::min(next, c->deadline);
    }
    int wait_ms = -1;
    if (next != Clock::time_point::max()) {
      wait_ms = static_cast<int>(
          std::chrono::ceil<std::chrono::milliseconds>(next - now).count());
    }
    // On an error (EINTR) no revents are set: round again.
    ::poll(polled.data(), polled.size(), wait_ms);
    if (polled[0].revents != 0) {
      uint64_t ignored;
      [[maybe_unused]] ssize_t n = ::read(wake_fd_, &ignored, sizeof(ignored));
    }
    std::vector<uint64_t> done;
    for (size_t i = 1; i < polled.size(); ++i) {
      if (polled[i].revents != 0 && !Advance(*of_polled[i])) {
        done.push_back(of_polled[i]->id);
      }
    }
    std::erase_if(connections_, [&done](const auto& c) {
      return std::find(done.begin(), done.end(), c->id) != done.end();
    });
  }
  connections_.clear();
}

void MetricsHttp::Work() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      jobs_ready_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = jobs_.front();
      jobs_.pop_front();
    }
    std::ostringstream body;
    prometheus::TextSerializer().Serialize(body, collectable_->Collect());
    const std::string text = std::move(body).str();
    Answer answer{
        job.id,
        StrCat("HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; "
               "charset=utf-8\r\nContent-Length: ",
               text.size(), "\r\nConnection: close\r\n\r\n",
               job.head ? std::string() : text)};
    {
      std::lock_guard<std::mutex> lock(mu_);
      answers_.push_back(std::move(answer));
    }
    Wake();
  }
}

}  // namespace roost
