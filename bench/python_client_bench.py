#!/usr/bin/env python3
"""Measures the Python client's get_many throughput (keys/s) against a
running roost cluster, with batches of 1,000 keys (issue 14's target: 1M
keys/s per process). Only reads; the keys must be in the table.

Usage:
  bench/python_client_bench.py --layout cluster.json --table T \\
      --keys-file keys.txt [--batch 1000] [--seconds 10] [--concurrency 4] [--aio]
  bench/python_client_bench.py --shards 127.0.0.1:7001 127.0.0.1:7002 ...

--shards takes one argument per shard (replicas joined with commas). Keys
come from --keys-file (one per line; hex with --hex) or are generated as
--key-format % i for i < --key-count (default "key%08d", as bench tables
built from generated input are). --concurrency runs that many batches in
flight at once (threads with Client, tasks with --aio). Prints one JSON line:
keys/s, batches/s, batch latency p50/p99 in ms, misses and errors.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import threading
import time
from pathlib import Path

try:
    import roost
except ImportError:  # not installed: this checkout's source
    sys.path.append(str(Path(__file__).resolve().parents[1] / "clients" / "python" / "src"))
    import roost


def load_keys(args: argparse.Namespace) -> list[bytes]:
    if args.keys_file:
        lines = Path(args.keys_file).read_bytes().splitlines()
        return [bytes.fromhex(l.decode()) if args.hex else l for l in lines if l]
    return [(args.key_format % i).encode() for i in range(args.key_count)]


def batches(keys: list[bytes], size: int, seed: int) -> list[list[bytes]]:
    rng = random.Random(seed)
    return [[keys[rng.randrange(len(keys))] for _ in range(size)] for _ in range(64)]


def report(args: argparse.Namespace, seconds: float, latencies: list[float], misses: int,
           errors: int) -> None:
    done = len(latencies)
    latencies.sort()
    print(json.dumps({
        "client": "python-aio" if args.aio else "python",
        "batch": args.batch, "concurrency": args.concurrency, "seconds": round(seconds, 2),
        "keys_per_second": round(done * args.batch / seconds),
        "batches_per_second": round(done / seconds, 1),
        "p50_ms": round(statistics.median(latencies) * 1e3, 3) if latencies else None,
        "p99_ms": round(latencies[int(0.99 * (done - 1))] * 1e3, 3) if latencies else None,
        "misses": misses, "errors": errors,
    }))


def run_sync(client: roost.Client, args: argparse.Namespace, keys: list[bytes]) -> None:
    latencies: list[float] = []
    counts = {"misses": 0, "errors": 0}
    lock = threading.Lock()
    end = time.monotonic() + args.seconds

    def worker(seed: int) -> None:
        mine: list[float] = []
        misses = errors = 0
        work = batches(keys, args.batch, seed)
        i = 0
        while time.monotonic() < end:
            start = time.monotonic()
            try:
                values = client.get_many(args.table, work[i % len(work)])
                misses += values.count(None)
            except roost.RoostError:
                errors += 1
            mine.append(time.monotonic() - start)
            i += 1
        with lock:
            latencies.extend(mine)
            counts["misses"] += misses
            counts["errors"] += errors

    began = time.monotonic()
    threads = [threading.Thread(target=worker, args=(s,)) for s in range(args.concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report(args, time.monotonic() - began, latencies, counts["misses"], counts["errors"])


async def run_aio(args: argparse.Namespace, shards: list[list[str]],
                  tls: roost.TlsConfig | None, keys: list[bytes]) -> None:
    latencies: list[float] = []
    counts = {"misses": 0, "errors": 0}
    async with roost.AsyncClient(shards, tls=tls) as client:
        end = time.monotonic() + args.seconds

        async def worker(seed: int) -> None:
            work = batches(keys, args.batch, seed)
            i = 0
            while time.monotonic() < end:
                start = time.monotonic()
                try:
                    values = await client.get_many(args.table, work[i % len(work)])
                    counts["misses"] += values.count(None)
                except roost.RoostError:
                    counts["errors"] += 1
                latencies.append(time.monotonic() - start)
                i += 1

        began = time.monotonic()
        await asyncio.gather(*(worker(s) for s in range(args.concurrency)))
        report(args, time.monotonic() - began, latencies, counts["misses"], counts["errors"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--layout", help="a cluster layout file (clients/python/README.md)")
    where.add_argument("--shards", nargs="+", help="per shard, its replicas joined by commas")
    parser.add_argument("--table", required=True)
    parser.add_argument("--keys-file")
    parser.add_argument("--hex", action="store_true", help="--keys-file holds hex keys")
    parser.add_argument("--key-format", default="key%08d")
    parser.add_argument("--key-count", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--aio", action="store_true", help="use roost.AsyncClient")
    args = parser.parse_args()
    if args.layout:
        layout = roost.Layout.from_file(args.layout)
        shards, tls = [list(r) for r in layout.shards], layout.tls
    else:
        shards, tls = [s.split(",") for s in args.shards], None
    keys = load_keys(args)
    if args.aio:
        asyncio.run(run_aio(args, shards, tls, keys))
        return
    with roost.Client(shards, tls=tls) as client:
        client.get_many(args.table, keys[:args.batch])  # connect first
        run_sync(client, args, keys)


if __name__ == "__main__":
    main()
