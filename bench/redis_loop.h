// redis_load's `run`: the closed loop over hiredis (bench/redis_load.cc says
// what it measures and checks; bench/closed_loop.h is the part it shares
// with server_load).
#ifndef ROOST_BENCH_REDIS_LOOP_H_
#define ROOST_BENCH_REDIS_LOOP_H_

#include "bench/closed_loop.h"

namespace roost::bench {

// Loads Redis at `endpoint` from `connections` connections, each with one
// GET or MGET (flags.method "get" or "mget") in flight, every reply checked;
// prints the JSON line. The exit status: 0, 1 when a request failed or an
// answer was wrong, 2 when the server does not answer at all. REQUIRES:
// CheckLoadFlags(flags, "mget", ...) passed.
int RunRedisLoad(const LoadFlags& flags, int connections,
                 const Loopback& endpoint);

}  // namespace roost::bench

#endif  // ROOST_BENCH_REDIS_LOOP_H_
