"""What the sync and the asyncio client share: channel settings, the
requests of each part, the errors a failed part raises, and the results
(BatchResult, ScanResult) put together from the parts' responses."""

from __future__ import annotations

import dataclasses
import heapq
import math
import operator
import struct
import threading
from itertools import accumulate
from typing import Any, NoReturn, Optional, Sequence

import grpc

from roost._errors import RoostError, StaleLayoutError, VersionUnavailableError
from roost._layout import TlsConfig
from roost._partition import Split
from roost._rows import Schema
from roost._versions import Failure
from roost.v1 import lookup_pb2

GET = "/roost.v1.Lookup/Get"
MULTI_GET = "/roost.v1.Lookup/MultiGet"
LIST_TABLES = "/roost.v1.Lookup/ListTables"
SCAN = "/roost.v1.Lookup/Scan"

# (method, request serializer, response deserializer); the serializers are
# protobuf's own, so a call costs no Python-level wrapping.
METHODS: dict[str, tuple[Any, Any]] = {
    GET: (lookup_pb2.GetRequest.SerializeToString, lookup_pb2.GetResponse.FromString),
    MULTI_GET: (lookup_pb2.MultiGetRequest.SerializeToString,
                lookup_pb2.MultiGetResponse.FromString),
    LIST_TABLES: (lookup_pb2.ListTablesRequest.SerializeToString,
                  lookup_pb2.ListTablesResponse.FromString),
    SCAN: (lookup_pb2.ScanRequest.SerializeToString, lookup_pb2.ScanResponse.FromString),
}

_first = operator.itemgetter(0)

DEFAULT_TIMEOUT = 10.0
# roost-server's default --max-batch: a shard's keys beyond it go in more parts.
DEFAULT_MAX_BATCH = 10000


def channel_options(target: str, tls: Optional[TlsConfig]) -> list[tuple[str, Any]]:
    options: list[tuple[str, Any]] = [
        # A batch of large values may pass gRPC's default 4 MiB.
        ("grpc.max_receive_message_length", -1),
        # The client retries on another replica itself.
        ("grpc.enable_retries", 0),
        # A restarted replica is back in use within about two seconds
        # (gRPC's default backoff grows to two minutes). Not
        # grpc.min_reconnect_backoff_ms: that is the connect timeout.
        ("grpc.initial_reconnect_backoff_ms", 100),
        ("grpc.max_reconnect_backoff_ms", 2000),
    ]
    if target.startswith("dns:"):
        # Every address of the name is a replica: spread calls over them.
        options.append(("grpc.lb_policy_name", "round_robin"))
    if tls is not None and tls.server_name:
        options.append(("grpc.ssl_target_name_override", tls.server_name))
    return options


def metadata(token: Optional[str]) -> Optional[tuple[tuple[str, str], ...]]:
    return (("authorization", f"Bearer {token}"),) if token else None


def failure_error(failure: Failure) -> RoostError:
    """The exception of a part that failed for good."""
    text = failure.describe()
    if failure.code == grpc.StatusCode.FAILED_PRECONDITION:
        if "belongs to shard" in failure.details:
            return StaleLayoutError(
                f"{text} (the cluster layout does not match the table's shards: reload it)",
                failure.code, failure.shard)
        if "version" in failure.details:
            return VersionUnavailableError(text, failure.code, failure.shard)
    return RoostError(text, failure.code, failure.shard)


def raise_failure(failure: Failure) -> NoReturn:
    """Raises the exception of a part that failed for good."""
    raise failure_error(failure)


def check_table(table: str) -> None:
    if not isinstance(table, str) or not table:
        raise ValueError("the table name must be a non-empty string")


