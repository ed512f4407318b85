// The open loop both load generators run with --rate (bench/server_load.cc
// over gRPC, bench/redis_load.cc over hiredis), written once: when each
// request is due, which window it counts in, and how many may be
// outstanding. Each program keeps its transport: it sends a request when
// told to, and says when that request is over.
//
// The schedule: Poisson arrivals at --rate requests a second in total
// (exponential gaps drawn from a generator seeded with --seed, so that runs
// at the same rate and seed send at the same moments, whichever server they
// load). Poisson rather than evenly spaced: independent clients arrive that
// way, in bursts now and then, and a server's latency below its maximum is
// mostly how it queues such bursts; evenly spaced arrivals would hide that.
//
// Requests leave at their due times whatever the answers do, and a
// request's latency runs from its due time, not from when it was sent: a
// server (or a client) that stalls makes the latency of every request due
// meanwhile grow, which a closed loop leaves out (coordinated omission).
// The thread that sends sleeps until each due time; Start sets its timer
// slack to 1 µs, since the default 50 µs would be added to every latency.
//
// The window is the closed loop's (closed_loop.h), moved on by due times:
// a request counts when it was due in the measured window, however late it
// is answered; once a due time reaches the window's end no more are sent,
// and the program waits for those outstanding. At most kMaxOutstanding
// requests are outstanding (sent, not yet over); a request due past that
// is not sent but counted as dropped, and a run with drops did not sustain
// its rate.
//
// Thread-safety: Start, Dispatch and AddTo from one thread (the sender);
// Finished and outstanding from any.
//
// Example:
//   AddRateFlag(&app, &flags);
//   ... parse; flags.rate > 0: the open loop ...
//   Window window(flags);
//   OpenLoop open(flags, &window);
//   open.Start(Clock::now());
//   auto send = [&](Clock::time_point due, Phase phase) {
//     ... send a request; when it is over: if answered right,
//         counts.Done(phase, keys, ns since due); then open.Finished() ...
//   };
//   while (open.Dispatch(Clock::now(), send) != Phase::kStop) {
//     ... wait until open.next() ...
//   }
//   ... wait while open.outstanding() > 0 ...
//   LoadReport r = counts.Report(flags, channels, kMaxOutstanding, window);
//   open.AddTo(&r);
#ifndef ROOST_BENCH_OPEN_LOOP_H_
#define ROOST_BENCH_OPEN_LOOP_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "bench/closed_loop.h"
#include "bench/load_stats.h"

namespace CLI {
class App;
}

namespace roost::bench {

// Requests outstanding at most; generous, so that only a server that falls
// behind its rate reaches it. (roost-server holds at most 100 calls a
// connection by default; the rest wait in the gRPC client, outstanding.)
inline constexpr uint64_t kMaxOutstanding = 4096;

// Binds --rate to flags->rate.
void AddRateFlag(CLI::App* app, LoadFlags* flags);

class OpenLoop {
 public:
  // REQUIRES: flags.rate > 0. `window` outlives this.
  OpenLoop(const LoadFlags& flags, Window* window);
  OpenLoop(const OpenLoop&) = delete;
  OpenLoop& operator=(const OpenLoop&) = delete;

  // Starts the window's warm-up and the schedule at `now`, and sets this
  // thread's timer slack to 1 µs.
  void Start(Clock::time_point now);

  // When the next request is due.
  Clock::time_point next() const { return next_; }

  // For every request due by `now`: send(due, phase), phase being the
  // window's at the due time; or, with kMaxOutstanding outstanding, counts
  // it dropped. `send` must send the request, and call Finished once it is
  // over (answered or failed), from any thread. The window's phase after:
  // kStop once a due time reached the window's end; no more are sent then.
  template <typename Send>
  Phase Dispatch(Clock::time_point now, Send&& send) {
    while (next_ <= now) {
      const Clock::time_point due = next_;
      const Phase phase = window_->Tick(due);
      if (phase == Phase::kStop) return phase;
      Advance();
      const bool measured = phase == Phase::kMeasure;
      offered_ += measured;
      const uint64_t n = outstanding_.load(std::memory_order_acquire);
      if (n >= kMaxOutstanding) {
        dropped_ += measured;
        continue;
      }
      outstanding_.fetch_add(1, std::memory_order_relaxed);
      peak_in_flight_ = std::max(peak_in_flight_, n + 1);
      send(due, phase);
    }
    return window_->phase();
  }

  // A request sent by Dispatch is over.
  void Finished() { outstanding_.fetch_sub(1, std::memory_order_release); }
  uint64_t outstanding() const {
    return outstanding_.load(std::memory_order_acquire);
  }

  // The rate, offered, dropped and peak, into `r`.
  void AddTo(LoadReport* r) const;

 private:
  // Moves next_ on by one exponential gap.
  void Advance();

  const double rate_;
  Window* const window_;
  std::mt19937_64 random_;
  std::exponential_distribution<double> gap_;
  Clock::time_point start_;
  double due_s_ = 0;  // next_, in seconds after start_ (no rounding drift)
  Clock::time_point next_;
  uint64_t offered_ = 0;
  uint64_t dropped_ = 0;
  uint64_t peak_in_flight_ = 0;
  std::atomic<uint64_t> outstanding_{0};
};

}  // namespace roost::bench

#endif  // ROOST_BENCH_OPEN_LOOP_H_
