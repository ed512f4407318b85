"""roost.AsyncClient against real roost-servers: the same cases as the
sync client's (every key, misses and order, the empty batch, a stale
layout, a killed replica, a dead shard, partial answers, hedging, wait);
the sync client's partial answers are in tests/conformance."""

from __future__ import annotations

import asyncio
import random
import signal

import grpc
import pytest

import roost
from conftest import Cluster, keys_and_values


def run(coro: object) -> None:
    asyncio.run(coro)  # type: ignore[arg-type]


def test_every_key_misses_order_and_the_empty_batch(cluster: Cluster) -> None:
    kvs = keys_and_values(2000)
    cluster.build("t", kvs, shards=3)
    layout = [[cluster.server(shard=s).address, cluster.server(shard=s).address]
              for s in range(3)]

    async def main() -> None:
        async with roost.AsyncClient(layout, timeout=30) as client:
            keys = list(kvs)
            random.Random(3).shuffle(keys)
            result = await client.get_many_versioned("t", keys)
            assert result.values == [kvs[k] for k in keys]
            assert result.version in ("", "v000001")
            batch = keys[:50] + [b"missing"] * 3 + keys[:50][::-1]
            assert await client.get_many("t", batch) == [kvs.get(k) for k in batch]
            assert await client.get_many("t", []) == []
            values = await asyncio.gather(*(client.get("t", k) for k in keys[:200]))
            assert list(values) == [kvs[k] for k in keys[:200]]
            assert await client.get("t", b"missing") is None
            # str keys are their UTF-8 bytes, as in the sync client.
            text = [k for k in keys if k.isascii()][:20]
            str_keys = [k.decode() for k in text]
            assert await client.get_many("t", str_keys) == [kvs[k] for k in text]
            assert await client.get("t", str_keys[0]) == kvs[text[0]]
            assert (await client.get_versioned("t", str_keys[1]))[0] == kvs[text[1]]
            with pytest.raises(TypeError, match=r"^a key is bytes \(or str, sent as UTF-8\), "
                                                "not int$"):
                await client.get_many("t", [keys[0], 7])  # type: ignore[list-item]
            assert (await client.get_versioned("t", b"missing"))[0] is None
            with pytest.raises(roost.RoostError) as e:
                await client.get("nope", b"k")
            assert e.value.code == grpc.StatusCode.NOT_FOUND
        # In pieces of 70 keys, the later ones at once.
        async with roost.AsyncClient(layout, timeout=30, max_batch=70) as client:
            result = await client.get_many_versioned("t", keys)
            assert result.values == [kvs[k] for k in keys]
    run(main())


def test_a_stale_layout_names_the_shard(cluster: Cluster) -> None:
    kvs = keys_and_values(300)
    cluster.build("t", kvs, shards=3)
    layout = [[cluster.server(shard=0).address], [cluster.server(shard=1).address]]

    async def main() -> None:
        async with roost.AsyncClient(layout, timeout=30) as client:
            with pytest.raises(roost.StaleLayoutError) as e:
                await client.get_many("t", list(kvs))
            assert "of 3; this server serves shard" in str(e.value)
            assert e.value.code == grpc.StatusCode.FAILED_PRECONDITION
    run(main())