@dataclasses.dataclass(frozen=True)
class BatchResult:
    """The values of a batch in request order (None for a missing key) and
    the table version that answered every one of them ("" when the servers
    are too old to say, or the batch was empty). With partial answers
    (`partial=True`), `errors` maps the position of each key whose shard
    could not answer to that shard's RoostError (its value is None); it is
    empty otherwise."""

    values: list[Optional[bytes]]
    version: str
    errors: dict[int, RoostError] = dataclasses.field(default_factory=dict)

    def raise_errors(self) -> None:
        """Raises the error of the first key whose shard could not answer."""
        if self.errors:
            raise self.errors[min(self.errors)]


@dataclasses.dataclass(frozen=True)
class ScanResult:
    """The entries of a scan in key order, the table version that answered,
    and whether entries are left in the range past the last one (`more`:
    scan again from just after the last key)."""

    entries: list[tuple[bytes, bytes]]
    version: str
    more: bool


@dataclasses.dataclass
class ScanPart:
    """One shard's scan, collected from its stream."""

    entries: list[tuple[bytes, bytes]]
    version: str
    more: bool
    withdrawn_through: str = ""


def common_version(results: Sequence[Any]) -> str:
    """The version the parts answered (a dropped part's Failure names none)."""
    for r in results:
        if not isinstance(r, Failure) and r.version:
            version: str = r.version
            return version
    return ""


def multi_get_requests(table: str, split: Split, version: str, fields: Sequence[str] = (),
                       score: Any = None) -> dict[int, Any]:
    # packed: the values come back as one bytes object and their sizes,
    # which values_of() slices without a protobuf message per key.
    return {s: lookup_pb2.MultiGetRequest(table=table, keys=keys, version=version, packed=True,
                                          fields=fields, score=score)
            for s, keys in split.keys.items()}


# ---- typed rows (docs/format/rows.md) ----

SIMILARITIES = {"dot": lookup_pb2.Score.DOT_PRODUCT, "cosine": lookup_pb2.Score.COSINE}


def check_fields(fields: Optional[Sequence[str]]) -> list[str]:
    """The field names to project to ([]: whole rows)."""
    if fields is None:
        return []
    if isinstance(fields, (str, bytes)):
        raise TypeError("fields is a list of field names, not one string")
    names = list(fields)
    for name in names:
        if not isinstance(name, str) or not name:
            raise ValueError(f"a field name is a non-empty string, not {name!r}")
    return names


def score_message(field: str, query: Sequence[float], similarity: str, top_k: int) -> Any:
    if not isinstance(field, str) or not field:
        raise ValueError("score needs the name of a float32_list field")
    if similarity not in SIMILARITIES:
        raise ValueError(f"similarity is \"dot\" or \"cosine\", not {similarity!r}")
    if not 0 <= top_k < 2**32:
        raise ValueError(f"top_k is 0 (every key) or more, not {top_k}")
    return lookup_pb2.Score(field=field, similarity=SIMILARITIES[similarity],
                            query=list(query), top_k=top_k)


@dataclasses.dataclass(frozen=True)
class ScoreResult:
    """A batch scored on the servers. Without top_k: `scores[i]` is key i's
    score (NaN: the key is missing, its field null, or its vector not the
    query's dimension) and `top` is empty. With top_k: `top` holds the
    indexes (in the request) of the best keys, best first (ties: the lower
    index first), at most top_k of them, and `scores[j]` is the score of
    key `top[j]`. `version` answered the whole batch."""

    scores: list[float]
    top: list[int]
    version: str


def scores_of(split: Split, n: int, responses: dict[int, Any], top_k: int,
              offset: int = 0) -> list[tuple[int, float]]:
    """(request index, score) from each shard's answer: every key without
    top_k, else the shards' best (each at most top_k), not yet merged."""
    out: list[tuple[int, float]] = []
    for p, response in responses.items():
        positions = split.positions[p] if split.positions is not None else None
        size = len(split.keys[p])
        s = split.shard(p)
        scores = list(response.scores)
        if top_k:
            top = list(response.top)
            if len(top) != len(scores) or len(top) > top_k or any(t >= size for t in top):
                raise RoostError(f"shard {s}: a top {top_k} answer of {len(top)} indexes and "
                                 f"{len(scores)} scores for {size} keys", shard=s)
            out += [(offset + (positions[t] if positions is not None else t), v)
                    for t, v in zip(top, scores)]
        else:
            if len(scores) != size:
                raise _count_mismatch(s, size, len(scores))
            out += [(offset + (positions[i] if positions is not None else i), v)
                    for i, v in enumerate(scores)]
    return out


