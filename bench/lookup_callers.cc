// The callers of bench/lookup_callers.h: each RPC sent, checked and
// counted, in the closed loop and the open loop.
#include "bench/lookup_callers.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/open_loop.h"
#include "client/get_coalescer.h"
#include "client/multiget_answer.h"
#include "fmt/format.h"

namespace roost::bench {
namespace {

class Caller;

// What the callers share: the window, the counts, and the count of callers
// still running; or, in the open loop, the callers idle.
class Load {
 public:
  // `open`: null for the closed loop.
  Load(const LookupConfig& config, const KeySet& keys, const Window& window,
       OpenLoop* open)
      : config_(config), keys_(keys), window_(window), open_(open) {}

  const LookupConfig& config() const { return config_; }
  const KeySet& keys() const { return keys_; }
  Phase phase() const { return window_.phase(); }
  bool open_loop() const { return open_ != nullptr; }

  // The open loop's: a caller with no request out, or null.
  Caller* TakeIdle() {
    std::lock_guard lock(mu_);
    if (idle_.empty()) return nullptr;
    Caller* c = idle_.back();
    idle_.pop_back();
    return c;
  }
  // The open loop's: `c`'s request is over; it must not touch itself
  // afterwards.
  void Release(Caller* c) {
    {
      std::lock_guard lock(mu_);
      idle_.push_back(c);
    }
    open_->Finished();
  }

  void AddRunning(int n) {
    std::lock_guard lock(mu_);
    running_ += n;
  }
  // Called by a caller that issues no more RPCs; it must not touch itself
  // afterwards.
  void CallerDone() {
    std::lock_guard lock(mu_);
    if (--running_ == 0) cv_.notify_all();
  }
  // Waits for every caller to finish, up to `limit`; whether they all did.
  bool WaitAllDone(Clock::duration limit) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, limit, [this] { return running_ == 0; });
  }

  LoadCounts counts;

 private:
  const LookupConfig& config_;
  const KeySet& keys_;
  const Window& window_;
  OpenLoop* const open_;
  std::mutex mu_;
  std::condition_variable cv_;
  int running_ = 0;            // guarded by mu_
  std::vector<Caller*> idle_;  // guarded by mu_
};

// One slot of the fixed concurrency: one RPC in flight at a time, the next
// one issued from the completion callback of the last. In the open loop,
// one RPC's state, taken when the RPC is due and handed back when it is
// over.
class Caller {
 public:
  // With `coalescer`, each Get goes through it (--coalesce) instead of
  // being an RPC of its own.
  Caller(Load* load, roost::v1::Lookup::Stub* stub,
         roost::GetCoalescer* coalescer, KeySchedule schedule)
      : load_(load),
        stub_(stub),
        coalescer_(coalescer),
        schedule_(schedule),
        picked_(load->config().batch) {
    get_request_.set_table(load->config().table);
    multiget_request_.set_table(load->config().table);
    multiget_request_.set_packed(load->config().packed);
    for (uint32_t j = 0; j < load->config().batch; ++j) {
      multiget_request_.add_keys();
    }
  }

  // The closed loop's: sends the next RPC.
  void Issue() { Send(std::nullopt); }

  // The open loop's: sends an RPC due at `due`, when the window was in
  // `phase`, over `stub`.
  void IssueDue(Clock::time_point due, Phase phase,
                roost::v1::Lookup::Stub* stub) {
    due_phase_ = phase;
    stub_ = stub;
    Send(due);
  }

 private:
  // Sends an RPC, timed from `due` (open loop) or from now.
  void Send(std::optional<Clock::time_point> due) {
    const LookupConfig& config = load_->config();
    const KeySet& keys = load_->keys();
    for (uint64_t& i : picked_) i = schedule_.Next(keys.size());
    if (coalescer_ != nullptr) {
      keys.Key(picked_[0], &coalesced_key_);
      start_ = due ? *due : Clock::now();
      coalescer_->Get(config.table, coalesced_key_,
                      [this](absl::StatusOr<roost::GetResult> r) {
                        Coalesced(std::move(r));
                      });
      return;
    }
    context_.emplace();
    context_->set_deadline(std::chrono::system_clock::now() + config.timeout);
    start_ = due ? *due : Clock::now();
    if (config.multiget) {
      for (uint32_t j = 0; j < config.batch; ++j) {
        keys.Key(picked_[j], multiget_request_.mutable_keys(j));
      }
      stub_->async()->MultiGet(&*context_, &multiget_request_,
                               &multiget_response_,
                               [this](grpc::Status s) { Done(s); });
    } else {
      keys.Key(picked_[0], get_request_.mutable_key());
      stub_->async()->Get(&*context_, &get_request_, &get_response_,
                          [this](grpc::Status s) { Done(s); });
    }
  }

  void Done(const grpc::Status& s) {
    if (!s.ok()) {
      load_->counts.RpcError(fmt::format("RPC failed: code {}: {}",
                                         static_cast<int>(s.error_code()),
                                         s.error_message()));
    }
    Next(s.ok() && Check());
  }

  void Coalesced(absl::StatusOr<roost::GetResult> r) {
    if (!r.ok()) {
      load_->counts.RpcError(
          fmt::format("Get failed: {}", r.status().ToString()));
    } else {
      get_response_.set_found(r->found);
      get_response_.set_value(std::move(r->value));
    }
    Next(r.ok() && Check());
  }