def test_a_killed_replica_costs_no_call_and_a_dead_shard_fails(cluster: Cluster) -> None:
    kvs = keys_and_values(2000)
    cluster.build("t", kvs, shards=2)
    replicas = [[cluster.server(shard=s), cluster.server(shard=s)] for s in range(2)]
    layout = [[r.address for r in rs] for rs in replicas]
    keys = list(kvs)

    async def main() -> None:
        async with roost.AsyncClient(layout, timeout=30) as client:
            calls = 0

            async def worker(i: int) -> None:
                nonlocal calls
                for n in range(60):
                    start = (i * 331 + n * 97) % len(keys)
                    batch = (keys[start:] + keys[:start])[:300]
                    assert await client.get_many("t", batch) == [kvs[k] for k in batch]
                    calls += 1
                    if i == 0 and n == 20:
                        replicas[0][0].kill()
            await asyncio.gather(*(worker(i) for i in range(3)))
            assert calls == 180
        replicas[0][1].kill()
        async with roost.AsyncClient(layout, timeout=1.5) as client:
            with pytest.raises(roost.RoostError) as e:
                await client.get_many("t", keys)
            assert e.value.code == grpc.StatusCode.UNAVAILABLE and e.value.shard == 0
            assert "no replica answered before the deadline" in str(e.value)
        # Partial answers: shard 1's keys answered, shard 0's marked, in
        # parts too (max_batch), and get_many raises what it cannot say.
        for max_batch in (10_000, 70):
            # Every part goes out at once: the live shard's answer while the
            # dead shard's retry until the deadline. (Each part read by
            # itself would leave the later ones no time: the dead shard
            # takes the whole deadline.)
            async with roost.AsyncClient(layout, timeout=5, partial=True,
                                         max_batch=max_batch) as client:
                result = await client.get_many_versioned("t", keys)
                down = {i for i, k in enumerate(keys) if roost.partition_of(k, 2) == 0}
                assert down and set(result.errors) == down
                assert all(e.code == grpc.StatusCode.UNAVAILABLE and e.shard == 0
                           for e in result.errors.values())
                assert result.values == [None if i in down else kvs[k]
                                         for i, k in enumerate(keys)]
                assert result.version == "v000001"
                with pytest.raises(roost.RoostError) as e:
                    await client.get_many("t", keys)
                assert e.value.shard == 0
                only_up = [k for i, k in enumerate(keys) if i not in down][:50]
                assert await client.get_many("t", only_up) == [kvs[k] for k in only_up]
        replicas[1][0].kill()
        replicas[1][1].kill()
        async with roost.AsyncClient(layout, timeout=1, partial=True) as client:
            with pytest.raises(roost.RoostError) as e:
                await client.get_many_versioned("t", keys)
            assert e.value.code == grpc.StatusCode.UNAVAILABLE
    run(main())


def test_hedging_answers_around_a_hung_replica(cluster: Cluster) -> None:
    kvs = keys_and_values(500)
    cluster.build("t", kvs, shards=1)
    replicas = [cluster.server(), cluster.server()]
    keys = list(kvs)

    async def main() -> None:
        async with roost.AsyncClient([[r.address for r in replicas]], timeout=60,
                                     hedge_after=0.05) as client:
            for _ in range(4):  # connected to both replicas
                assert await client.get_many("t", keys) == [kvs[k] for k in keys]
            replicas[1].process.send_signal(signal.SIGSTOP)
            try:
                for i in range(10):
                    batch = keys[i * 40:(i + 1) * 40]
                    assert await client.get_many("t", batch) == [kvs[k] for k in batch]
            finally:
                replicas[1].process.send_signal(signal.SIGCONT)
    run(main())


def test_wait(cluster: Cluster) -> None:
    cluster.build("t", keys_and_values(50), shards=2)
    layout = [[cluster.server(shard=s).address for _ in range(2)] for s in range(2)]

    async def main() -> None:
        async with roost.AsyncClient(layout) as client:
            await client.wait("t", "v000001", timeout=30)
            await client.wait("t", "1", timeout=30)
            with pytest.raises(roost.WaitTimeoutError) as e:
                await client.wait("t", "2", timeout=0.5)
            assert len(e.value.lagging) == 4
            assert "serves v000001" in str(e.value)
    run(main())