def merge_scores(scored: list[tuple[int, float]], n: int, top_k: int) -> tuple[list[float],
                                                                               list[int]]:
    """scores_of()'s pairs as ScoreResult's scores and top."""
    if not top_k:
        scores = [math.nan] * n
        for i, v in scored:
            scores[i] = v
        return scores, []
    best = sorted((p for p in scored if not math.isnan(p[1])), key=lambda p: (-p[1], p[0]))
    best = best[:top_k]
    return [v for _, v in best], [i for i, _ in best]


class SchemaCache:
    """Each table version's row schema, from ListTables (TableInfo.schema_json),
    kept per (table, version): a version's schema never changes."""

    def __init__(self) -> None:
        self._schemas: dict[tuple[str, str], Optional[Schema]] = {}
        self._lock = threading.Lock()

    def get(self, table: str, version: str) -> tuple[bool, Optional[Schema]]:
        with self._lock:
            key = (table, version)
            return (key in self._schemas), self._schemas.get(key)

    def learn(self, table: str, response: Any) -> list[str]:
        """The versions of `table` a ListTablesResponse serves, cached."""
        versions = []
        for info in response.tables:
            if info.name != table or not info.serving_version:
                continue
            schema = Schema.from_json(info.schema_json) if info.schema_json else None
            with self._lock:
                self._schemas[(table, info.serving_version)] = schema
                # A long-lived client sees version after version: keep the
                # newest few hundred (dicts keep insertion order).
                while len(self._schemas) > 256:
                    del self._schemas[next(iter(self._schemas))]
            versions.append(info.serving_version)
        return versions


def row_schema(table: str, schema: Optional[Schema], version: str,
               fields: Sequence[str]) -> Schema:
    if schema is None:
        raise RoostError(f"table {table!r} (version {version}) holds opaque values, not rows: "
                         f"build it with roost-load build --rows for get_rows and score",
                         grpc.StatusCode.INVALID_ARGUMENT)
    return schema.project(fields) if fields else schema


def values_of(response: Any, n: int, shard: int) -> list[Optional[bytes]]:
    """The `n` values (None: missing) of shard `shard`'s MultiGetResponse,
    in either form: `results` (a server that predates the packed form) or
    the packed fields (lookup.proto)."""
    results = response.results
    sizes = response.packed_sizes
    width = response.packed_width
    data = response.packed_values
    missing = response.missing
    if not (sizes or width or data or missing):
        if len(results) != n:
            raise _count_mismatch(shard, n, len(results))
        return [r.value if r.found else None for r in results]
    if results:
        raise RoostError(f"shard {shard}: the server answered in both forms at once",
                         shard=shard)
    values: list[Optional[bytes]]
    if width:
        # Fixed-width values: struct cuts them in C, without a Python
        # frame or a size per key (measured 3x faster than slicing).
        found = n - len(missing)
        if sizes or len(data) != width * found:
            raise RoostError(f"shard {shard}: the packed values are {len(data)} bytes, "
                             f"where {found} values of {width} were expected",
                             shard=shard)
        values = list(map(_first, struct.iter_unpack(f"{width}s", data)))
        last = -1
        for i in missing:  # rising: each lands in its place
            if not last < i < n:
                raise _bad_missing(shard, i, n)
            values.insert(i, None)
            last = i
        return values
    if len(sizes) != n:
        raise _count_mismatch(shard, n, len(sizes))
    ends = list(accumulate(sizes))
    if (ends[-1] if ends else 0) != len(data):
        raise RoostError(f"shard {shard}: the packed values are {len(data)} bytes, "
                         f"their sizes add up to {ends[-1] if ends else 0}", shard=shard)
    starts = [0]
    starts += ends[:-1]
    values = list(map(data.__getitem__, map(slice, starts, ends)))
    for i in missing:
        if not 0 <= i < n or sizes[i]:
            raise _bad_missing(shard, i, n)
        values[i] = None
    return values


