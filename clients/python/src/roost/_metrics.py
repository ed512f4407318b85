"""Client metrics in Prometheus' Python client (prometheus_client), with the
names and meanings every roost client uses (tests/conformance/README.md,
"Client metrics"). One ClientMetrics may serve several clients; each metric
is registered once, in the registry given (prometheus_client's default
REGISTRY when none). And OpenTelemetry spans (opentelemetry-api), one per
call, as the Go and Java clients make them: "roost.Get", "roost.MultiGet",
"roost.Scan", with the attributes roost.table, roost.keys, roost.version,
roost.failed_keys and rpc.grpc.status_code, and an error status.

Example:
    metrics = roost.ClientMetrics()            # registers roost_client_*
    client = roost.Client(shards, metrics=metrics)
    prometheus_client.start_http_server(9100)  # as the program exposes them
"""

from __future__ import annotations

import threading
import time
from typing import Any, Optional

from roost._versions import version_number

# Call times: 100 µs to 10 s.
_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
            0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class ClientMetrics:
    """The roost_client_* metrics of one registry (see the module comment).
    Needs prometheus_client (`pip install 'roost[metrics]'`, or Debian's
    python3-prometheus-client)."""

    def __init__(self, registry: Any = None) -> None:
        try:
            import prometheus_client
        except ImportError:
            raise ImportError("roost.ClientMetrics needs prometheus_client: "
                              "pip install 'roost[metrics]'") from None
        if registry is None:
            registry = prometheus_client.REGISTRY
        self.registry = registry
        counter, histogram = prometheus_client.Counter, prometheus_client.Histogram
        self.requests = counter("roost_client_requests", "Calls the application made",
                                ["method"], registry=registry)
        self.keys = counter("roost_client_keys", "Keys asked for", ["method"],
                            registry=registry)
        self.errors = counter("roost_client_errors", "Calls that ended in an error",
                              ["method", "code"], registry=registry)
        self.partial_keys = counter(
            "roost_client_partial_keys",
            "Keys that partial answers marked with their shard's error", ["code"],
            registry=registry)
        self.seconds = histogram("roost_client_request_seconds",
                                 "Each call's time, from the call to its answer or error",
                                 ["method"], buckets=_BUCKETS, registry=registry)
        self.hedges = counter("roost_client_hedges", "Hedged attempts sent",
                              registry=registry)
        self.retries = counter("roost_client_retries",
                               "Attempts sent again after a retryable failure",
                               registry=registry)
        self.version_switches = counter(
            "roost_client_version_switches",
            "Answers of a table from another version than the client's previous "
            "answer of it", registry=registry)


class CallMeter:
    """One client's use of a ClientMetrics: what it records of each call,
    and the version of each table's last answer (for version switches).
    Thread-safe."""

    def __init__(self, metrics: ClientMetrics) -> None:
        self.metrics = metrics
        self._versions: dict[str, str] = {}
        self._lock = threading.Lock()

    def call(self, method: str, table: str, keys: int, seconds: float,
             error: Optional[BaseException], version: str = "",
             partial: Optional[dict[int, Any]] = None) -> None:
        m = self.metrics
        m.requests.labels(method).inc()
        m.keys.labels(method).inc(keys)
        m.seconds.labels(method).observe(seconds)
        if error is not None:
            code = getattr(error, "code", None)
            m.errors.labels(method, code.name if code is not None else "UNKNOWN").inc()
        for e in (partial or {}).values():
            m.partial_keys.labels(e.code.name if e.code is not None else "UNKNOWN").inc()
        if version:
            with self._lock:
                last = self._versions.get(table)
                self._versions[table] = version
            if last is not None and last != version and _number(last) != _number(version):
                m.version_switches.inc()

    def attempts(self, hedges: int, retries: int) -> None:
        if hedges:
            self.metrics.hedges.inc(hedges)
        if retries:
            self.metrics.retries.inc(retries)


def _number(version: str) -> Optional[int]:
    try:
        return version_number(version)
    except ValueError:
        return None


