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
// random from the set (bench/redis_loop.cc; the flags, key schedule,
// window, counts and JSON line are bench/closed_loop.h, server_load's
// too). One thread drives them all from one epoll loop, each
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
// run --text-pairs: the keys and values of bench/text_pairs.h instead (text
// keys of 8 to 16 bytes, 100-byte values), as bench/clients_bench.sh loads
// them with redis-cli --pipe.
//
// run --rate R: the open loop instead (bench/open_loop.h): requests are
// sent at Poisson arrival times, R a second in total, each on the next
// connection round-robin, pipelined behind any still out on it, whatever
// the replies do; a request's latency runs from when it was due, and the
// line adds "rate", "offered_qps", "dropped", "peak_in_flight" and
// "sustained" ("qps" being the achieved rate, "concurrency" the bound on
// requests outstanding).
//
// Every reply is checked whole. A nil for a key of the set is a miss, a
// wrong value a bad value; an error reply, a malformed reply, no reply
// within --timeout or a broken connection is a failed request (and, but for
// an error reply, the connection is opened anew: its stream is out of
// step). After --warmup seconds, the loop measures for --duration seconds:
// latencies, from a request's first byte sent (open loop: from when it was
// due) to its reply's last byte parsed, of the requests that completed in
// the window (open loop: that were due in it) without error. One
// JSON line with server_load's fields (bench/load_stats.h), "channels" and
// "concurrency" both being --connections; --server-pid adds Redis's CPU over
// the window (/proc/PID/stat). Exit status, as server_load's: 0 when the run
// had no errors, 1 when it had some, 2 for bad usage or a server that does
// not answer at all.

#include <hiredis/hiredis.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/closed_loop.h"
#include "bench/generated_pairs.h"
#include "bench/open_loop.h"
#include "bench/redis_client.h"
#include "bench/redis_loop.h"
#include "fmt/format.h"

namespace {

using roost::bench::AddRateFlag;
using roost::bench::AddWindowFlags;
using roost::bench::CheckLoadFlags;
using roost::bench::Clock;
using roost::bench::Context;
using roost::bench::ContextError;
using roost::bench::Describe;
using roost::bench::Excerpt;
using roost::bench::GeneratedPairs;
using roost::bench::IsString;
using roost::bench::LoadFlags;
using roost::bench::Loopback;
using roost::bench::Mix;
using roost::bench::NotLoopbackMessage;
using roost::bench::ParseLoopback;
using roost::bench::Reply;
using roost::bench::RunRedisLoad;
using roost::bench::Timeval;

constexpr int kExitErrors = 1;
constexpr int kExitUsage = 2;  // also: the server does not answer at all

std::string_view Bytes(const uint64_t& v) {
  return {reinterpret_cast<const char*>(&v), sizeof(v)};
}

// --- fill -------------------------------------------------------------------

struct FillFlags {
  std::string addr;
  uint64_t keys = 0;
  uint64_t seed = roost::bench::kDefaultSeed;
  uint32_t batch = 1000;
  uint32_t pipeline = 8;
  double timeout = 10;
};

// Keys checked after a fill: the first, the last, and random ones.
constexpr int kCheckedKeys = 300;

int RunFill(const FillFlags& f, const Loopback& endpoint) {
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "redis_load: Redis's counterpart of server_load, over loopback: fill "
      "loads gen_records's pairs with MSET; run loads Redis closed-loop (or, "
      "with --rate, open-loop) with GET or MGET and prints one JSON line with "
      "server_load's fields. Exits "
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

  LoadFlags run;
  int connections = 64;
  CLI::App* run_cmd = app.add_subcommand(
      "run",
      "Closed-loop load: --connections connections with one GET or MGET in "
      "flight each (or, with --rate, requests sent when due over them); "
      "every reply checked; one JSON line as server_load's.");
  run_cmd->add_option("--addr", run.addr, addr_help)->required();
  run_cmd->add_option("--method", run.method, "get or mget")
      ->check(CLI::IsMember({"get", "mget"}))
      ->capture_default_str();
  run_cmd
      ->add_option("--batch", run.batch,
                   "Keys per MGET (default 100; GET takes 1)")
      ->check(CLI::Range(1, 1 << 20));
  run_cmd
      ->add_option("--connections", connections,
                   "TCP connections, each with one request in flight "
                   "(open loop: requests spread over them, pipelined)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  run_cmd
      ->add_option("--keys", run.keys,
                   "Keys loaded (by fill): requests draw from the first N")
      ->required()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  run_cmd->add_flag("--text-pairs", run.text_pairs,
                    "Ask for the pairs of bench/text_pairs.h (text keys of 8 "
                    "to 16 bytes, 100-byte values, loaded by "
                    "bench/clients_bench.sh) rather than gen_records'");
  AddWindowFlags(run_cmd, &run);
  AddRateFlag(run_cmd, &run);
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
  if (fill_cmd->parsed()) {
    const std::optional<Loopback> endpoint = ParseLoopback(fill.addr);
    if (!endpoint) return usage_error(NotLoopbackMessage(fill.addr));
    return RunFill(fill, *endpoint);
  }
  if (const auto error = CheckLoadFlags(&run, "mget", "get")) {
    return usage_error(*error);
  }
  return RunRedisLoad(run, connections, *ParseLoopback(run.addr));
}
