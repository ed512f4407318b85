"""scan(): the shards' streams merged in key order, bounded by limit and by
the shard that stopped first; and the merge itself on made-up parts."""

from __future__ import annotations

import asyncio

import grpc
import pytest

import roost
from roost._calls import ScanPart, merge_scans
from conftest import Cluster, keys_and_values, skip_unless_server_fills_versions


def test_merge_stops_at_the_first_shard_that_has_more() -> None:
    a = ScanPart([(b"a", b"1"), (b"d", b"4"), (b"g", b"7")], "v000001", True)
    b = ScanPart([(b"b", b"2"), (b"c", b"3"), (b"e", b"5"), (b"h", b"8")], "v000001", False)
    merged = merge_scans({0: a, 1: b}, limit=0)
    # Shard 0 stopped at "g": past it, its own keys may be missing.
    assert [k for k, _ in merged.entries] == [b"a", b"b", b"c", b"d", b"e", b"g"]
    assert merged.more and merged.version == "v000001"
    limited = merge_scans({0: a, 1: b}, limit=3)
    assert [k for k, _ in limited.entries] == [b"a", b"b", b"c"] and limited.more
    done = merge_scans({0: ScanPart([(b"x", b"")], "", False), 1: ScanPart([], "", False)}, 5)
    assert done.entries == [(b"x", b"")] and not done.more and done.version == ""


def test_scan_merges_the_shards_in_key_order(cluster: Cluster) -> None:
    kvs = keys_and_values(1500)
    cluster.build("t", kvs, shards=3, fmt="block")
    servers = [cluster.server(shard=s) for s in range(3)]
    skip_unless_server_fills_versions(servers[0].address, "t", 0, 3)
    ordered = sorted(kvs.items())
    with roost.Client([[s.address] for s in servers], timeout=30) as client:
        everything = client.scan("t", limit=len(kvs))
        assert everything.entries == ordered and not everything.more
        assert everything.version == "v000001"
        first = client.scan("t", limit=10)
        assert first.entries == ordered[:10] and first.more
        prefixed = client.scan("t", prefix=b"key001")
        assert prefixed.entries == [kv for kv in ordered if kv[0].startswith(b"key001")]
        # str bounds are their UTF-8, as str keys are.
        assert client.scan("t", prefix="key001").entries == prefixed.entries
        assert client.scan("t", start="key00100", end="key00200").entries == \
            client.scan("t", start=b"key00100", end=b"key00200").entries
        ranged = client.scan("t", start=b"key00100", end=b"key00200")
        assert ranged.entries == [kv for kv in ordered if b"key00100" <= kv[0] < b"key00200"]
        # Resuming after the last key reads on.
        rest = client.scan("t", start=first.entries[-1][0] + b"\x00", limit=5)
        assert rest.entries == ordered[10:15]

    async def main() -> None:
        async with roost.AsyncClient([[s.address] for s in servers], timeout=30) as client:
            result = await client.scan("t", prefix=b"key002", limit=30)
            assert result.entries == [kv for kv in ordered if kv[0].startswith(b"key002")][:30]
            assert result.more
    asyncio.run(main())


def test_a_cuckoo_table_has_no_order(cluster: Cluster) -> None:
    cluster.build("t", keys_and_values(50), shards=1)
    server = cluster.server()
    skip_unless_server_fills_versions(server.address, "t")
    with roost.Client([[server.address]], timeout=30) as client:
        with pytest.raises(roost.RoostError) as e:
            client.scan("t")
        assert e.value.code == grpc.StatusCode.FAILED_PRECONDITION
        assert not isinstance(e.value, roost.StaleLayoutError)
        with pytest.raises(ValueError, match="limit"):
            client.scan("t", limit=-1)
