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
//
// This file holds the flags and the channels; the callers, their checks and
// the two loops are bench/lookup_callers.h, the keys bench/key_set.h.

#include <grpcpp/grpcpp.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/closed_loop.h"
#include "bench/key_set.h"
#include "bench/lookup_callers.h"
#include "bench/open_loop.h"
#include "client/get_coalescer.h"
#include "fmt/format.h"
#include "roost/v1/lookup.grpc.pb.h"
#include "util/mutex_mode.h"

namespace {

using roost::bench::AddRateFlag;
using roost::bench::AddWindowFlags;
using roost::bench::CheckLoadFlags;
using roost::bench::KeySet;
using roost::bench::LoadFlags;
using roost::bench::LookupConfig;
using roost::bench::LookupStubs;
using roost::bench::RunLookupClosedLoop;
using roost::bench::RunLookupOpenLoop;

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

  LookupConfig config;
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

  std::vector<std::shared_ptr<grpc::Channel>> chans;
  LookupStubs stubs;
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
  if (flags.rate > 0) {
    return RunLookupOpenLoop(flags, config, *keys, stubs, coalescer.get());
  }
  return RunLookupClosedLoop(flags, config, *keys, concurrency, stubs,
                             coalescer.get());
}
