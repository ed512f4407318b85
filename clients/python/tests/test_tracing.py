"""OpenTelemetry spans of the client (tracer_provider=...): one CLIENT span
per get, get_many and scan, named and given attributes as the Go and Java
clients' are, and an error status with the gRPC code; the call's span is
current while it runs; nothing without a tracer provider. Against real
roost-servers. Needs opentelemetry-api (the [tracing] extra); the spans are
recorded by a TracerProvider written here against that API alone (the SDK
is not needed)."""

from __future__ import annotations

import asyncio
from typing import Any, Iterator, Optional, Sequence

import grpc
import pytest

trace = pytest.importorskip("opentelemetry.trace")

import roost  # noqa: E402
from conftest import Cluster, keys_and_values  # noqa: E402


class Recorded(trace.NonRecordingSpan):  # type: ignore[misc]
    """A span that keeps what the client tells it."""

    def __init__(self, name: str, kind: Any, attributes: dict[str, Any], parent: Any) -> None:
        super().__init__(trace.INVALID_SPAN_CONTEXT)
        self.name, self.kind, self.parent = name, kind, parent
        self.attributes = dict(attributes)
        self.status: Any = None
        self.exceptions: list[BaseException] = []
        self.ended = False
        self.current_inside = False

    def is_recording(self) -> bool:
        return True

    def set_attribute(self, key: str, value: Any) -> None:
        self.attributes[key] = value

    def set_status(self, status: Any, description: Optional[str] = None) -> None:
        self.status = status

    def record_exception(self, exception: BaseException, *args: Any, **kwargs: Any) -> None:
        self.exceptions.append(exception)

    def end(self, end_time: Optional[int] = None) -> None:
        self.ended = True


class Tracer(trace.Tracer):  # type: ignore[misc]
    def __init__(self, spans: list[Recorded]) -> None:
        self.spans = spans

    def start_span(self, name: str, context: Any = None, kind: Any = trace.SpanKind.INTERNAL,
                   attributes: Any = None, *args: Any, **kwargs: Any) -> Recorded:
        span = Recorded(name, kind, attributes or {}, trace.get_current_span(context))
        self.spans.append(span)
        return span

    def start_as_current_span(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        raise AssertionError("the client starts its spans with start_span")


class Provider(trace.TracerProvider):  # type: ignore[misc]
    def __init__(self) -> None:
        self.spans: list[Recorded] = []
        self.scopes: list[str] = []

    def get_tracer(self, name: str, *args: Any, **kwargs: Any) -> Tracer:
        self.scopes.append(name)
        return Tracer(self.spans)


def by_name(spans: Sequence[Recorded], name: str) -> list[Recorded]:
    return [s for s in spans if s.name == name]


@pytest.fixture
def layout(cluster: Cluster) -> list[list[str]]:
    kvs = keys_and_values(200)
    cluster.build("t", kvs, shards=2, fmt="block")
    return [[cluster.server(shard=s).address] for s in range(2)]


def test_a_span_per_call_with_its_attributes(layout: list[list[str]]) -> None:
    provider = Provider()
    keys = list(keys_and_values(200))
    with roost.Client(layout, tracer_provider=provider) as client:
        outer = Recorded("app", trace.SpanKind.INTERNAL, {}, None)
        with trace.use_span(outer, end_on_exit=False):
            client.get("t", keys[0])
        client.get_many("t", keys[:50])
        client.scan("t", prefix=b"")
        with pytest.raises(roost.RoostError):
            client.get("no_such_table", b"k")
    assert provider.scopes == ["roost"]
    assert [s.name for s in provider.spans] == ["roost.Get", "roost.MultiGet", "roost.Scan",
                                               "roost.Get"]
    get, multi, scan, failed = provider.spans
    assert all(s.ended and s.kind == trace.SpanKind.CLIENT for s in provider.spans)
    # A child of the application's span current at the call.
    assert get.parent is outer
    assert get.attributes == {"roost.table": "t", "roost.keys": 1, "roost.version": "v000001",
                              "rpc.grpc.status_code": 0}
    assert multi.attributes["roost.keys"] == 50 and multi.attributes["roost.version"] == "v000001"
    assert "roost.keys" not in scan.attributes and scan.attributes["roost.table"] == "t"
    assert failed.attributes["rpc.grpc.status_code"] == grpc.StatusCode.NOT_FOUND.value[0]
    assert failed.status is not None and failed.status.status_code == trace.StatusCode.ERROR
    assert "NOT_FOUND" in (failed.status.description or "")
    assert len(failed.exceptions) == 1 and "version" not in "".join(failed.attributes)


def test_partial_answers_count_their_failed_keys(layout: list[list[str]],
                                                 cluster: Cluster) -> None:
    provider = Provider()
    keys = list(keys_and_values(200))
    cluster.servers[1].kill()  # shard 1's one server
    with roost.Client(layout, tracer_provider=provider, partial=True, timeout=3) as client:
        result = client.get_many_versioned("t", keys)
    failed = len(result.errors)
    assert 0 < failed < len(keys)
    (span,) = provider.spans
    assert span.attributes["roost.failed_keys"] == failed
    assert span.attributes["rpc.grpc.status_code"] == 0


def test_asyncio_calls_are_traced_too(layout: list[list[str]]) -> None:
    provider = Provider()
    keys = list(keys_and_values(200))

    async def run() -> None:
        async with roost.AsyncClient(layout, tracer_provider=provider) as client:
            await asyncio.gather(*(client.get("t", k) for k in keys[:5]))
            await client.get_many("t", keys[:20])

    asyncio.run(run())
    assert len(by_name(provider.spans, "roost.Get")) == 5
    assert len(by_name(provider.spans, "roost.MultiGet")) == 1
    assert all(s.ended for s in provider.spans)


def test_without_a_provider_no_tracer_is_asked_for(layout: list[list[str]]) -> None:
    with roost.Client(layout) as client:
        assert client._tracer is None
        client.get("t", list(keys_and_values(1))[0])
