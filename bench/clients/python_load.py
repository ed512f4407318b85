#!/usr/bin/env python3
"""The Python load generators of bench/clients_bench.sh: roost's
AsyncClient against a roost cluster, or redis-py's asyncio client against
Redis, under one of two closed loops on the pairs of bench/text_pairs.h
(bench/clients/pairs.py):

  --workload get       --in-flight asyncio tasks, each one single-key get at
                       a time (roost: AsyncClient(coalesce=True).get, so
                       concurrent gets go out together; Redis: GET, the
                       pool opening a connection per task)
  --workload multiget  --in-flight tasks, each one get_many (Redis: MGET) of
                       --batch keys at a time

Keys are drawn uniformly from the first --keys pairs and every answer is
checked: a miss or a wrong value is an error, and the exit status is 1 when
any call failed or was answered wrong. After --warmup seconds, calls that
complete within the next --duration seconds are measured. One JSON line,
with bench/closed_loop.h's names: method, concurrency, batch, seconds, rpcs
(calls), keys, qps (calls/s), keys_per_s, p50_us, p99_us, rpc_errors,
misses, bad_values, client_cpu_s, first_error.

  python_load.py --client roost --layout cluster.json --table bench \\
      --keys 1000000 --workload get --in-flight 64
  python_load.py --client redis --redis 127.0.0.1:6379 --keys 1000000 \\
      --workload multiget --in-flight 8 --batch 100

roost comes from clients/python/src when it is not installed; redis-py
(`pip install redis`) only for --client redis.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pairs  # noqa: E402


class Counts:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.keys = 0
        self.rpc_errors = 0
        self.misses = 0
        self.bad_values = 0
        self.first_error = ""

    def error(self, kind: str, what: str) -> None:
        setattr(self, kind, getattr(self, kind) + 1)
        if not self.first_error:
            self.first_error = what

    def check(self, number: int, got: bytes | None) -> bool:
        if got is None:
            self.error("misses", f"key #{number} answered as absent")
            return False
        if got != pairs.value(pairs.key(number)):
            self.error("bad_values", f"key #{number} answered a wrong value")
            return False
        return True


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


async def run(args: argparse.Namespace) -> int:
    counts = Counts()
    if args.client == "roost":
        try:
            import roost
        except ImportError:  # not installed: this checkout's source
            sys.path.append(str(Path(__file__).resolve().parents[2] / "clients" / "python" / "src"))
            import roost
        client = roost.AsyncClient.from_layout_file(args.layout, coalesce=True)
        get = lambda k: client.get(args.table, k)  # noqa: E731
        get_many = lambda ks: client.get_many(args.table, ks)  # noqa: E731
        close = client.close
        errors: tuple[type[BaseException], ...] = (roost.RoostError,)
    else:
        import redis.asyncio
        import redis.exceptions
        host, _, port = args.redis.rpartition(":")
        client = redis.asyncio.Redis(host=host, port=int(port), max_connections=args.in_flight)
        get = client.get
        get_many = client.mget
        close = client.aclose
        errors = (redis.exceptions.RedisError, OSError)

    started = time.monotonic()
    measure_from = started + args.warmup
    measure_to = measure_from + args.duration
    cpu0 = cpu1 = 0.0

    async def caller(index: int) -> None:
        rng = random.Random(args.seed * 1000 + index)
        while True:
            now = time.monotonic()
            if now >= measure_to:
                return
            numbers = [rng.randrange(args.keys) for _ in range(args.batch)]
            keys = [pairs.key(n) for n in numbers]
            start = time.monotonic()
            try:
                if args.workload == "get":
                    answers = [await get(keys[0])]
                else:
                    answers = await get_many(keys)
            except errors as e:
                counts.error("rpc_errors", f"{type(e).__name__}: {e}")
                continue
            end = time.monotonic()
            if len(answers) != len(numbers):
                counts.error("rpc_errors", f"{len(answers)} answers to {len(numbers)} keys")
                continue
            ok = all([counts.check(n, a) for n, a in zip(numbers, answers)])
            if ok and measure_from <= start and end <= measure_to:
                counts.latencies.append(end - start)
                counts.keys += len(numbers)

    async def clock() -> None:
        nonlocal cpu0, cpu1
        await asyncio.sleep(max(0.0, measure_from - time.monotonic()))
        cpu0 = time.process_time()
        await asyncio.sleep(max(0.0, measure_to - time.monotonic()))
        cpu1 = time.process_time()

    try:
        await asyncio.gather(clock(), *(caller(i) for i in range(args.in_flight)))
    finally:
        await close()
    lat = sorted(counts.latencies)
    print(json.dumps({
        "method": args.workload, "concurrency": args.in_flight, "batch": args.batch,
        "seconds": round(args.duration, 3), "rpcs": len(lat), "keys": counts.keys,
        "qps": round(len(lat) / args.duration, 1),
        "keys_per_s": round(counts.keys / args.duration, 1),
        "p50_us": round(percentile(lat, 0.50) * 1e6, 1),
        "p99_us": round(percentile(lat, 0.99) * 1e6, 1),
        "rpc_errors": counts.rpc_errors, "misses": counts.misses,
        "bad_values": counts.bad_values, "client_cpu_s": round(cpu1 - cpu0, 3),
        "first_error": counts.first_error,
    }))
    if counts.first_error:
        print(f"python_load: {counts.first_error}", file=sys.stderr)
        return 1
    if not lat:
        print("python_load: no call completed in the measured window", file=sys.stderr)
        return 1
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--client", choices=["roost", "redis"], required=True)
    parser.add_argument("--layout", help="roost: the cluster layout file")
    parser.add_argument("--table", default="bench")
    parser.add_argument("--redis", help="redis: HOST:PORT")
    parser.add_argument("--keys", type=int, required=True,
                        help="the first N pairs are loaded")
    parser.add_argument("--workload", choices=["get", "multiget"], required=True)
    parser.add_argument("--in-flight", type=int, default=64)
    parser.add_argument("--batch", type=int, default=100, help="keys per multiget")
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args()
    if args.client == "roost" and not args.layout:
        parser.error("--client roost needs --layout")
    if args.client == "redis" and not args.redis:
        parser.error("--client redis needs --redis HOST:PORT")
    if not 0 < args.keys <= pairs.MAX_PAIRS or args.in_flight < 1 or args.batch < 1:
        parser.error("--keys, --in-flight and --batch must be positive (--keys at most 10^8)")
    if args.workload == "get":
        args.batch = 1
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
