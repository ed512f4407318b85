"""roost.AsyncClient: the routing client on asyncio (grpc.aio).

The same API and behaviour as roost.Client, as coroutines: a batch's parts
are tasks awaited together, retries and hedges are tasks too. Make it, use
it and close it inside one running event loop.

With `coalesce=True`, concurrent get() calls (those that name neither a
version nor a timeout) leave together as get_many batches: the gets of one
event-loop turn go as one batch, and while `coalesce_in_flight` batches of
a table are out, later gets wait for one of them to answer and then go
together. No timer: a get waits at most for one batch already in flight.

Example:
    async with roost.AsyncClient.from_layout_file("cluster.json") as client:
        value = await client.get("users", b"user:42")
        batch = await client.get_many_versioned("users", keys)
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any, Callable, Mapping, Optional, Sequence

import grpc
import grpc.aio

from roost import _calls
from roost._attempts import Attempts, ShardReplicas
from roost._calls import BatchResult, ScanPart, ScanResult, ScoreResult
from roost._errors import RoostError
from roost._layout import Layout, TlsConfig
from roost._metrics import CallMeter, ClientMetrics, timed, tracer_of
from roost._partition import Key, Split, key_bytes, keys_bytes, part_shard, partition_of
from roost._rows import Schema, decode_rows, rows_to_table
from roost._versions import Failure, MonotonicReads, Outcome, consistent_rounds
from roost._wait import WaitPlan
from roost.v1 import lookup_pb2


def _channel(target: str, tls: Optional[TlsConfig],
             credentials: Optional[grpc.ChannelCredentials]) -> Any:
    options = _calls.channel_options(target, tls)
    if credentials is None:
        return grpc.aio.insecure_channel(target, options=options)
    return grpc.aio.secure_channel(target, credentials, options=options)


class _Replica:
    def __init__(self, target: str, tls: Optional[TlsConfig],
                 credentials: Optional[grpc.ChannelCredentials]) -> None:
        self.target = target
        self.channel = _channel(target, tls, credentials)
        self.calls: dict[str, Any] = {}
        for method, (ser, de) in _calls.METHODS.items():
            make = self.channel.unary_stream if method == _calls.SCAN else self.channel.unary_unary
            self.calls[method] = make(method, request_serializer=ser, response_deserializer=de)


class AsyncClient:
    """roost.Client's asyncio twin: the same arguments, the same methods as
    coroutines (see roost.Client); and `coalesce` (default False), which
    sends concurrent get() calls as get_many batches, at most
    `coalesce_in_flight` (default 4) batches of a table out at once (see
    the module's docstring)."""

    def __init__(
        self,
        shards: Sequence[Sequence[str]],
        *,
        tls: Optional[TlsConfig] = None,
        token: Optional[str] = None,
        timeout: float = _calls.DEFAULT_TIMEOUT,
        hedge_after: Optional[float] = None,
        max_batch: int = _calls.DEFAULT_MAX_BATCH,
        partial: bool = False,
        monotonic: bool = False,
        metrics: Optional[ClientMetrics] = None,
        tracer_provider: Any = None,
        coalesce: bool = False,
        coalesce_in_flight: int = 4,
    ) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be 1 or more")
        if coalesce_in_flight < 1:
            raise ValueError("coalesce_in_flight must be 1 or more")
        self.layout = Layout.from_shards(shards, tls)
        self._credentials = tls.credentials() if tls is not None else None
        self._shards = [ShardReplicas(i, r) for i, r in enumerate(self.layout.shards)]
        self._replicas = [[_Replica(t, tls, self._credentials) for t in r]
                          for r in self.layout.shards]
        self._n = len(self._shards)
        self._metadata = _calls.metadata(token)
        self._timeout = timeout
        self._hedge_after = hedge_after
        self._max_batch = max_batch
        self._partial = partial
        self._monotonic = MonotonicReads() if monotonic else None
        self._meter = CallMeter(metrics) if metrics is not None else None
        self._tracer = tracer_of(tracer_provider) if tracer_provider is not None else None
        self._coalescer = _Coalescer(self, coalesce_in_flight) if coalesce else None
        self._schemas = _calls.SchemaCache()

    @classmethod
    def from_layout_file(cls, path: str | os.PathLike[str], **kwargs: Any) -> "AsyncClient":
        layout = Layout.from_file(path)
        return cls([list(r) for r in layout.shards], tls=layout.tls, **kwargs)

    async def close(self) -> None:
        for replicas in self._replicas:
            for r in replicas:
                await r.channel.close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def shard_count(self) -> int:
        return self._n

    async def get(self, table: str, key: Key, *, timeout: Optional[float] = None,
                  version: Optional[str] = None) -> Optional[bytes]:
        return (await self.get_versioned(table, key, timeout=timeout, version=version))[0]

    async def get_versioned(self, table: str, key: Key, *, timeout: Optional[float] = None,
                            version: Optional[str] = None) -> tuple[Optional[bytes], str]:
        with timed(self._meter, self._tracer, "get", table, 1) as call:
            if self._coalescer is not None and timeout is None and version is None:
                value, answered = await self._coalescer.get(table, key_bytes(key))
            else:
                response = await self._get(table, key_bytes(key), timeout, version)
                value = response.value if response.found else None
                answered = response.version
            call.answered(answered)
        return value, answered

    async def get_many(self, table: str, keys: Sequence[Key], *,
                       timeout: Optional[float] = None,
                       version: Optional[str] = None) -> list[Optional[bytes]]:
        result = await self.get_many_versioned(table, keys, timeout=timeout, version=version)
        result.raise_errors()
        return result.values

    async def get_many_versioned(self, table: str, keys: Sequence[Key], *,
                                 timeout: Optional[float] = None,
                                 version: Optional[str] = None) -> BatchResult:
        _calls.check_table(table)
        batch = keys_bytes(keys)
        with timed(self._meter, self._tracer, "multi_get", table, len(batch)) as call:
            result = await self._batch(table, batch, self._deadline(timeout), version, (),
                                       self._partial)
            call.answered(result.version, result.errors)
        return result

    async def get_rows(self, table: str, keys: Sequence[Key],
                       fields: Optional[Sequence[str]] = None, *,
                       timeout: Optional[float] = None,
                       version: Optional[str] = None) -> list[Optional[dict[str, Any]]]:
        schema, result = await self._rows(table, keys, fields, timeout, version)
        return decode_rows(schema, result.values)

    async def get_rows_table(self, table: str, keys: Sequence[Key],
                             fields: Optional[Sequence[str]] = None, *,
                             timeout: Optional[float] = None,
                             version: Optional[str] = None) -> Any:
        schema, result = await self._rows(table, keys, fields, timeout, version)
        return rows_to_table(schema, result.values)

    async def score(self, table: str, keys: Sequence[Key], field: str,
                    query: Sequence[float], similarity: str = "dot", top_k: int = 0, *,
                    timeout: Optional[float] = None,
                    version: Optional[str] = None) -> ScoreResult:
        _calls.check_table(table)
        message = _calls.score_message(field, query, similarity, top_k)
        batch = keys_bytes(keys)
        deadline = self._deadline(timeout)
        split, responses = await self._batch_responses(table, batch, deadline, version, (),
                                                       message)
        scored = _calls.scores_of(split, len(batch), responses, top_k)
        scores, top = _calls.merge_scores(scored, len(batch), top_k)
        return ScoreResult(scores, top, _calls.common_version(list(responses.values())))

    async def scan(self, table: str, *, start: Key = b"", end: Key = b"",
                   prefix: Key = b"", limit: int = 0, timeout: Optional[float] = None,
                   version: Optional[str] = None) -> ScanResult:
        _calls.check_table(table)
        if limit < 0:
            raise ValueError("limit must be 0 (the servers' maximum) or more")
        bounds = key_bytes(start), key_bytes(end), key_bytes(prefix)

        def request(part: int, pinned: str) -> Any:
            return _calls.scan_request(table, *bounds, limit, pinned)

        with timed(self._meter, self._tracer, "scan", table, 0) as call:
            parts = await self._consistent(table, _calls.SCAN, range(self._n), request,
                                           self._deadline(timeout), version)
            result = _calls.merge_scans(parts, limit)
            call.answered(result.version)
        return result

    async def wait(self, table: str, version: str, timeout: float = 60.0,
                   poll_interval: float = 0.2) -> None:
        plan = WaitPlan(self.layout, table, version, timeout)
        channels: dict[str, Any] = {}
        ser, de = _calls.METHODS[_calls.LIST_TABLES]

        async def ask(shard: int, target: str, call: Any) -> None:
            try:
                response = await call(lookup_pb2.ListTablesRequest(),
                                      timeout=plan.call_timeout(), metadata=self._metadata)
            except grpc.aio.AioRpcError as e:
                plan.failed(shard, target, e.code(), e.details() or "")
                return
            plan.answered(shard, target, response)

        try:
            while True:
                asks = []
                for shard, target in await asyncio.to_thread(plan.targets):
                    channel = channels.get(target)
                    if channel is None:
                        channel = channels[target] = _channel(
                            target, self.layout.tls, self._credentials)
                    call = channel.unary_unary(_calls.LIST_TABLES, request_serializer=ser,
                                               response_deserializer=de)
                    asks.append(ask(shard, target, call))
                await asyncio.gather(*asks)
                if plan.done():
                    return
                await asyncio.sleep(plan.pause(poll_interval))
        finally:
            for channel in channels.values():
                await channel.close()

    # ---- internals ----

    def _shard_of(self, part: int) -> int:
        return part_shard(part, self._n)

    def _deadline(self, timeout: Optional[float]) -> float:
        return time.monotonic() + (self._timeout if timeout is None else timeout)

    async def _batch(self, table: str, keys: Sequence[bytes], deadline: float,
                     version: Optional[str], fields: Sequence[str] = (),
                     partial: bool = False) -> BatchResult:
        """A batch, each shard's keys in parts of at most max_batch, all
        sent at once and read from one version."""
        split, responses = await self._batch_responses(table, keys, deadline, version, fields,
                                                     partial=partial)
        return _calls.reassemble_batch(split, len(keys), responses)

    async def _batch_responses(self, table: str, keys: Sequence[bytes], deadline: float,
                               version: Optional[str], fields: Sequence[str] = (),
                               score: Any = None,
                               partial: bool = False) -> tuple[Split, dict[int, Any]]:
        split = Split(keys, self._n, self._max_batch)
        if not split.keys:
            return split, {}
        requests: dict[str, dict[int, Any]] = {}

        def request(part: int, pinned: str) -> Any:
            by_version = requests.get(pinned)
            if by_version is None:
                by_version = requests[pinned] = _calls.multi_get_requests(
                    table, split, pinned, fields, score)
            return by_version[part]

        return split, await self._consistent(table, _calls.MULTI_GET, split.keys.keys(), request,
                                             deadline, version, partial)

    async def _rows(self, table: str, keys: Sequence[Key], fields: Optional[Sequence[str]],
                    timeout: Optional[float],
                    version: Optional[str]) -> tuple[Schema, BatchResult]:
        """As Client._rows."""
        _calls.check_table(table)
        names = _calls.check_fields(fields)
        batch = keys_bytes(keys)
        deadline = self._deadline(timeout)
        result = await self._batch(table, batch, deadline, version, names)
        want = result.version or version or ""
        known, schema = self._schemas.get(table, want)
        if not known:
            served = await self._learn_schemas(table, deadline)
            known, schema = self._schemas.get(table, want)
            if not known and served and version is None:
                want = served[0]
                result = await self._batch(table, batch, deadline, want, names)
                known, schema = self._schemas.get(table, want)
            if not known:
                raise RoostError(f"no replica of table {table!r} serves version "
                                 f"{want or '(any)'} to read its row schema from "
                                 f"(ListTables: {', '.join(served) or 'none'})")
        return _calls.row_schema(table, schema, want, names), result

    async def _learn_schemas(self, table: str, deadline: float) -> list[str]:
        served: list[str] = []
        last: Optional[grpc.aio.AioRpcError] = None
        for replicas in self._replicas:
            for replica in replicas:
                try:
                    response = await replica.calls[_calls.LIST_TABLES](
                        lookup_pb2.ListTablesRequest(),
                        timeout=max(0.001, deadline - time.monotonic()),
                        metadata=self._metadata)
                except grpc.aio.AioRpcError as e:
                    last = e
                    continue
                served += [v for v in self._schemas.learn(table, response) if v not in served]
                if served:
                    return served
        if last is not None and not served:
            raise RoostError(f"ListTables, to read the row schema of table {table!r}: "
                             f"{last.code()} {last.details()}", last.code())
        return served

    async def _get(self, table: str, key: bytes, timeout: Optional[float],
                   version: Optional[str]) -> Any:
        _calls.check_table(table)
        shard = partition_of(key, self._n)

        def request(part: int, pinned: str) -> Any:
            return lookup_pb2.GetRequest(table=table, key=key, version=pinned)

        return (await self._consistent(table, _calls.GET, [shard], request,
                                       self._deadline(timeout), version))[shard]

    async def _consistent(self, table: str, method: str, parts: Any, request: Callable[[int, str], Any],
                          deadline: float, pin: Optional[str],
                          partial: bool = False) -> dict[int, Any]:
        monotonic = (self._monotonic, table) if self._monotonic is not None else None
        plan = consistent_rounds(parts, deadline, time.monotonic, _calls.raise_failure, pin,
                                 partial, monotonic, self._shard_of)
        round_ = next(plan)
        while True:
            if round_.delay:
                await asyncio.sleep(max(0.0, min(round_.delay, deadline - time.monotonic())))
            outcomes = await self._run_round(method, round_.pins, request, deadline, partial)
            try:
                round_ = plan.send(outcomes)
            except StopIteration as done:
                result: dict[int, Any] = done.value
                return result

    async def _attempt(self, method: str, replica: _Replica, request: Any, timeout: float,
                       part: int) -> Any:
        call = replica.calls[method]
        if method != _calls.SCAN:
            return await call(request, timeout=timeout, metadata=self._metadata)
        scan = ScanPart([], "", False)
        async for message in call(request, timeout=timeout, metadata=self._metadata):
            _calls.add_scan_message(scan, message, part)
        return scan

    async def _run_round(self, method: str, pins: Mapping[int, str],
                         request: Callable[[int, str], Any],
                         deadline: float, partial: bool = False) -> dict[int, Outcome]:
        attempts = Attempts(pins, self._shards, deadline, self._hedge_after, partial)
        tasks: dict[asyncio.Task[Any], tuple[int, int, int]] = {}  # attempt, part, replica

        def issue(issues: Any) -> None:
            for it in issues:
                replica = self._replicas[self._shard_of(it.part)][it.replica]
                remaining = max(0.001, deadline - time.monotonic())
                req = request(it.part, attempts.version(it.part))
                task = asyncio.ensure_future(
                    self._attempt(method, replica, req, remaining, it.part))
                tasks[task] = (it.attempt, it.part, it.replica)

        def cancel(ids: Sequence[int]) -> None:
            if not ids:
                return
            index = {a: t for t, (a, _, _) in tasks.items()}
            for a in ids:
                task = index.get(a)
                if task is not None:
                    task.cancel()
                    del tasks[task]

        try:
            issue(attempts.start(time.monotonic()))
            while not attempts.finished():
                wait = max(0.0, attempts.next_wakeup() - time.monotonic())
                if tasks:
                    done, _ = await asyncio.wait(list(tasks), timeout=wait,
                                                 return_when=asyncio.FIRST_COMPLETED)
                else:  # only retries after a backoff are left
                    await asyncio.sleep(wait)
                    done = set()
                if not done:
                    more, stop = attempts.tick(time.monotonic())
                    cancel(stop)
                    issue(more)
                    continue
                for task in done:
                    where = tasks.pop(task, None)
                    if where is None:
                        continue
                    attempt, part, replica = where
                    shard = self._shard_of(part)
                    outcome = _outcome(task, shard, self._replicas[shard][replica].target)
                    more, stop = attempts.done(attempt, outcome, time.monotonic())
                    cancel(stop)
                    issue(more)
        finally:
            for task in tasks:
                task.cancel()
        if self._meter is not None:
            self._meter.attempts(attempts.hedges, attempts.retries)
        if attempts.fatal is not None:
            _calls.raise_failure(attempts.fatal)
        return attempts.outcomes


class _Coalescer:
    """Concurrent gets of a table sent as get_many batches (see the module's
    docstring). Each batch is an ordinary get_many_versioned: split by
    shard, retried, hedged and read from one version like any other; its
    error, if it fails, goes to each of its gets."""

    def __init__(self, client: AsyncClient, max_in_flight: int) -> None:
        self._client = client
        self._max_in_flight = max_in_flight
        self._queued: dict[str, list[tuple[bytes, "asyncio.Future[Any]"]]] = {}
        self._in_flight: dict[str, int] = {}
        self._scheduled: set[str] = set()

    async def get(self, table: str, key: bytes) -> tuple[Optional[bytes], str]:
        _calls.check_table(table)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._queued.setdefault(table, []).append((key, future))
        # Sent at the end of this turn of the loop, so that the gets made in
        # it (a gather, say) go together; or when a batch in flight answers.
        if self._in_flight.get(table, 0) < self._max_in_flight and table not in self._scheduled:
            self._scheduled.add(table)
            loop.call_soon(self._flush, table)
        result: tuple[Optional[bytes], str] = await future
        return result

    def _flush(self, table: str) -> None:
        self._scheduled.discard(table)
        queue = self._queued.get(table)
        while queue and self._in_flight.get(table, 0) < self._max_in_flight:
            batch = queue[:self._client._max_batch]
            del queue[:self._client._max_batch]
            self._in_flight[table] = self._in_flight.get(table, 0) + 1
            asyncio.ensure_future(self._send(table, batch))
        if not queue:
            self._queued.pop(table, None)

    async def _send(self, table: str, batch: list[tuple[bytes, "asyncio.Future[Any]"]]) -> None:
        try:
            result = await self._client.get_many_versioned(table, [key for key, _ in batch])
        except asyncio.CancelledError:
            for _, future in batch:
                future.cancel()
            raise
        except Exception as e:
            for _, future in batch:
                if not future.done():
                    future.set_exception(e)
        else:
            for (_, future), value in zip(batch, result.values):
                if not future.done():  # not cancelled by its caller
                    future.set_result((value, result.version))
        finally:
            self._in_flight[table] -= 1
            self._flush(table)


def _outcome(task: "asyncio.Task[Any]", shard: int, target: str) -> Optional[Outcome]:
    if task.cancelled():
        return None
    error = task.exception()
    if error is None:
        result: Outcome = task.result()
        return result
    if isinstance(error, grpc.aio.AioRpcError):
        return Failure(error.code(), error.details() or "", shard, target)
    raise error
