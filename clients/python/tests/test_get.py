"""get and get_many against real roost-servers, sharded and not: every
key's value, misses, request order with duplicates, the empty batch, a
stale layout, an unknown table and a shard with no live replica."""

from __future__ import annotations

import random

import grpc
import pytest

import roost
from conftest import Cluster, keys_and_values

TOPOLOGIES = [  # shards, replicas per shard, table format
    (1, 1, "block"),
    (3, 2, "cuckoo"),
    (2, 1, "block"),
]


def start(cluster: Cluster, shards: int, replicas: int, fmt: str,
          kvs: dict[bytes, bytes]) -> roost.Client:
    cluster.build("t", kvs, shards=shards, fmt=fmt)
    layout = [[cluster.server(shard=s if shards > 1 else None).address for _ in range(replicas)]
              for s in range(shards)]
    return roost.Client(layout, timeout=30)


@pytest.mark.parametrize("shards,replicas,fmt", TOPOLOGIES)
def test_every_key_through_get_and_get_many(cluster: Cluster, shards: int, replicas: int,
                                            fmt: str) -> None:
    kvs = keys_and_values(2000)
    with start(cluster, shards, replicas, fmt, kvs) as client:
        keys = list(kvs)
        random.Random(1).shuffle(keys)
        result = client.get_many_versioned("t", keys)
        assert result.values == [kvs[k] for k in keys]
        # Today's server names no version; once it does, it is v000001.
        assert result.version in ("", "v000001")
        for start_ in range(0, len(keys), 1000):  # batches of the server's size
            batch = keys[start_:start_ + 1000]
            assert client.get_many("t", batch) == [kvs[k] for k in batch]
        for key in keys[:300] + [b"", b"\x00\xff\x00", b"tab\tnew\nline"]:
            assert client.get("t", key) == kvs[key], key
        assert client.get("t", b"tab\tnew\nline") == b""  # empty, not missing


@pytest.mark.parametrize("shards,replicas,fmt", TOPOLOGIES)
def test_misses_duplicates_and_order(cluster: Cluster, shards: int, replicas: int,
                                     fmt: str) -> None:
    kvs = keys_and_values(500)
    with start(cluster, shards, replicas, fmt, kvs) as client:
        present = list(kvs)[:100]
        missing = [b"missing %d" % i for i in range(100)] + [b"k" * 5000]
        batch = present + missing + present[::-1] + present[:10] * 3
        random.Random(2).shuffle(batch)
        assert client.get_many("t", batch) == [kvs.get(k) for k in batch]
        assert client.get("t", b"missing") is None
        assert client.get_versioned("t", b"missing")[0] is None
        value, version = client.get_versioned("t", present[0])
        assert value == kvs[present[0]] and version in ("", "v000001")


def test_an_empty_batch_asks_nobody(cluster: Cluster, free_port: int) -> None:
    # Nothing listens there: an empty batch needs no server.
    with roost.Client([[f"127.0.0.1:{free_port}"]], timeout=1) as client:
        assert client.get_many("t", []) == []
        result = client.get_many_versioned("t", [])
        assert result.values == [] and result.version == ""


def test_an_unknown_table_fails_at_once(cluster: Cluster) -> None:
    cluster.build("t", keys_and_values(10), shards=2)
    with roost.Client([[cluster.server(shard=s).address] for s in range(2)],
                      timeout=30) as client:
        with pytest.raises(roost.RoostError) as e:
            client.get_many("nope", [b"key00001", b"key00002", b"key00003"])
        assert e.value.code == grpc.StatusCode.NOT_FOUND
        assert "NOT_FOUND" in str(e.value) and "nope" in str(e.value)
        with pytest.raises(ValueError, match="table name"):
            client.get("", b"k")


