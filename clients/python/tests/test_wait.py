"""wait(): returns once every replica of every shard serves the version,
and times out naming the replicas that do not."""

from __future__ import annotations

import threading

import pytest

import roost
from conftest import Cluster, keys_and_values, skip_unless_server_fills_versions


def test_wait_returns_for_the_serving_version_and_times_out_otherwise(
        cluster: Cluster) -> None:
    cluster.build("t", keys_and_values(100), shards=2)
    servers = [[cluster.server(shard=s), cluster.server(shard=s)] for s in range(2)]
    with roost.Client([[r.address for r in rs] for rs in servers]) as client:
        client.wait("t", "v000001", timeout=30)
        client.wait("t", "1", timeout=30)
        with pytest.raises(roost.WaitTimeoutError) as e:
            client.wait("t", "v000002", timeout=0.5)
        assert e.value.lagging == [f"shard {s} {r.address}: serves v000001"
                                   for s, rs in enumerate(servers) for r in rs]
        assert "not every replica serves t v000002" in str(e.value)
        with pytest.raises(roost.WaitTimeoutError, match="does not serve table other"):
            client.wait("other", "1", timeout=0.3)
        with pytest.raises(ValueError, match="is not a table version"):
            client.wait("t", "latest", timeout=1)


def test_wait_sees_a_new_version_arrive(cluster: Cluster) -> None:
    cluster.build("t", keys_and_values(100), shards=2)
    servers = [cluster.server(shard=s) for s in range(2)]
    with roost.Client([[s.address] for s in servers]) as client:
        client.wait("t", "1", timeout=30)
        # Published while wait() polls; the servers pick it up themselves.
        publisher = threading.Thread(
            target=cluster.build, args=("t", keys_and_values(120)), kwargs={"shards": 2})
        publisher.start()
        try:
            client.wait("t", "v000002", timeout=60)
        finally:
            publisher.join()
        assert client.get_many("t", [b"key00119"]) == [keys_and_values(120)[b"key00119"]]


def test_wait_names_an_unreachable_replica(cluster: Cluster, free_port: int) -> None:
    cluster.build("t", keys_and_values(100), shards=3)
    servers = [cluster.server(shard=s) for s in range(3)]
    dead = f"127.0.0.1:{free_port}"
    with roost.Client([[servers[0].address], [servers[1].address],
                       [servers[2].address, dead]]) as client:
        with pytest.raises(roost.WaitTimeoutError) as e:
            client.wait("t", "1", timeout=1)
        assert len(e.value.lagging) == 1 and e.value.lagging[0].startswith(
            f"shard 2 {dead}: UNAVAILABLE")


def test_wait_refuses_a_stale_layout_at_once(cluster: Cluster) -> None:
    cluster.build("t", keys_and_values(100), shards=3)
    servers = [cluster.server(shard=s) for s in range(3)]
    skip_unless_server_fills_versions(servers[0].address, "t", 0, 3)
    # Shard 0 of this 2-shard layout lists the servers of a 3-shard table.
    with roost.Client([[s.address for s in servers], [servers[1].address]]) as client:
        with pytest.raises(roost.StaleLayoutError,
                           match="of 3 of table t; the layout has 2 shards"):
            client.wait("t", "1", timeout=60)


def test_a_dns_name_stands_for_every_address_it_resolves_to(cluster: Cluster) -> None:
    import socket
    kvs = keys_and_values(200)
    cluster.build("t", kvs, shards=2)
    servers = [cluster.server(shard=s) for s in range(2)]
    port = servers[1].address.rsplit(":", 1)[1]
    # Shard 1 as a name (what a Kubernetes headless Service is).
    layout = [[servers[0].address], [f"dns:///localhost:{port}"]]
    resolved = sorted({i[4][0] for i in socket.getaddrinfo("localhost", int(port),
                                                           type=socket.SOCK_STREAM)})
    with roost.Client(layout, timeout=30) as client:
        keys = list(kvs)
        assert client.get_many("t", keys) == [kvs[k] for k in keys]
        if resolved == ["127.0.0.1"]:
            client.wait("t", "1", timeout=30)
        else:  # e.g. ::1 too, where no server listens: a replica that lags
            with pytest.raises(roost.WaitTimeoutError) as e:
                client.wait("t", "1", timeout=1)
            assert all("127.0.0.1" not in line for line in e.value.lagging)
