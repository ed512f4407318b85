// StreamWatch: cancels StreamMultiGet calls whose client stopped reading.
//
// A stream answers one request at a time and writes each response before
// reading the next request, so a client that stops reading leaves one
// response in flight, held in memory (and counted against
// --max-response-memory) for as long as it stays connected: HTTP/2's flow
// control holds the write, and keepalive pings, which the client's library
// still answers, do not help. Each stream records when its pending write
// started; a sweep once a second cancels the streams whose write has waited
// longer than --send-timeout.
//
// Thread-safe. Add() and Remove() take a lock once per stream, not per
// message; WriteStarted() and WriteDone() are one relaxed store each.
//
// Example:
//   StreamWatch::Stream stream(context);
//   watch.Add(&stream);
//   stream.WriteStarted(); StartWrite(&response);   // OnWriteDone:
//   stream.WriteDone();
//   watch.Remove(&stream);                             // in OnDone
#ifndef ROOST_SERVER_STREAM_WATCH_H_
#define ROOST_SERVER_STREAM_WATCH_H_

#include <grpcpp/support/server_callback.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <vector>

#include "server/metrics.h"

namespace roost {

class StreamWatch {
 public:
  // At most `max_streams` open at once (Add refuses more).
  explicit StreamWatch(size_t max_streams = SIZE_MAX)
      : max_streams_(max_streams) {}

  class Stream {
   public:
    explicit Stream(grpc::CallbackServerContext* context) : context_(context) {}
    void WriteStarted() { since_.store(Now(), std::memory_order_relaxed); }
    void WriteDone() { since_.store(0, std::memory_order_relaxed); }

   private:
    friend class StreamWatch;
    static int64_t Now() {
      return std::chrono::steady_clock::now().time_since_epoch().count();
    }
    grpc::CallbackServerContext* const context_;
    std::atomic<int64_t> since_{0};  // 0: no write pending
    bool cancelled_ = false;         // under StreamWatch::mu_
  };

  // Watches `stream`; false (counted as refused) when `max_streams` are
  // open already.
  bool Add(Stream* stream) {
    std::lock_guard lock(mu_);
    if (streams_.size() >= max_streams_) {
      ++refused_;
      return false;
    }
    streams_.insert(stream);
    return true;
  }
  // Before the stream's context goes away (in OnDone).
  void Remove(Stream* stream) {
    std::lock_guard lock(mu_);
    streams_.erase(stream);
  }

  // Cancels each stream whose pending write started more than `timeout`
  // ago; returns how many it cancelled now.
  int CancelStalled(std::chrono::steady_clock::duration timeout) {
    const int64_t limit = Stream::Now() - timeout.count();
    int n = 0;
    std::lock_guard lock(mu_);
    for (Stream* s : streams_) {
      const int64_t since = s->since_.load(std::memory_order_relaxed);
      if (since == 0 || since > limit || s->cancelled_) continue;
      s->cancelled_ = true;
      s->context_->TryCancel();
      ++n;
    }
    cancelled_ += n;
    return n;
  }

  // Streams cancelled so far, refused so far, and open now.
  uint64_t cancelled() const {
    std::lock_guard lock(mu_);
    return cancelled_;
  }
  uint64_t refused() const {
    std::lock_guard lock(mu_);
    return refused_;
  }
  size_t open() const {
    std::lock_guard lock(mu_);
    return streams_.size();
  }
  // roost_streams_cancelled_total, roost_streams_open and
  // roost_streams_refused_total.
  void CollectMetrics(std::vector<prometheus::MetricFamily>* out) const {
    AddScalar(out, "roost_streams_cancelled_total",
              "StreamMultiGet calls cancelled because their client took no "
              "response for --send-timeout.",
              prometheus::MetricType::Counter,
              static_cast<double>(cancelled()));
    AddScalar(out, "roost_streams_open",
              "StreamMultiGet calls open (at most --max-streams).",
              prometheus::MetricType::Gauge, static_cast<double>(open()));
    AddScalar(out, "roost_streams_refused_total",
              "StreamMultiGet calls refused because --max-streams were open.",
              prometheus::MetricType::Counter, static_cast<double>(refused()));
  }

 private:
  const size_t max_streams_;
  mutable std::mutex mu_;
  std::set<Stream*> streams_;
  uint64_t cancelled_ = 0;
  uint64_t refused_ = 0;
};

}  // namespace roost

#endif  // ROOST_SERVER_STREAM_WATCH_H_