def tracer_of(tracer_provider: Any) -> Any:
    """The client's tracer from an OpenTelemetry TracerProvider (needs
    opentelemetry-api: `pip install 'roost[tracing]'`)."""
    try:
        from opentelemetry import trace
    except ImportError:
        raise ImportError("tracer_provider needs opentelemetry-api: "
                          "pip install 'roost[tracing]'") from None
    from roost import __version__
    return trace.get_tracer("roost", __version__, tracer_provider=tracer_provider)


_SPAN_NAMES = {"get": "roost.Get", "multi_get": "roost.MultiGet", "scan": "roost.Scan"}


class _Timed:
    """One call being recorded: `with meter.timed(...) as call:` ...
    `call.answered(version)`; an exception leaving the block is recorded as
    the call's error. With a tracer, the call's span is current inside the
    block (gRPC's own instrumentation, if any, nests under it)."""

    def __init__(self, meter: Optional["CallMeter"], tracer: Any, method: str, table: str,
                 keys: int) -> None:
        self._meter, self._tracer = meter, tracer
        self._method, self._table, self._keys = method, table, keys
        self._version = ""
        self._partial: Optional[dict[int, Any]] = None
        self._start = 0.0
        self._span: Any = None
        self._current: Any = None

    def __enter__(self) -> "_Timed":
        self._start = time.monotonic()
        if self._tracer is not None:
            from opentelemetry import trace
            attributes: dict[str, Any] = {"roost.table": self._table}
            if self._method != "scan":
                attributes["roost.keys"] = self._keys
            self._span = self._tracer.start_span(_SPAN_NAMES[self._method],
                                                 kind=trace.SpanKind.CLIENT,
                                                 attributes=attributes)
            # The span's error is _end_span's to record, once.
            self._current = trace.use_span(self._span, end_on_exit=False,
                                           record_exception=False,
                                           set_status_on_exception=False)
            self._current.__enter__()
        return self

    def answered(self, version: str, partial: Optional[dict[int, Any]] = None) -> None:
        self._version, self._partial = version, partial

    def __exit__(self, kind: Any, error: Optional[BaseException], tb: Any) -> None:
        if self._meter is not None:
            self._meter.call(self._method, self._table, self._keys,
                             time.monotonic() - self._start, error, self._version,
                             self._partial)
        if self._span is not None:
            self._end_span(error)

    def _end_span(self, error: Optional[BaseException]) -> None:
        from opentelemetry.trace import Status, StatusCode
        span = self._span
        if self._version:
            span.set_attribute("roost.version", self._version)
        if self._partial:
            span.set_attribute("roost.failed_keys", len(self._partial))
        code = getattr(error, "code", None) if error is not None else None
        if error is None:
            span.set_attribute("rpc.grpc.status_code", 0)
        elif code is not None:
            span.set_attribute("rpc.grpc.status_code", code.value[0])
        if error is not None:
            span.record_exception(error)
            name = code.name if code is not None else type(error).__name__
            span.set_status(Status(StatusCode.ERROR, f"{name}: {error}"))
        self._current.__exit__(type(error) if error is not None else None, error,
                               error.__traceback__ if error is not None else None)
        span.end()


class _Untimed(_Timed):
    """What `timed` gives without a meter or tracer: no clock read, nothing
    kept."""

    def __init__(self) -> None:
        super().__init__(None, None, "", "", 0)

    def __enter__(self) -> "_Timed":
        return self

    def answered(self, version: str, partial: Optional[dict[int, Any]] = None) -> None:
        pass

    def __exit__(self, kind: Any, error: Optional[BaseException], tb: Any) -> None:
        pass


_UNTIMED = _Untimed()


def timed(meter: Optional[CallMeter], tracer: Any, method: str, table: str, keys: int) -> _Timed:
    """A call of `method` to record in `meter` and to trace with `tracer`
    (both None: recorded nowhere, at no cost but this call)."""
    if meter is None and tracer is None:
        return _UNTIMED
    return _Timed(meter, tracer, method, table, keys)
