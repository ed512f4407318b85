// server_load: a closed-loop load generator for roost.v1.Lookup, over
// loopback only (bench/server_bench.sh).
//
// It opens --channels gRPC channels (each with its own channel arguments, so
// that gRPC gives each its own connection) and keeps --concurrency RPCs in
// flight in total with the callback API (`stub->async()->Get(...)`): each
// completion checks its answer and issues the next RPC from the callback.
// After --warmup seconds it measures for --duration seconds, and prints one
// JSON line on stdout:
//
//   {"method":"multiget","batch":1000,"channels":4,"concurrency":64,
//    "seconds":10.000,"rpcs":...,"keys":...,"qps":...,"keys_per_s":...,
//    "p50_us":...,"p90_us":...,"p99_us":...,"p999_us":...,"max_us":...,
//    "errors":0,"rpc_errors":0,"misses":0,"bad_values":0,
//    "client_cpu_s":...,"server_cpu_s":...,"server_cpu_us_per_key":...}
//
// With --rate R, the load is an open loop instead (bench/open_loop.h):
// RPCs are sent at Poisson arrival times, R a second in total, round-robin
// over the channels, whatever the answers do, each timed from when it was
// due; --concurrency is not taken, and the line adds "rate", "offered_qps",
// "dropped", "peak_in_flight" and "sustained" ("qps" being the achieved
// rate, "concurrency" the bound on requests outstanding). With --coalesce,
// the Gets due go through the GetCoalescer as they come.
//
// Latencies are those of the RPCs completed in the measured window (open
// loop: due in it), in a log-linear histogram (64 buckets per power of
// two: within 1.6%). With --server-pid, the server's user + system CPU
// (/proc/PID/stat) over the window is reported too (null without it).
//
// The keys are those bench/gen_records.cc writes for the same --keys and
// --seed (key i = Mix(base + i), 8 bytes, value = Mix(key ^ c)), computed
// here rather than read; or any fixed-width binary records file (--records,
// the same layout roost-load reads with --input-format fixed). Keys are drawn
// uniformly at random from the set, so every one exists: a found=false, a
// wrong value (--check full) or a value of the wrong size (--check size,
// for bench/noop_server.cc, whose values are filler) is an error, as is a
// failed RPC. Exit status: 0 when the run had no errors, 1 when it had
// some, 2 for bad usage or a server that does not answer at all.
//
//   server_load --addr 127.0.0.1:50051 --table bench --method multiget
//       --batch 1000 --keys 10000000 --server-pid 1234   (one line)

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/closed_loop.h"
#include "bench/key_set.h"
#include "bench/open_loop.h"
#include "client/get_coalescer.h"
#include "client/multiget_answer.h"
#include "fmt/format.h"
#include "roost/v1/lookup.grpc.pb.h"
#include "util/mutex_mode.h"

namespace {

using roost::bench::AddRateFlag;
using roost::bench::AddWindowFlags;
using roost::bench::CheckLoadFlags;
using roost::bench::Clock;
using roost::bench::Finish;
using roost::bench::KeySchedule;
using roost::bench::KeySet;
using roost::bench::LoadCounts;
using roost::bench::LoadFlags;
using roost::bench::LoadReport;
using roost::bench::OpenLoop;
using roost::bench::Phase;
using roost::bench::Window;

struct Config {
  bool multiget = false;
  uint32_t batch = 1;
  std::string table;
  bool exact = true;
  bool packed = false;  // MultiGets ask for the packed answer
  std::chrono::milliseconds timeout{10000};
};

class Caller;

// What the callers share: the window, the counts, and the count of callers
// still running; or, in the open loop, the callers idle.
class Load {
 public:
  // `open`: null for the closed loop.
  Load(const Config& config, const KeySet& keys, const Window& window,
       OpenLoop* open)
      : config_(config), keys_(keys), window_(window), open_(open) {}

