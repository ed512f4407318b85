// redis_load's `run`: the closed or open loop over hiredis
// (bench/redis_load.cc says what it measures and checks; bench/closed_loop.h
// and bench/open_loop.h are the parts it shares with server_load).
#ifndef ROOST_BENCH_REDIS_LOOP_H_
#define ROOST_BENCH_REDIS_LOOP_H_

#include "bench/closed_loop.h"

namespace roost::bench {

// Loads Redis at `endpoint` from `connections` connections, each with one
// GET or MGET (flags.method "get" or "mget") in flight, or (flags.rate > 0)
// with GETs or MGETs sent at that rate over them, every reply checked;
// prints the JSON line. The exit status: 0, 1 when a request failed or an
// answer was wrong, 2 when the server does not answer at all. REQUIRES:
// CheckLoadFlags(flags, "mget", ...) passed.
int RunRedisLoad(const LoadFlags& flags, int connections,
                 const Loopback& endpoint);

}  // namespace roost::bench

#endif  // ROOST_BENCH_REDIS_LOOP_H_
