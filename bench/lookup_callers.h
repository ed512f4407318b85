// The gRPC side of bench/server_load.cc: callers that keep roost.v1.Lookup
// RPCs in flight (Get, MultiGet, or single Gets through a GetCoalescer),
// check each answer against the KeySet, and count it; and the two loops
// that drive them, written once in closed_loop.h and open_loop.h:
//
// - closed: --concurrency callers, each sending its next RPC from the
//   completion callback of its last, until the window ends;
// - open (--rate): RPCs sent from the calling thread when they are due, each
//   on an idle caller (or a new one), round-robin over the channels,
//   whatever the answers do.
//
// Either prints the run's JSON line (closed_loop.h's Finish) and returns the
// exit status: 0, or 1 when an RPC failed or an answer was wrong. The
// callers run on gRPC's threads (the coalescer's with --coalesce); the
// functions return once every RPC is over, or end the process when RPCs
// outlive their deadline by 5 s.
//
// Example:
//   LookupConfig config{.multiget = true, .batch = 100, .table = "bench"};
//   KeySet keys(flags.keys, flags.seed, 8);
//   ... stubs: one roost::v1::Lookup::Stub per channel ...
//   return flags.rate > 0
//              ? RunLookupOpenLoop(flags, config, keys, stubs, nullptr)
//              : RunLookupClosedLoop(flags, config, keys, 64, stubs, nullptr);
#ifndef ROOST_BENCH_LOOKUP_CALLERS_H_
#define ROOST_BENCH_LOOKUP_CALLERS_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/closed_loop.h"
#include "bench/key_set.h"
#include "roost/v1/lookup.grpc.pb.h"

namespace roost {
class GetCoalescer;
}

namespace roost::bench {

// What each RPC asks for, and how its answer is checked.
struct LookupConfig {
  bool multiget = false;  // MultiGets of `batch` keys; else Gets
  uint32_t batch = 1;
  std::string table;
  bool exact = true;    // values must be the keys' own; else only as long
  bool packed = false;  // MultiGets ask for the packed answer
  std::chrono::milliseconds timeout{10000};  // each RPC's deadline
};

using LookupStubs = std::vector<std::unique_ptr<v1::Lookup::Stub>>;

// The closed loop: `concurrency` callers, caller i on stubs[i % size],
// through the window of `flags`; then the JSON line. With `coalescer`, each
// Get goes through it instead of being an RPC of its own. The exit status.
int RunLookupClosedLoop(const LoadFlags& flags, const LookupConfig& config,
                        const KeySet& keys, int concurrency,
                        const LookupStubs& stubs, GetCoalescer* coalescer);

// The open loop (flags.rate > 0): RPCs at Poisson arrival times, round-robin
// over `stubs`, each timed from when it was due; then waits for those
// outstanding, and prints the JSON line. The exit status.
int RunLookupOpenLoop(const LoadFlags& flags, const LookupConfig& config,
                      const KeySet& keys, const LookupStubs& stubs,
                      GetCoalescer* coalescer);

}  // namespace roost::bench

#endif  // ROOST_BENCH_LOOKUP_CALLERS_H_
