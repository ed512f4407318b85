"""roost.Client: the routing client, synchronous.

Thread-safe: one Client serves many threads (gRPC channels are). A batch's
parts go out at once as gRPC futures, one MultiGet per shard, and are
waited for together; retries, hedges and the consistency algorithm run in
the calling thread.

Example:
    with roost.Client.from_layout_file("cluster.json") as client:
        client.get("users", b"user:42")            # b"..." or None
        batch = client.get_many_versioned("users", [b"a", b"b"])
        batch.values, batch.version                # [..., ...], "v000007"
"""

from __future__ import annotations

import concurrent.futures
import os
import queue
import threading
import time
from typing import Any, Callable, Mapping, Optional, Sequence

import grpc

from roost import _calls
from roost._attempts import Attempts, ShardReplicas
from roost._calls import BatchResult, ScanPart, ScanResult, ScoreResult
from roost._errors import RoostError
from roost._layout import Layout, TlsConfig
from roost._metrics import CallMeter, ClientMetrics, timed, tracer_of
from roost._partition import Key, Split, key_bytes, keys_bytes, part_shard, partition_of
from roost._rows import Schema, decode_rows, rows_to_table
from roost._versions import Failure, MonotonicReads, Outcome, Versioned, consistent_rounds
from roost._wait import WaitPlan
from roost.v1 import lookup_pb2


class _Replica:
    """One replica target: its channel and the method stubs on it."""

    def __init__(self, target: str, tls: Optional[TlsConfig],
                 credentials: Optional[grpc.ChannelCredentials]) -> None:
        self.target = target
        options = _calls.channel_options(target, tls)
        if credentials is None:
            self.channel = grpc.insecure_channel(target, options=options)
        else:
            self.channel = grpc.secure_channel(target, credentials, options=options)
        self.calls: dict[str, Any] = {}
        for method, (ser, de) in _calls.METHODS.items():
            make = self.channel.unary_stream if method == _calls.SCAN else self.channel.unary_unary
            self.calls[method] = make(method, request_serializer=ser, response_deserializer=de)


class _StreamAttempt:
    """A Scan attempt run in a worker thread, shaped like a grpc.Future."""

    def __init__(self, pool: concurrent.futures.ThreadPoolExecutor, call: Any,
                 request: Any, timeout: float, metadata: Any, shard: int) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._call: Any = None
        self._future = pool.submit(self._run, call, request, timeout, metadata, shard)

    def _run(self, call: Any, request: Any, timeout: float, metadata: Any, shard: int) -> ScanPart:
        stream = call(request, timeout=timeout, metadata=metadata)
        with self._lock:
            self._call = stream
            if self._cancelled:
                stream.cancel()
        part = ScanPart([], "", False)
        for message in stream:
            _calls.add_scan_message(part, message, shard)
        return part

    def add_done_callback(self, fn: Callable[[Any], None]) -> None:
        self._future.add_done_callback(lambda _: fn(self))

    def cancel(self) -> bool:
        with self._lock:
            self._cancelled = True
            if self._call is not None:
                self._call.cancel()
        return True

    def cancelled(self) -> bool:
        return self._cancelled

    def exception(self) -> Optional[BaseException]:
        return self._future.exception()

    def result(self) -> ScanPart:
        return self._future.result()