  const Config& config() const { return config_; }
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
  const Config& config_;
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
    const Config& config = load_->config();
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

// The open loop (--rate): RPCs sent from this thread when they are due,
// each on a caller taken from the idle ones (or a new one), round-robin
// over `stubs`; then waits for those outstanding. The exit status.
int RunOpenLoop(
    const LoadFlags& flags, const Config& config, Load* load, Window* window,
    OpenLoop* open,
    const std::vector<std::unique_ptr<roost::v1::Lookup::Stub>>& stubs,
    roost::GetCoalescer* coalescer) {
  std::vector<std::unique_ptr<Caller>> callers;
  uint64_t sent = 0;
  auto send = [&](Clock::time_point due, Phase phase) {
    Caller* c = load->TakeIdle();
    if (c == nullptr) {
      callers.push_back(std::make_unique<Caller>(
          load, nullptr, coalescer, KeySchedule(flags.seed, callers.size())));
      c = callers.back().get();
    }
    c->IssueDue(due, phase, stubs[sent++ % stubs.size()].get());
  };
  open->Start(Clock::now());
  while (open->Dispatch(Clock::now(), send) != Phase::kStop) {
    std::this_thread::sleep_until(open->next());
  }
  const Clock::time_point give_up =
      Clock::now() + config.timeout + std::chrono::seconds(5);
  while (open->outstanding() > 0) {
    if (Clock::now() > give_up) {
      fmt::print(stderr,
                 "server_load: RPCs still in flight after their "
                 "deadline; giving up\n");
      std::_Exit(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  LoadReport report = load->counts.Report(
      flags, static_cast<int>(stubs.size()),
      static_cast<int>(roost::bench::kMaxOutstanding), *window);
  open->AddTo(&report);
  return Finish("server_load", "RPC", report, load->counts.first_error());
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

int main(int argc, char** argv) {
  roost::TurnOffMutexDeadlockDetection();
  LoadFlags flags;
  flags.keys = 10000000;
  std::string table = "bench";
  int channels = 4;
  int concurrency = 64;
  std::string records;
  size_t key_size = 8;
  size_t value_size = 8;
  std::string check = "full";
  uint32_t coalesce = 0;
  bool packed = false;

  CLI::App app{
      "server_load: a closed-loop (or, with --rate, open-loop) gRPC load "
      "generator for roost.v1.Lookup, over loopback. Prints one JSON line; "
      "exits 1 when any RPC failed or any answer was wrong, 2 on bad usage "
      "or an unreachable server."};
  // A flag given twice: the last one wins.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--addr", flags.addr,
                 "Server address: 127.0.0.1:PORT, localhost:PORT or "
                 "[::1]:PORT")
      ->required();
  app.add_option("--table", table, "Table name")->capture_default_str();
  app.add_option("--method", flags.method, "get or multiget")
      ->check(CLI::IsMember({"get", "multiget"}))
      ->capture_default_str();
  app.add_option("--batch", flags.batch,
                 "Keys per MultiGet (default 100; Get takes 1)");
  app.add_option("--channels", channels, "gRPC channels (connections)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--concurrency", concurrency,
                 "RPCs in flight, in total (the closed loop's)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  AddWindowFlags(&app, &flags);
  AddRateFlag(&app, &flags);
  app.add_option("--keys", flags.keys,
                 "Keys in the table: gen_records's first N (without "
                 "--records), or the first N records of --records")
      ->capture_default_str();
  app.add_option("--records", records,
                 "Fixed-width binary records (--key-size key bytes, then "
                 "--value-size value bytes), instead of gen_records's keys");
  app.add_option("--key-size", key_size, "With --records: key bytes")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20))
      ->capture_default_str();
  app.add_option("--value-size", value_size, "Value bytes")
      ->capture_default_str();
  app.add_option("--check", check,
                 "full: values must be the keys' own; size: found, with a "
                 "value of --value-size bytes (for noop_server)")
      ->check(CLI::IsMember({"full", "size"}))
      ->capture_default_str();
  app.add_option("--coalesce", coalesce,
                 "With --method get: send the Gets through roost's "
                 "GetCoalescer (client/get_coalescer.h) with this many "
                 "MultiGets in flight over the channels, instead of one RPC "
                 "each; 0: off")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  app.add_flag("--packed", packed,
               "With --method multiget: ask for the packed answer "
               "(MultiGetRequest.packed) and read it");
  app.add_option("--timeout", flags.timeout, "Deadline of each RPC, seconds")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  auto usage_error = [](const std::string& what) {
    fmt::print(stderr, "server_load: {}\n", what);
    return 2;
  };

  if (const auto error = CheckLoadFlags(&flags, "multiget", "Get")) {
    return usage_error(*error);
  }
  if (coalesce > 0 && flags.method != "get") {
    return usage_error("--coalesce is for --method get");
  }
  if (packed && flags.method != "multiget") {
    return usage_error("--packed is for --method multiget");
  }
  if (flags.rate > 0 && app.count("--concurrency") > 0) {
    return usage_error(fmt::format(
        "--concurrency is the closed loop's: with --rate, the RPCs in flight "
        "are as many as the rate and the server's speed make them (at most "
        "{})",
        roost::bench::kMaxOutstanding));
  }
  std::optional<KeySet> keys;
  if (records.empty()) {
    if (key_size != 8) return usage_error("gen_records's keys are 8 bytes");
    if (check == "full" && value_size != 8) {
      return usage_error("gen_records's values are 8 bytes (or --check size)");
    }
    if (flags.keys == 0) return usage_error("--keys must be positive");
    keys.emplace(flags.keys, flags.seed, value_size);
  } else {
    std::string data = ReadFile(records);
    const size_t width = key_size + value_size;
    if (data.size() < width || data.size() % width != 0) {
      return usage_error(fmt::format(
          "{}: not a whole number of {}-byte records (or unreadable)", records,
          width));
    }
    if (app.count("--keys") > 0 && flags.keys < data.size() / width) {
      if (flags.keys == 0) return usage_error("--keys must be positive");
      data.resize(flags.keys * width);
    }
    keys.emplace(std::move(data), key_size, value_size);
  }

  Config config;
  config.multiget = flags.method == "multiget";
  // The JSON line names the variant.
  if (packed) flags.method = "multiget-packed";
  if (coalesce > 0) flags.method = "get-coalesced";
  config.batch = flags.batch;
  config.table = table;
  config.exact = check == "full";
  config.packed = packed;
  config.timeout =
      std::chrono::milliseconds(static_cast<int64_t>(flags.timeout * 1e3));
  Window window(flags);
  std::optional<OpenLoop> open;
  if (flags.rate > 0) open.emplace(flags, &window);
  Load load(config, *keys, window, open ? &*open : nullptr);

  std::vector<std::shared_ptr<grpc::Channel>> chans;
  std::vector<std::unique_ptr<roost::v1::Lookup::Stub>> stubs;
  for (int c = 0; c < channels; ++c) {
    grpc::ChannelArguments args;
    // A distinct argument per channel, and a subchannel pool per channel:
    // each channel gets its own TCP connection.
    args.SetInt("roost.channel", c);
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetMaxReceiveMessageSize(-1);
    chans.push_back(grpc::CreateCustomChannel(
        flags.addr, grpc::InsecureChannelCredentials(), args));
    stubs.push_back(roost::v1::Lookup::NewStub(chans.back()));
  }

  // One synchronous call per channel first: it waits for the connection, and
  // a wrong table or address fails here with the server's message.
  for (int c = 0; c < channels; ++c) {
    grpc::ClientContext context;
    context.set_wait_for_ready(true);
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(10));
    roost::v1::GetRequest request;
    request.set_table(table);
    keys->Key(static_cast<uint64_t>(c) % keys->size(), request.mutable_key());
    roost::v1::GetResponse response;
    const grpc::Status s = stubs[c]->Get(&context, request, &response);
    if (!s.ok()) {
      fmt::print(stderr, "server_load: {}: Get failed: code {}: {}\n",
                 flags.addr, static_cast<int>(s.error_code()),
                 s.error_message());
      return 2;
    }
  }

  // The coalescer sends its MultiGets round-robin over the channels, as
  // over the replicas of a shard.
  std::vector<roost::Replica> replicas;
  std::unique_ptr<roost::GetCoalescer> coalescer;
  if (coalesce > 0) {
    for (int c = 0; c < channels; ++c) {
      replicas.push_back({flags.addr, roost::v1::Lookup::NewStub(chans[c])});
    }
    roost::CoalescerOptions options;
    options.max_in_flight = coalesce;
    options.timeout_seconds = flags.timeout;
    coalescer = std::make_unique<roost::GetCoalescer>(replicas, 0, options);
  }
  if (open) {
    return RunOpenLoop(flags, config, &load, &window, &*open, stubs,
                       coalescer.get());
  }
  std::vector<std::unique_ptr<Caller>> callers;
  for (int i = 0; i < concurrency; ++i) {
    callers.push_back(std::make_unique<Caller>(&load, stubs[i % channels].get(),
                                               coalescer.get(),
                                               KeySchedule(flags.seed, i)));
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
                load.counts.Report(flags, channels, concurrency, window),
                load.counts.first_error());
}
