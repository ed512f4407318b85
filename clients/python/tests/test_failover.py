"""Replicas failing under load: a SIGKILLed replica costs no failed call
(its parts are retried on the other replica), a restarted one is used
again, and hedging answers around a replica that hangs (SIGSTOP)."""

from __future__ import annotations

import signal
import threading

import grpc
import pytest

import roost
from conftest import Cluster, Server, keys_and_values, wait_for


class Load:
    """Threads calling get_many in a loop, checking every value, counting
    calls and failures; stopped by stop()."""

    def __init__(self, client: roost.Client, kvs: dict[bytes, bytes], threads: int = 3) -> None:
        self.client = client
        self.keys = list(kvs)
        self.kvs = kvs
        self.calls = 0
        self.failures: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i,)) for i in range(threads)]
        for t in self._threads:
            t.start()

    def _run(self, i: int) -> None:
        n = 0
        while not self._stop.is_set():
            start = (i * 997 + n * 331) % len(self.keys)
            batch = (self.keys[start:] + self.keys[:start])[:400]
            n += 1
            try:
                values = self.client.get_many("t", batch)
                if values != [self.kvs[k] for k in batch]:
                    raise AssertionError("wrong values")
            except Exception as e:  # every failure is the test's finding
                with self._lock:
                    self.failures.append(f"{type(e).__name__}: {e}")
            with self._lock:
                self.calls += 1

    def wait_calls(self, more: int) -> None:
        with self._lock:
            target = self.calls + more
        wait_for(lambda: self.calls >= target, f"{more} more calls")

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join()


def test_a_killed_replica_costs_no_call_and_a_restarted_one_serves_again(
        cluster: Cluster) -> None:
    kvs = keys_and_values(3000)
    cluster.build("t", kvs, shards=3)
    replicas = [[cluster.server(shard=s), cluster.server(shard=s)] for s in range(3)]
    client = roost.Client([[r.address for r in rs] for rs in replicas], timeout=30)
    load = Load(client, kvs)
    try:
        load.wait_calls(30)
        victim = replicas[1][0]
        victim.kill()
        load.wait_calls(100)
        # The same address again: the client goes back to it once it is up.
        replicas[1][0] = cluster.server(shard=1, listen=victim.address)
        load.wait_calls(30)
        # Now the other replica of shard 1 dies: the restarted one answers.
        replicas[1][1].kill()
        load.wait_calls(100)
    finally:
        load.stop()
        client.close()
    assert load.failures == [], load.failures[:5]
    assert load.calls >= 260


def test_hedging_answers_around_a_hung_replica(cluster: Cluster) -> None:
    kvs = keys_and_values(1000)
    cluster.build("t", kvs, shards=2)
    replicas = [[cluster.server(shard=s), cluster.server(shard=s)] for s in range(2)]
    hung: Server = replicas[0][1]
    layout = [[r.address for r in rs] for rs in replicas]
    hedged = roost.Client(layout, timeout=60, hedge_after=0.05)
    plain = roost.Client(layout, timeout=1)
    keys = list(kvs)
    for client in (hedged, plain):  # connected to every replica (round robin)
        for _ in range(4):
            assert client.get_many("t", keys) == [kvs[k] for k in keys]
    # A hung process keeps its connections open and answers nothing: a
    # call there waits until its deadline, a new connection fails at once.
    hung.process.send_signal(signal.SIGSTOP)
    try:
        # Half of shard 0's first attempts go to the hung replica; each is
        # hedged to the live one, which answers.
        for i in range(20):
            batch = keys[i * 50:(i + 1) * 50]
            assert hedged.get_many("t", batch) == [kvs[k] for k in batch]
            assert hedged.get("t", keys[i]) == kvs[keys[i]]
        # Without hedging, the first call that meets the hung replica
        # waits out its deadline.
        with pytest.raises(roost.RoostError) as e:
            for _ in range(4):
                plain.get_many("t", keys)
        assert e.value.code == grpc.StatusCode.DEADLINE_EXCEEDED, e.value
        assert e.value.shard == 0
    finally:
        hung.process.send_signal(signal.SIGCONT)
        hedged.close()
        plain.close()


def test_a_partial_batch_in_parts_answers_the_live_shard_while_the_dead_one_retries(
        cluster: Cluster) -> None:
    # Each shard's keys go in parts of at most max_batch, all in one round:
    # the live shard's parts answer at once while the dead shard's retry
    # until the deadline (before, the batch went in pieces one after the
    # other, and the first piece's dead shard took the whole deadline from
    # the others). The servers take at most 70 keys a call, so a part that
    # was too big would fail INVALID_ARGUMENT, not be marked.
    kvs = keys_and_values(2000)
    cluster.build("t", kvs, shards=2)
    servers = [cluster.server(shard=s, extra=["--max-batch", "70"]) for s in range(2)]
    keys = list(kvs)
    servers[0].kill()
    down = {i for i, k in enumerate(keys) if roost.partition_of(k, 2) == 0}
    with roost.Client([[s.address] for s in servers], timeout=5, partial=True,
                      max_batch=70) as client:
        result = client.get_many_versioned("t", keys)
        assert down and set(result.errors) == down
        assert all(e.code == grpc.StatusCode.UNAVAILABLE and e.shard == 0
                   for e in result.errors.values())
        assert result.values == [None if i in down else kvs[k] for i, k in enumerate(keys)]
        assert result.version == "v000001"