class Client:
    """The routing client of a roost cluster (see the package README).

    `shards[i]` lists shard i's replicas ("host:port" or a gRPC target such
    as "dns:///name:port"); `tls` turns TLS on (None: plaintext); `token` is
    sent as a bearer token; `timeout` is each call's deadline in seconds
    (default 10), covering its retries; `hedge_after` (seconds, None: off)
    sends a second attempt of a part to another replica when the first has
    not answered by then. `max_batch` is the servers' --max-batch (default
    10,000): a shard with more keys in a get_many gets them in several
    requests of at most that many, all sent at once and read from one
    version like any batch.
    `partial` (default False) turns partial answers on for
    get_many_versioned (see there). `monotonic` (default False) turns
    monotonic reads on: no call of a table answers from a version older
    than one this client answered a call of it from, unless that one was
    withdrawn (a rollback), and a new version is read once every shard
    heard from has shown it (calls that name a version are outside it;
    client/README.md in the repository, "Monotonic reads"). `metrics` (a
    roost.ClientMetrics) counts each get, get_many and scan in Prometheus'
    client, and `tracer_provider` (an OpenTelemetry TracerProvider) gives
    each of those calls a span (the README's "tracer_provider").
    """

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
    ) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be 1 or more")
        self.layout = Layout.from_shards(shards, tls)
        credentials = tls.credentials() if tls is not None else None
        self._shards = [ShardReplicas(i, r) for i, r in enumerate(self.layout.shards)]
        self._replicas = [[_Replica(t, tls, credentials) for t in r] for r in self.layout.shards]
        self._n = len(self._shards)
        self._metadata = _calls.metadata(token)
        self._timeout = timeout
        self._hedge_after = hedge_after
        self._max_batch = max_batch
        self._partial = partial
        self._monotonic = MonotonicReads() if monotonic else None
        self._meter = CallMeter(metrics) if metrics is not None else None
        self._tracer = tracer_of(tracer_provider) if tracer_provider is not None else None
        self._pool: Optional[concurrent.futures.ThreadPoolExecutor] = None
        self._pool_lock = threading.Lock()
        self._schemas = _calls.SchemaCache()

    @classmethod
    def from_layout_file(cls, path: str | os.PathLike[str], **kwargs: Any) -> "Client":
        """A client of the layout file `path` (its TLS included); kwargs as
        the constructor's."""
        layout = Layout.from_file(path)
        return cls([list(r) for r in layout.shards], tls=layout.tls, **kwargs)

    def close(self) -> None:
        for replicas in self._replicas:
            for r in replicas:
                r.channel.close()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def shard_count(self) -> int:
        return self._n

    def get(self, table: str, key: Key, *, timeout: Optional[float] = None,
            version: Optional[str] = None) -> Optional[bytes]:
        """The value of `key`, or None when the table lacks it."""
        return self.get_versioned(table, key, timeout=timeout, version=version)[0]

    def get_versioned(self, table: str, key: Key, *, timeout: Optional[float] = None,
                      version: Optional[str] = None) -> tuple[Optional[bytes], str]:
        """The value of `key` (None when missing) and the version that
        answered."""
        with timed(self._meter, self._tracer, "get", table, 1) as call:
            response = self._get(table, key_bytes(key), timeout, version)
            call.answered(response.version)
        return (response.value if response.found else None), response.version

    def get_many(self, table: str, keys: Sequence[Key], *,
                 timeout: Optional[float] = None,
                 version: Optional[str] = None) -> list[Optional[bytes]]:
        """The values of `keys` in request order (None for a missing key),
        all from one version of the table. With partial=True, a key whose
        shard could not answer raises its error here: get_many_versioned
        returns the others (BatchResult.errors)."""
        result = self.get_many_versioned(table, keys, timeout=timeout, version=version)
        result.raise_errors()
        return result.values

    def get_many_versioned(self, table: str, keys: Sequence[Key], *,
                           timeout: Optional[float] = None,
                           version: Optional[str] = None) -> BatchResult:
        """get_many, with the version that answered. `version` pins the
        batch to that version (FAILED_PRECONDITION: VersionUnavailableError
        when a shard no longer serves it). With partial=True, the keys of a
        shard that could not answer (every replica down, busy or slow until
        the deadline) are None in `values` and in `errors` with that shard's
        RoostError; the others come from one version. It raises only when
        no shard answered, or for any other failure (a stale layout, no
        such table)."""
        _calls.check_table(table)
        batch = keys_bytes(keys)
        with timed(self._meter, self._tracer, "multi_get", table, len(batch)) as call:
            result = self._batch(table, batch, self._deadline(timeout), version, (),
                                 self._partial)
            call.answered(result.version, result.errors)
        return result

    def get_rows(self, table: str, keys: Sequence[Key], fields: Optional[Sequence[str]] = None,
                 *, timeout: Optional[float] = None,
                 version: Optional[str] = None) -> list[Optional[dict[str, Any]]]:
        """The rows of `keys` of a table of rows (roost-load build --rows) as
        dicts of field name to value, in request order (None: the key is
        missing), all from one version. `fields` reads only those fields, in
        that order, projected on the server."""
        schema, result = self._rows(table, keys, fields, timeout, version)
        return decode_rows(schema, result.values)

    def get_rows_table(self, table: str, keys: Sequence[Key],
                       fields: Optional[Sequence[str]] = None, *,
                       timeout: Optional[float] = None, version: Optional[str] = None) -> Any:
        """get_rows as a pyarrow.Table: one column per field, one row per
        key (all null for a missing key). Needs pyarrow (the [batch] extra)."""
        schema, result = self._rows(table, keys, fields, timeout, version)
        return rows_to_table(schema, result.values)

    def score(self, table: str, keys: Sequence[Key], field: str, query: Sequence[float],
              similarity: str = "dot", top_k: int = 0, *, timeout: Optional[float] = None,
              version: Optional[str] = None) -> ScoreResult:
        """Scores the float32_list `field` of each key's row against `query`
        on the servers ("dot" product or "cosine" similarity); with top_k,
        only the best top_k keys (ScoreResult)."""
        _calls.check_table(table)
        message = _calls.score_message(field, query, similarity, top_k)
        batch = keys_bytes(keys)
        deadline = self._deadline(timeout)
        split, responses = self._batch_responses(table, batch, deadline, version, (),
                                                 message)
        scored = _calls.scores_of(split, len(batch), responses, top_k)
        scores, top = _calls.merge_scores(scored, len(batch), top_k)
        return ScoreResult(scores, top, _calls.common_version(list(responses.values())))

    def scan(self, table: str, *, start: Key = b"", end: Key = b"", prefix: Key = b"",
             limit: int = 0, timeout: Optional[float] = None,
             version: Optional[str] = None) -> ScanResult:
        """The entries of a block table from `start` (inclusive) to `end`
        (exclusive, b"": no bound) that begin with `prefix`, at most `limit`
        (0: the servers' --max-scan-keys per shard), in key order, merged
        over every shard, all from one version."""
        _calls.check_table(table)
        if limit < 0:
            raise ValueError("limit must be 0 (the servers' maximum) or more")
        bounds = key_bytes(start), key_bytes(end), key_bytes(prefix)

        def request(part: int, pinned: str) -> Any:
            return _calls.scan_request(table, *bounds, limit, pinned)

        with timed(self._meter, self._tracer, "scan", table, 0) as call:
            parts = self._consistent(table, _calls.SCAN, range(self._n), request,
                                     self._deadline(timeout), version)
            result = _calls.merge_scans(parts, limit)
            call.answered(result.version)
        return result

    def wait(self, table: str, version: str, timeout: float = 60.0,
             poll_interval: float = 0.2) -> None:
        """Returns when every replica of every shard serves `version` of
        `table` ("v000007" or "7"); WaitTimeoutError after `timeout`
        seconds, naming the replicas that do not."""
        plan = WaitPlan(self.layout, table, version, timeout)
        channels: dict[str, Any] = {}
        try:
            while True:
                calls = []
                for shard, target in plan.targets():
                    stub = channels.get(target)
                    if stub is None:
                        stub = channels[target] = self._list_tables_stub(target)
                    request = lookup_pb2.ListTablesRequest()
                    calls.append((shard, target, stub[1].future(
                        request, timeout=plan.call_timeout(), metadata=self._metadata)))
                for shard, target, future in calls:
                    try:
                        plan.answered(shard, target, future.result())
                    except grpc.RpcError as e:
                        plan.failed(shard, target, e.code(), e.details())
                if plan.done():
                    return
                time.sleep(plan.pause(poll_interval))
        finally:
            for channel, _ in channels.values():
                channel.close()

    # ---- internals ----

    def _shard_of(self, part: int) -> int:
        return part_shard(part, self._n)

    def _deadline(self, timeout: Optional[float]) -> float:
        return time.monotonic() + (self._timeout if timeout is None else timeout)

    def _batch(self, table: str, keys: Sequence[bytes], deadline: float,
               version: Optional[str], fields: Sequence[str] = (),
               partial: bool = False) -> BatchResult:
        """A batch, each shard's keys in parts of at most max_batch, all
        sent at once and read from one version."""
        split, responses = self._batch_responses(table, keys, deadline, version, fields,
                                               partial=partial)
        return _calls.reassemble_batch(split, len(keys), responses)

    def _batch_responses(self, table: str, keys: Sequence[bytes], deadline: float,
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

        return split, self._consistent(table, _calls.MULTI_GET, split.keys.keys(), request,
                                       deadline, version, partial)

    def _rows(self, table: str, keys: Sequence[Key], fields: Optional[Sequence[str]],
              timeout: Optional[float], version: Optional[str]) -> tuple[Schema, BatchResult]:
        """The rows of `keys` (bytes, None: missing) and the schema they are
        in: the answering version's, projected to `fields`."""
        _calls.check_table(table)
        names = _calls.check_fields(fields)
        batch = keys_bytes(keys)
        deadline = self._deadline(timeout)
        result = self._batch(table, batch, deadline, version, names)
        want = result.version or version or ""
        known, schema = self._schemas.get(table, want)
        if not known:
            served = self._learn_schemas(table, deadline)
            known, schema = self._schemas.get(table, want)
            if not known and served and version is None:
                # Mid-rollout, the replicas asked serve another version:
                # read the batch again from the one they serve.
                want = served[0]
                result = self._batch(table, batch, deadline, want, names)
                known, schema = self._schemas.get(table, want)
            if not known:
                raise RoostError(f"no replica of table {table!r} serves version "
                                 f"{want or '(any)'} to read its row schema from "
                                 f"(ListTables: {', '.join(served) or 'none'})")
        return _calls.row_schema(table, schema, want, names), result

    def _learn_schemas(self, table: str, deadline: float) -> list[str]:
        """Asks ListTables of each replica until one answers; the versions
        of `table` the replicas asked serve, their schemas cached."""
        served: list[str] = []
        last: Optional[grpc.RpcError] = None
        for replicas in self._replicas:
            for replica in replicas:
                try:
                    response = replica.calls[_calls.LIST_TABLES](
                        lookup_pb2.ListTablesRequest(),
                        timeout=max(0.001, deadline - time.monotonic()),
                        metadata=self._metadata)
                except grpc.RpcError as e:
                    last = e
                    continue
                served += [v for v in self._schemas.learn(table, response) if v not in served]
                if served:
                    return served
        if last is not None and not served:
            raise RoostError(f"ListTables, to read the row schema of table {table!r}: "
                             f"{last.code()} {last.details()}", last.code())
        return served

    def _list_tables_stub(self, target: str) -> tuple[Any, Any]:
        tls = self.layout.tls
        options = _calls.channel_options(target, tls)
        if tls is None:
            channel = grpc.insecure_channel(target, options=options)
        else:
            channel = grpc.secure_channel(target, tls.credentials(), options=options)
        ser, de = _calls.METHODS[_calls.LIST_TABLES]
        return channel, channel.unary_unary(_calls.LIST_TABLES, request_serializer=ser,
                                            response_deserializer=de)

    def _get(self, table: str, key: bytes, timeout: Optional[float],
             version: Optional[str]) -> Any:
        _calls.check_table(table)
        shard = partition_of(key, self._n)

        def request(part: int, pinned: str) -> Any:
            return lookup_pb2.GetRequest(table=table, key=key, version=pinned)

        return self._consistent(table, _calls.GET, [shard], request, self._deadline(timeout),
                                version)[shard]

    def _consistent(self, table: str, method: str, parts: Any, request: Callable[[int, str], Any],
                    deadline: float, pin: Optional[str], partial: bool = False) -> dict[int, Any]:
        monotonic = (self._monotonic, table) if self._monotonic is not None else None
        plan = consistent_rounds(parts, deadline, time.monotonic, _calls.raise_failure, pin,
                                 partial, monotonic, self._shard_of)
        round_ = next(plan)
        while True:
            if round_.delay:
                time.sleep(max(0.0, min(round_.delay, deadline - time.monotonic())))
            outcomes = self._run_round(method, round_.pins, request, deadline, partial)
            try:
                round_ = plan.send(outcomes)
            except StopIteration as done:
                result: dict[int, Any] = done.value
                return result

    def _run_round(self, method: str, pins: Mapping[int, str],
                   request: Callable[[int, str], Any], deadline: float,
                   partial: bool = False) -> dict[int, Outcome]:
        if len(pins) == 1 and self._hedge_after is None and method != _calls.SCAN:
            return self._run_blocking(method, pins, request, deadline, partial)
        attempts = Attempts(pins, self._shards, deadline, self._hedge_after, partial)
        ended: "queue.SimpleQueue[int]" = queue.SimpleQueue()
        handles: dict[int, tuple[Any, int, int]] = {}  # attempt: future, part, replica

        def issue(issues: Any) -> None:
            for it in issues:
                replica = self._replicas[self._shard_of(it.part)][it.replica]
                remaining = max(0.001, deadline - time.monotonic())
                req = request(it.part, attempts.version(it.part))
                call = replica.calls[method]
                if method == _calls.SCAN:
                    future: Any = _StreamAttempt(self._scan_pool(), call, req, remaining,
                                                 self._metadata, it.part)
                else:
                    future = call.future(req, timeout=remaining, metadata=self._metadata)
                handles[it.attempt] = (future, it.part, it.replica)
                future.add_done_callback(lambda _, a=it.attempt: ended.put(a))

        def cancel(ids: Sequence[int]) -> None:
            for a in ids:
                handle = handles.get(a)
                if handle is not None:
                    handle[0].cancel()

        try:
            issue(attempts.start(time.monotonic()))
            while not attempts.finished():
                wait = attempts.next_wakeup() - time.monotonic()
                try:
                    a = ended.get(timeout=max(0.0, wait)) if wait > 0 else ended.get_nowait()
                except queue.Empty:
                    more, stop = attempts.tick(time.monotonic())
                    cancel(stop)
                    issue(more)
                    continue
                future, part, replica = handles.pop(a)
                shard = self._shard_of(part)
                outcome = _outcome(future, shard, self._replicas[shard][replica].target)
                more, stop = attempts.done(a, outcome, time.monotonic())
                cancel(stop)
                issue(more)
        except BaseException:
            cancel(list(handles))
            raise
        if self._meter is not None:
            self._meter.attempts(attempts.hedges, attempts.retries)
        if attempts.fatal is not None:
            cancel(list(handles))
            _calls.raise_failure(attempts.fatal)
        return attempts.outcomes

    def _run_blocking(self, method: str, pins: Mapping[int, str],
                      request: Callable[[int, str], Any], deadline: float,
                      partial: bool = False) -> dict[int, Outcome]:
        """_run_round for one part and no hedging: one call at a time, each
        a blocking call in this thread. A gRPC future would start a thread
        to poll its channel whenever none of that channel's calls is in
        flight, which, measured, costs a get() more than its call does."""
        attempts = Attempts(pins, self._shards, deadline, None, partial)
        pending = attempts.start(time.monotonic())
        while not attempts.finished():
            if not pending:
                wait = attempts.next_wakeup() - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                pending, _ = attempts.tick(time.monotonic())
                continue
            it = pending.pop(0)
            replica = self._replicas[self._shard_of(it.part)][it.replica]
            req = request(it.part, attempts.version(it.part))
            remaining = max(0.001, deadline - time.monotonic())
            outcome: Outcome
            try:
                outcome = replica.calls[method](req, timeout=remaining, metadata=self._metadata)
            except grpc.RpcError as e:
                outcome = Failure(e.code(), e.details() or "", self._shard_of(it.part),
                                  replica.target)
            more, _ = attempts.done(it.attempt, outcome, time.monotonic())
            pending += more
        if self._meter is not None:
            self._meter.attempts(attempts.hedges, attempts.retries)
        if attempts.fatal is not None:
            _calls.raise_failure(attempts.fatal)
        return attempts.outcomes

    def _scan_pool(self) -> concurrent.futures.ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(
                    max_workers=min(64, 2 * self._n + 2), thread_name_prefix="roost-scan")
            return self._pool


def _outcome(future: Any, shard: int, target: str) -> Optional[Outcome]:
    if future.cancelled():
        return None
    error = future.exception()
    if error is None:
        result: Versioned = future.result()
        return result
    if isinstance(error, grpc.RpcError):
        code = error.code()
        details = error.details() or ""
        return Failure(code, details, shard, target)
    raise error


__all__ = ["Client", "BatchResult", "ScanResult"]
