#!/usr/bin/env python3
"""Reads every key of a running cluster through the roost package, with the
sync and the asyncio client, and checks every value: the Python half of
tests/client/cluster_repository_test.cc.

Usage: check_cluster.py LAYOUT_FILE TABLE EXPECTED_TSV VERSION
  EXPECTED_TSV: one "hex key<TAB>hex value" line per key.
Prints "checked N keys" and exits 0 when every value and the version match;
else prints what differs and exits 1.
"""

from __future__ import annotations

import asyncio
import sys

import roost


def main() -> int:
    layout, table, expected_path, version = sys.argv[1:5]
    pairs = []
    with open(expected_path) as f:
        for line in f:
            k, v = line.rstrip("\n").split("\t")
            pairs.append((bytes.fromhex(k), bytes.fromhex(v)))
    keys = [k for k, _ in pairs]
    problems = []

    def check(kind: str, start: int, result: roost.BatchResult) -> None:
        if result.version != version:
            problems.append(f"{kind}: batch at {start} answered {result.version!r}")
        for (key, want), got in zip(pairs[start:start + len(result.values)], result.values):
            if got != want:
                problems.append(f"{kind}: key {key.hex()}: {got!r} != {want!r}")

    with roost.Client.from_layout_file(layout) as client:
        for i in range(0, len(keys), 700):
            check("sync", i, client.get_many_versioned(table, keys[i:i + 700]))
        for key, want in pairs[:50]:
            if client.get(table, key) != want:
                problems.append(f"sync get: key {key.hex()}")

    async def run_async() -> None:
        async with roost.AsyncClient.from_layout_file(layout) as client:
            results = await asyncio.gather(*(
                client.get_many_versioned(table, keys[i:i + 700])
                for i in range(0, len(keys), 700)))
            for n, result in enumerate(results):
                check("asyncio", n * 700, result)

    asyncio.run(run_async())
    for p in problems[:20]:
        print(p)
    if problems:
        return 1
    print(f"checked {len(keys)} keys")
    return 0


if __name__ == "__main__":
    sys.exit(main())
