"""Client metrics in Prometheus' Python client (prometheus_client), with the
names and meanings every roost client uses (tests/conformance/README.md,
"Client metrics"). One ClientMetrics may serve several clients; each metric
is registered once, in the registry given (prometheus_client's default
REGISTRY when none).

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


class _Timed:
    """One call being recorded: `with meter.timed(...) as call:` ...
    `call.answered(version)`; an exception leaving the block is recorded as
    the call's error."""

    def __init__(self, meter: Optional["CallMeter"], method: str, table: str, keys: int) -> None:
        self._meter = meter
        self._method, self._table, self._keys = method, table, keys
        self._version = ""
        self._partial: Optional[dict[int, Any]] = None
        self._start = 0.0

    def __enter__(self) -> "_Timed":
        self._start = time.monotonic()
        return self

    def answered(self, version: str, partial: Optional[dict[int, Any]] = None) -> None:
        self._version, self._partial = version, partial

    def __exit__(self, kind: Any, error: Optional[BaseException], tb: Any) -> None:
        if self._meter is not None:
            self._meter.call(self._method, self._table, self._keys,
                             time.monotonic() - self._start, error, self._version,
                             self._partial)


class _Untimed(_Timed):
    """What `timed` gives without a meter: no clock read, nothing kept."""

    def __init__(self) -> None:
        super().__init__(None, "", "", 0)

    def __enter__(self) -> "_Timed":
        return self

    def answered(self, version: str, partial: Optional[dict[int, Any]] = None) -> None:
        pass

    def __exit__(self, kind: Any, error: Optional[BaseException], tb: Any) -> None:
        pass


_UNTIMED = _Untimed()


def timed(meter: Optional[CallMeter], method: str, table: str, keys: int) -> _Timed:
    """A call of `method` to record in `meter` (None: recorded nowhere, at
    no cost but this call)."""
    return _UNTIMED if meter is None else _Timed(meter, method, table, keys)