  // Counts the request that completed (when `ok`), and issues the next
  // (closed loop) or goes idle (open loop).
  void Next(bool ok) {
    const uint64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            Clock::now() - start_)
                            .count();
    if (load_->open_loop()) {
      if (ok) load_->counts.Done(due_phase_, picked_.size(), ns);
      load_->Release(this);
      return;
    }
    if (ok) load_->counts.Done(load_->phase(), picked_.size(), ns);
    if (load_->phase() == Phase::kStop) {
      load_->CallerDone();
      return;
    }
    Issue();
  }

  // Counts what is wrong with the answer; whether it was all right.
  bool Check() {
    const KeySet& keys = load_->keys();
    const bool exact = load_->config().exact;
    auto check_one = [&](size_t j, const roost::v1::GetResponse& r) {
      if (!r.found()) {
        load_->counts.Miss(fmt::format("key #{} not found", picked_[j]));
        return false;
      }
      if (!keys.ValueOk(picked_[j], r.value(), exact)) {
        load_->counts.BadValue(
            r.value().size() == keys.value_size()
                ? fmt::format("key #{}: not the key's value", picked_[j])
                : fmt::format("key #{}: a value of {} bytes, not {}",
                              picked_[j], r.value().size(), keys.value_size()));
        return false;
      }
      return true;
    };
    if (!load_->config().multiget) return check_one(0, get_response_);
    if (load_->config().packed) {
      bool ok = true;
      roost::v1::GetResponse one;
      const absl::Status read = roost::ReadMultiGetAnswer(
          multiget_response_, picked_.size(),
          [&](size_t j, bool found, std::string_view value) {
            one.set_found(found);
            one.set_value(value.data(), value.size());
            ok = check_one(j, one) && ok;
          });
      if (!read.ok()) {
        load_->counts.BadValue(std::string(read.message()));
        return false;
      }
      return ok;
    }
    const auto& results = multiget_response_.results();
    if (static_cast<size_t>(results.size()) != picked_.size()) {
      load_->counts.BadValue(
          fmt::format("MultiGet of {} keys answered {} results", picked_.size(),
                      results.size()));
      return false;
    }
    bool ok = true;
    for (size_t j = 0; j < picked_.size(); ++j) {
      ok = check_one(j, results[static_cast<int>(j)]) && ok;
    }
    return ok;
  }

  Load* load_;
  roost::v1::Lookup::Stub* stub_;
  roost::GetCoalescer* coalescer_;
  std::string coalesced_key_;
  KeySchedule schedule_;
  std::vector<uint64_t> picked_;  // the key numbers of the RPC in flight
  std::optional<grpc::ClientContext> context_;  // one per RPC
  Clock::time_point start_;           // when sent; in the open loop, when due
  Phase due_phase_ = Phase::kWarmup;  // the open loop's: the window's, when due
  roost::v1::GetRequest get_request_;
  roost::v1::GetResponse get_response_;
  roost::v1::MultiGetRequest multiget_request_;
  roost::v1::MultiGetResponse multiget_response_;
};

}  // namespace

int RunLookupClosedLoop(const LoadFlags& flags, const LookupConfig& config,
                        const KeySet& keys, int concurrency,
                        const LookupStubs& stubs, GetCoalescer* coalescer) {
  Window window(flags);
  Load load(config, keys, window, nullptr);
  std::vector<std::unique_ptr<Caller>> callers;
  for (int i = 0; i < concurrency; ++i) {
    callers.push_back(
        std::make_unique<Caller>(&load, stubs[i % stubs.size()].get(),
                                 coalescer, KeySchedule(flags.seed, i)));
  }
  load.AddRunning(concurrency);
  window.Start(Clock::now());
  for (auto& caller : callers) caller->Issue();
  // The callers run on gRPC's threads; this one only moves the window on.
  while (window.Tick(Clock::now()) != Phase::kStop) {
    std::this_thread::sleep_until(window.phase_end());
  }

  if (!load.WaitAllDone(config.timeout + std::chrono::seconds(5))) {
    fmt::print(stderr,
               "server_load: RPCs still in flight after their "
               "deadline; giving up\n");
    std::_Exit(1);
  }
  return Finish("server_load", "RPC",
                load.counts.Report(flags, static_cast<int>(stubs.size()),
                                   concurrency, window),
                load.counts.first_error());
}

int RunLookupOpenLoop(const LoadFlags& flags, const LookupConfig& config,
                      const KeySet& keys, const LookupStubs& stubs,
                      GetCoalescer* coalescer) {
  Window window(flags);
  OpenLoop open(flags, &window);
  Load load(config, keys, window, &open);
  std::vector<std::unique_ptr<Caller>> callers;
  uint64_t sent = 0;
  auto send = [&](Clock::time_point due, Phase phase) {
    Caller* c = load.TakeIdle();
    if (c == nullptr) {
      callers.push_back(std::make_unique<Caller>(
          &load, nullptr, coalescer, KeySchedule(flags.seed, callers.size())));
      c = callers.back().get();
    }
    c->IssueDue(due, phase, stubs[sent++ % stubs.size()].get());
  };
  open.Start(Clock::now());
  while (open.Dispatch(Clock::now(), send) != Phase::kStop) {
    std::this_thread::sleep_until(open.next());
  }
  const Clock::time_point give_up =
      Clock::now() + config.timeout + std::chrono::seconds(5);
  while (open.outstanding() > 0) {
    if (Clock::now() > give_up) {
      fmt::print(stderr,
                 "server_load: RPCs still in flight after their "
                 "deadline; giving up\n");
      std::_Exit(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  LoadReport report =
      load.counts.Report(flags, static_cast<int>(stubs.size()),
                         static_cast<int>(kMaxOutstanding), window);
  open.AddTo(&report);
  return Finish("server_load", "RPC", report, load.counts.first_error());
}

}  // namespace roost::bench