def test_coalesced_gets_leave_as_batches(cluster: Cluster) -> None:
    kvs = keys_and_values(1500)
    cluster.build("t", kvs, shards=3)
    layout = [[cluster.server(shard=s).address] for s in range(3)]

    async def main() -> None:
        async with roost.AsyncClient(layout, timeout=30, coalesce=True,
                                     coalesce_in_flight=2) as client:
            batches: list[int] = []
            send = client.get_many_versioned

            async def counted(table: str, keys: list[bytes], **kw: object) -> roost.BatchResult:
                batches.append(len(keys))
                return await send(table, keys, **kw)  # type: ignore[arg-type]
            client.get_many_versioned = counted  # type: ignore[method-assign]

            keys = list(kvs) + [b"missing-%d" % i for i in range(20)]
            random.Random(5).shuffle(keys)
            # One turn of the loop: one batch, every key in its place.
            values = await asyncio.gather(*(client.get("t", k) for k in keys))
            assert list(values) == [kvs.get(k) for k in keys]
            assert batches == [len(keys)]
            # Gets made while two batches are out wait and leave together.
            batches.clear()

            async def caller(i: int) -> None:
                for k in keys[i::50]:
                    assert await client.get("t", k) == kvs.get(k)
            await asyncio.gather(*(caller(i) for i in range(50)))
            assert sum(batches) == len(keys)
            assert len(batches) < len(keys) / 5
            value, version = await client.get_versioned("t", keys[0])
            assert value == kvs.get(keys[0]) and version in ("", "v000001")
            # A key of a wrong type fails its own get, not its batch; a str
            # key is its UTF-8.
            batches.clear()
            text = next(k for k in keys if k in kvs and k.isascii())
            mixed = await asyncio.gather(client.get("t", keys[0]), client.get("t", 7),  # type: ignore[arg-type]
                                         client.get("t", text.decode()), return_exceptions=True)
            assert mixed[0] == kvs.get(keys[0]) and mixed[2] == kvs[text]
            assert isinstance(mixed[1], TypeError) and "a key is bytes" in str(mixed[1])
            assert batches == [2]
            # A version or a timeout of its own: not coalesced.
            batches.clear()
            assert await client.get("t", keys[1], version="v000001") == kvs.get(keys[1])
            assert batches == []
            # An error reaches every get of its batch; other tables go on.
            results = await asyncio.gather(*(client.get("nope", k) for k in keys[:30]),
                                           return_exceptions=True)
            assert all(isinstance(r, roost.RoostError) and r.code == grpc.StatusCode.NOT_FOUND
                       for r in results)
            # A cancelled get leaves the others of its batch answered.
            tasks = [asyncio.ensure_future(client.get("t", k)) for k in keys[:40]]
            await asyncio.sleep(0)
            tasks[3].cancel()
            done = await asyncio.gather(*tasks, return_exceptions=True)
            assert isinstance(done[3], asyncio.CancelledError)
            assert [d for i, d in enumerate(done) if i != 3] == \
                [kvs.get(k) for i, k in enumerate(keys[:40]) if i != 3]
        with pytest.raises(ValueError):
            roost.AsyncClient(layout, coalesce=True, coalesce_in_flight=0)
    run(main())


def test_metrics_count_calls_keys_errors_and_retries(cluster: Cluster) -> None:
    import prometheus_client
    kvs = keys_and_values(50)
    cluster.build("t", kvs, shards=2)
    servers = [cluster.server(shard=s) for s in range(2)]
    layout = [[s.address] for s in servers]
    registry = prometheus_client.CollectorRegistry()
    metrics = roost.ClientMetrics(registry)
    keys = [k for k in kvs if k][:3]

    def value(name: str, **labels: str) -> float:
        got = registry.get_sample_value(name, labels)
        return 0.0 if got is None else got

    async def main() -> None:
        async with roost.AsyncClient(layout, timeout=3, metrics=metrics) as client:
            assert await client.get("t", keys[0]) == kvs[keys[0]]
            assert await client.get_many("t", keys) == [kvs[k] for k in keys]
            with pytest.raises(roost.RoostError):
                await client.get("nope", b"k")
            assert value("roost_client_requests_total", method="get") == 2
            assert value("roost_client_requests_total", method="multi_get") == 1
            assert value("roost_client_keys_total", method="multi_get") == 3
            assert value("roost_client_errors_total", method="get", code="NOT_FOUND") == 1
            assert value("roost_client_request_seconds_count", method="get") == 2
            assert value("roost_client_retries_total") == 0
            servers[0].kill()
            with pytest.raises(roost.RoostError) as e:
                await client.get_many("t", list(kvs))
            assert e.value.code == grpc.StatusCode.UNAVAILABLE
            assert value("roost_client_errors_total", method="multi_get",
                         code="UNAVAILABLE") == 1
            assert value("roost_client_retries_total") >= 1
            assert value("roost_client_version_switches_total") == 0
    run(main())
    # A second ClientMetrics in the same registry is refused by
    # prometheus_client (names are registered once); share the first.
    with pytest.raises(ValueError):
        roost.ClientMetrics(registry)
