"""Versions across shards: every response names its version, a batch can
be pinned, and during a rollout one batch never mixes versions (the
consistency algorithm: pinned to the oldest while the servers keep it for
--version-grace, else the newest once every shard has it, else ABORTED).

Shards 0 and 1 are served from two data directories, so that one can be
given a new version while the other keeps the old one. Values name their
version ("v1:" + key)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest

import roost
from conftest import (Cluster, Server, keys_and_values, server_supports, serving_version,
                      skip_unless_server_fills_versions, wait_for)

KEYS = list(keys_and_values(600))


def data(version: int) -> dict[bytes, bytes]:
    return {k: b"v%d:" % version + k for k in KEYS}


def rollout(cluster: Cluster, grace: str) -> tuple[list[Server], list[Path]]:
    """Version 1 in both shards' directories, servers for each, then
    version 2 in shard 0's only."""
    if not server_supports("--version-grace"):
        pytest.skip("this roost-server has no --version-grace")
    dirs = [cluster.scratch / "data0", cluster.scratch / "data1"]
    for d in dirs:
        d.mkdir()
        cluster.build("t", data(1), shards=2, data=d)
    servers = [cluster.server(shard=s, data=dirs[s], extra=["--version-grace", grace])
               for s in range(2)]
    skip_unless_server_fills_versions(servers[0].address, "t", 0, 2)
    cluster.build("t", data(2), shards=2, data=dirs[0])
    wait_for(lambda: serving_version(servers[0].address, "t") == "v000002",
             "shard 0 to serve v000002", describe=servers[0].describe)
    return servers, dirs


def test_responses_name_their_version_and_a_batch_can_be_pinned(cluster: Cluster) -> None:
    cluster.build("t", data(1), shards=2)
    servers = [cluster.server(shard=s) for s in range(2)]
    skip_unless_server_fills_versions(servers[0].address, "t", 0, 2)
    with roost.Client([[s.address] for s in servers], timeout=30) as client:
        result = client.get_many_versioned("t", KEYS)
        assert result.version == "v000001" and result.values == [data(1)[k] for k in KEYS]
        assert client.get_versioned("t", KEYS[0]) == (data(1)[KEYS[0]], "v000001")
        for pin in ("1", "v000001"):
            assert client.get_many_versioned("t", KEYS, version=pin).version == "v000001"
        with pytest.raises(roost.VersionUnavailableError) as e:
            client.get_many("t", KEYS, version="v000009")
        assert e.value.code == grpc.StatusCode.FAILED_PRECONDITION


def test_a_rollout_is_read_at_the_oldest_version_within_the_grace(cluster: Cluster) -> None:
    servers, _ = rollout(cluster, grace="300")
    with roost.Client([[s.address] for s in servers], timeout=30) as client:
        result = client.get_many_versioned("t", KEYS)
        # Shard 0 answered v2 first, then v1 again, pinned.
        assert result.version == "v000001"
        assert result.values == [data(1)[k] for k in KEYS]
    # In pieces: the later pieces pinned to the version the first answered.
    with roost.Client([[s.address] for s in servers], timeout=30, max_batch=100) as client:
        result = client.get_many_versioned("t", KEYS)
        assert result.version == "v000001"
        assert result.values == [data(1)[k] for k in KEYS]

    async def main() -> None:
        async with roost.AsyncClient([[s.address] for s in servers], timeout=30) as client:
            result = await client.get_many_versioned("t", KEYS)
            assert result.version == "v000001"
            assert result.values == [data(1)[k] for k in KEYS]
    asyncio.run(main())


def test_past_the_grace_the_newest_once_every_shard_has_it(cluster: Cluster) -> None:
    servers, dirs = rollout(cluster, grace="0")
    layout = [[s.address] for s in servers]
    with roost.Client(layout, timeout=2) as client:
        # Shard 0 has dropped v1, shard 1 lacks v2: no common version.
        with pytest.raises(roost.InconsistentVersionsError) as e:
            client.get_many("t", KEYS)
        assert e.value.code == grpc.StatusCode.ABORTED
        assert e.value.versions == ["v000001", "v000002"]
        assert "versions seen: v000001, v000002" in str(e.value)
    cluster.build("t", data(2), shards=2, data=dirs[1])
    with roost.Client(layout, timeout=60) as client:
        client.wait("t", "v000002", timeout=60)
        result = client.get_many_versioned("t", KEYS)
        assert result.version == "v000002"
        assert result.values == [data(2)[k] for k in KEYS]