def test_a_stale_layout_names_the_shard(cluster: Cluster) -> None:
    kvs = keys_and_values(300)
    cluster.build("t", kvs, shards=3)
    servers = [cluster.server(shard=s) for s in range(3)]
    # The table has 3 shards; this layout says 2 (servers of shards 0, 1).
    with roost.Client([[servers[0].address], [servers[1].address]], timeout=30) as client:
        with pytest.raises(roost.StaleLayoutError) as e:
            client.get_many("t", list(kvs))
        assert e.value.code == grpc.StatusCode.FAILED_PRECONDITION
        assert e.value.shard in (0, 1)
        assert "of 3; this server serves shard" in str(e.value)
        assert "reload it" in str(e.value)
        wrong = next(k for k in kvs if roost.partition_of(k, 2) == 1
                     and roost.partition_of(k, 3) != 1)
        with pytest.raises(roost.StaleLayoutError, match=r"^shard 1 \("):
            client.get("t", wrong)


def test_a_shard_with_no_live_replica_fails_within_the_deadline(cluster: Cluster) -> None:
    kvs = keys_and_values(300)
    cluster.build("t", kvs, shards=2)
    live = cluster.server(shard=0)
    dead = [cluster.server(shard=1), cluster.server(shard=1)]
    for s in dead:
        s.kill()
    layout = [[live.address], [s.address for s in dead]]
    with roost.Client(layout, timeout=1.5) as client:
        with pytest.raises(roost.RoostError) as e:
            client.get_many("t", list(kvs))
        assert e.value.code == grpc.StatusCode.UNAVAILABLE
        assert e.value.shard == 1
        assert str(e.value).startswith("shard 1 (") and "no replica answered before the deadline" in str(e.value)
        for s in dead:
            assert s.address in str(e.value)
        # Shard 0's keys alone are served.
        mine = [k for k in kvs if roost.partition_of(k, 2) == 0]
        assert client.get_many("t", mine) == [kvs[k] for k in mine]


def test_a_batch_larger_than_the_servers_take_goes_in_pieces(cluster: Cluster) -> None:
    kvs = keys_and_values(3000)
    cluster.build("t", kvs, shards=2)
    layout = [[cluster.server(shard=s, extra=["--max-batch", "100"]).address]
              for s in range(2)]
    keys = list(kvs)
    random.Random(4).shuffle(keys)
    batch = keys + keys[:77]
    with roost.Client(layout, timeout=30, max_batch=100) as client:
        result = client.get_many_versioned("t", batch)
        assert result.values == [kvs[k] for k in batch]
        assert result.version in ("", "v000001")
    # Told the servers take more than they do, the client's part is refused.
    with roost.Client(layout, timeout=30) as client:
        with pytest.raises(roost.RoostError) as e:
            client.get_many("t", keys)
        assert e.value.code == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(ValueError, match="max_batch"):
        roost.Client(layout, max_batch=0)


@pytest.mark.parametrize("shards", [1, 3])
def test_str_keys_are_their_utf8(cluster: Cluster, shards: int) -> None:
    # A str key is sent as its UTF-8 bytes, on every path (one shard: no
    # hashing; several: routed by the hash of those bytes).
    kvs = {"user:42".encode(): b"a", "clé:é".encode(): b"b", b"\xff": b"c"}
    cluster.build("t", kvs, shards=shards)
    layout = [[cluster.server(shard=s if shards > 1 else None).address] for s in range(shards)]
    with roost.Client(layout, timeout=30) as client:
        assert client.get("t", "user:42") == b"a"
        assert client.get_versioned("t", "clé:é")[0] == b"b"
        assert client.get_many("t", ["clé:é", b"\xff", "user:42", "missing"]) == [
            b"b", b"c", b"a", None]
        assert client.get_many("t", ["user:42"] * 5, version=None) == [b"a"] * 5
        with roost.Client(layout, timeout=30, max_batch=2) as small:
            assert small.get_many("t", ["user:42", "clé:é", b"\xff"]) == [b"a", b"b", b"c"]
        for bad in (42, None, ["user:42"]):
            with pytest.raises(TypeError, match=r"^a key is bytes \(or str, sent as UTF-8\), "
                                                f"not {type(bad).__name__}$"):
                client.get("t", bad)  # type: ignore[arg-type]
            with pytest.raises(TypeError, match=f"not {type(bad).__name__}$"):
                client.get_many("t", [b"user:42", bad])  # type: ignore[list-item]