def _bad_missing(shard: int, i: int, n: int) -> RoostError:
    why = "out of order or with a value" if 0 <= i < n else f"of {n} keys"
    return RoostError(f"shard {shard}: the packed response names key {i} missing, {why}",
                      shard=shard)


def reassemble(split: Split, n: int, responses: dict[int, Any]) -> list[Optional[bytes]]:
    """The values in request order from each shard's MultiGetResponse."""
    if split.positions is None:
        if not responses:
            return []
        return values_of(responses[0], n, 0)
    out: list[Optional[bytes]] = [None] * n
    for p, positions in split.positions.items():
        for i, v in zip(positions, values_of(responses[p], len(positions), split.shard(p))):
            out[i] = v
    return out


def reassemble_batch(split: Split, n: int, responses: dict[int, Any]) -> BatchResult:
    """reassemble, where a part's response may be the Failure of a part
    dropped by partial answers: its keys get that error."""
    errors: dict[int, RoostError] = {}
    failed = {p: failure_error(r) for p, r in responses.items() if isinstance(r, Failure)}
    if failed:
        values: list[Optional[bytes]] = [None] * n
        for p, positions in (split.positions or {0: list(range(n))}).items():
            if p in failed:
                errors.update((i, failed[p]) for i in positions)
                continue
            for i, v in zip(positions, values_of(responses[p], len(positions), split.shard(p))):
                values[i] = v
    else:
        values = reassemble(split, n, responses)
    return BatchResult(values, common_version(list(responses.values())), errors)


def _count_mismatch(shard: int, asked: int, got: int) -> RoostError:
    return RoostError(f"shard {shard}: asked for {asked} keys, the server answered {got}",
                      shard=shard)


def scan_request(table: str, start: bytes, end: bytes, prefix: bytes, limit: int,
                 version: str) -> Any:
    return lookup_pb2.ScanRequest(table=table, start=start, end=end, prefix=prefix,
                                  limit=limit, version=version)


def add_scan_message(part: ScanPart, message: Any, shard: int) -> None:
    """Adds one ScanResponse of shard `shard` to its part, checking that the
    shard's keys keep rising and its version stays the same."""
    if message.version != part.version:
        if part.entries or part.version:
            raise RoostError(f"shard {shard}: the scan changed version from "
                             f"{part.version!r} to {message.version!r}", shard=shard)
        part.version = message.version
        part.withdrawn_through = message.withdrawn_through
    last = part.entries[-1][0] if part.entries else None
    for kv in message.entries:
        if last is not None and kv.key <= last:
            raise RoostError(f"shard {shard}: the scan's keys are not in rising order",
                             shard=shard)
        last = kv.key
        part.entries.append((kv.key, kv.value))
    part.more = message.more


def merge_scans(parts: dict[int, Any], limit: int) -> ScanResult:
    """Merges the shards' scans in key order. A shard that stopped with
    entries left (`more`) bounds the result: nothing past its last key is
    complete, so the merge stops there and says `more`."""
    bound: Optional[bytes] = None
    more = False
    for part in parts.values():
        if part.more and part.entries:
            last = part.entries[-1][0]
            bound = last if bound is None or last < bound else bound
        more = more or part.more
    merged = list(heapq.merge(*(p.entries for p in parts.values())))
    if bound is not None:
        cut = len(merged)
        while cut and merged[cut - 1][0] > bound:
            cut -= 1
        merged = merged[:cut]
    if limit and len(merged) > limit:
        merged = merged[:limit]
        more = True
    return ScanResult(merged, common_version(list(parts.values())), more)
