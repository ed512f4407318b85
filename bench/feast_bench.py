#!/usr/bin/env python3
"""Feast's get_online_features served by roost (roost.feast) against
Feast's Redis online store, on the same data (docs/features.md).

One feature view of 10 features (4 float32, 2 float64, 2 int64, 2 string)
over N entities in a Parquet file; `feast materialize` into each store
(roost: RoostComputeEngine into roost-load build --rows; Redis: Feast's
local engine), then get_online_features of all 10 features for 1 and for
100 random entities, one call after another: latency p50 and p99 and
entity rows/s. Starts its own roost-server and redis-server on loopback.
Run with the [feast] venv's Python (its redis-py), e.g.

    build/release/clients/python/venv-feast/bin/python bench/feast_bench.py \\
        --roost-load build/release/loader/roost-load \\
        --roost-server build/release/server/roost-server

Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

FEATURES_PY = '''
from datetime import timedelta
from feast import Entity, FeatureView, Field, FileSource, ValueType
from feast.types import Float32, Float64, Int64, String

user = Entity(name="user", join_keys=["user_id"], value_type=ValueType.INT64)
user_features = FeatureView(
    name="user_features", entities=[user], ttl=timedelta(days=7),
    schema=[Field(name="user_id", dtype=Int64)]
    + [Field(name=f"f{i}", dtype=Float32) for i in range(4)]
    + [Field(name=f"d{i}", dtype=Float64) for i in range(2)]
    + [Field(name=f"n{i}", dtype=Int64) for i in range(2)]
    + [Field(name=f"s{i}", dtype=String) for i in range(2)],
    source=FileSource(path="data/users.parquet", timestamp_field="event_timestamp"),
)
'''

FEATURES = ([f"user_features:f{i}" for i in range(4)] + [f"user_features:d{i}" for i in range(2)]
            + [f"user_features:n{i}" for i in range(2)]
            + [f"user_features:s{i}" for i in range(2)])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_data(repo: Path, n: int, now: datetime) -> None:
    import numpy as np
    import pandas as pd
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"user_id": np.arange(n, dtype=np.int64),
                       "event_timestamp": [now - timedelta(hours=1)] * n})
    for i in range(4):
        df[f"f{i}"] = rng.random(n).astype(np.float32)
    for i in range(2):
        df[f"d{i}"] = rng.random(n)
        df[f"n{i}"] = rng.integers(0, 1 << 40, n)
        df[f"s{i}"] = [f"value-{i}-{j % 977}" for j in range(n)]
    (repo / "data").mkdir(parents=True)
    df.to_parquet(repo / "data" / "users.parquet")
    (repo / "features.py").write_text(FEATURES_PY)


def run(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stdout}{r.stderr}")
    return time.perf_counter() - start


def measure(repo: Path, n: int, batch: int, calls: int) -> dict:
    import feast
    store = feast.FeatureStore(repo_path=str(repo))
    rnd = random.Random(batch)

    def call() -> float:
        rows = [{"user_id": rnd.randrange(n)} for _ in range(batch)]
        start = time.perf_counter()
        out = store.get_online_features(features=FEATURES, entity_rows=rows).to_dict()
        elapsed = time.perf_counter() - start
        assert out["f0"][0] is not None
        return elapsed

    for _ in range(min(50, calls)):
        call()
    times = sorted(call() for _ in range(calls))
    return {"p50": statistics.median(times) * 1e3,
            "p99": times[min(len(times) - 1, int(len(times) * 0.99))] * 1e3,
            "rows_per_s": batch * len(times) / sum(times)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--roost-load", required=True)
    ap.add_argument("--roost-server", required=True)
    ap.add_argument("--redis-server", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--entities", type=int, default=10000)
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--stores", default="roost,redis", help="which online stores to measure")
    args = ap.parse_args()
    # feast runs in each feature repository: absolute paths.
    args.roost_load = str(Path(args.roost_load).resolve())
    args.roost_server = str(Path(args.roost_server).resolve())
    feast_cli = str(Path(sys.executable).parent / "feast")
    now = datetime.now(timezone.utc).replace(microsecond=0)
    procs = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        try:
            data = root / "roost-data"
            data.mkdir()
            log = open(root / "server.log", "w")
            procs.append(subprocess.Popen(
                [args.roost_server, "--data-dir", str(data), "--listen", "127.0.0.1:0",
                 "--admin-listen", "", "--metrics-listen", "", "--poll-interval", "0.2"],
                stdout=log, stderr=subprocess.STDOUT))
            address = ""
            for _ in range(500):
                m = re.search(r"lookup service listening on (\S+)\n",
                              (root / "server.log").read_text())
                if m:
                    address = m.group(1)
                    break
                time.sleep(0.02)
            if not address:
                sys.exit("roost-server did not start:\n" + (root / "server.log").read_text())
            redis_port = free_port()
            procs.append(subprocess.Popen(
                [args.redis_server, "--port", str(redis_port), "--save", "", "--appendonly",
                 "no"], stdout=subprocess.DEVNULL))
            stores = {
                "roost": (f"online_store:\n  type: roost.feast.RoostOnlineStore\n"
                          f"  data_dir: {data}\n  shards: [[\"{address}\"]]\n"
                          f"  roost_load: {args.roost_load}\n"
                          f"batch_engine:\n  type: roost.feast.RoostComputeEngine\n"),
                "redis": (f"online_store:\n  type: redis\n"
                          f"  connection_string: 127.0.0.1:{redis_port}\n"),
            }
            results = {}
            for name, online in stores.items():
                if name not in args.stores.split(","):
                    continue
                repo = root / name
                write_data(repo, args.entities, now)
                (repo / "feature_store.yaml").write_text(
                    f"project: bench\nregistry: data/registry.db\nprovider: local\n"
                    f"offline_store:\n  type: file\n{online}"
                    f"entity_key_serialization_version: 3\n")
                run([feast_cli, "apply"], repo)
                took = run([feast_cli, "materialize", (now - timedelta(days=1)).isoformat(),
                            now.isoformat()], repo)
                results[name] = {"materialize": took,
                                 1: measure(repo, args.entities, 1, args.calls),
                                 100: measure(repo, args.entities, 100, args.calls // 4)}
        finally:
            for p in procs:
                p.kill()
                p.wait()
    print(f"{args.entities} entities, 10 features (4 float32, 2 float64, 2 int64, 2 string); "
          f"get_online_features one call after another, {args.calls} calls of 1 entity and "
          f"{args.calls // 4} of 100\n")
    print("| online store | materialize (s) | 1 entity p50 (ms) | p99 (ms) | rows/s "
          "| 100 entities p50 (ms) | p99 (ms) | rows/s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, r in results.items():
        one, hundred = r[1], r[100]
        print(f"| {name} | {r['materialize']:.1f} | {one['p50']:.2f} | {one['p99']:.2f} | "
              f"{one['rows_per_s']:,.0f} | {hundred['p50']:.2f} | {hundred['p99']:.2f} | "
              f"{hundred['rows_per_s']:,.0f} |")


if __name__ == "__main__":
    main()
