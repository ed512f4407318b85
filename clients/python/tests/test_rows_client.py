"""get_rows, get_rows_table and score against real roost-servers serving a
table of typed rows (encoded here, published by the real roost-load, the
schema written into the MANIFEST as roost-load build --rows does): every row read back equal to what was built, projections,
missing and repeated keys, two shards, the schema following a new version,
an unknown field and an opaque table refused, and the servers' dot
products, cosine similarities and top k equal to NumPy's; the asyncio
client the same. Runs in the [batch] venv (pyarrow, numpy)."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import os
import struct

import pytest

pa = pytest.importorskip("pyarrow")
np = pytest.importorskip("numpy")

import roost  # noqa: E402

DIM = 16


def source(n: int, generation: int = 0) -> pa.Table:
    rng = np.random.default_rng(7 + generation)
    emb = rng.standard_normal((n, DIM)).astype(np.float32)
    rows = {
        "id": [f"user{i:04d}" for i in range(n)],
        "ltv": [None if i % 7 == 0 else i * 1.25 + generation for i in range(n)],
        "visits": pa.array([i % 100 for i in range(n)], pa.int32()),
        "segments": [[f"s{j}" for j in range(i % 4)] for i in range(n)],
        "embedding": pa.array([list(map(float, e)) if i % 11 else
                               (list(map(float, e[:3])) if i % 2 else None)
                               for i, e in enumerate(emb)], pa.list_(pa.float32())),
        "active": [i % 3 == 0 for i in range(n)],
        "country": [None if i % 5 == 0 else ["de", "fr", "ü"][i % 3] for i in range(n)],
    }
    if generation:
        rows["score"] = [float(i) for i in range(n)]
    return pa.table(rows)


FIELDS = [("ltv", "float64", True), ("visits", "int32", False),
          ("segments", "string_list", False), ("embedding", "float32_list", True),
          ("active", "bool", False), ("country", "string", True), ("score", "float64", True)]


def schema_json(data: pa.Table) -> dict:
    return {"encoding": "roost-row-1",
            "fields": [{"name": n, "type": t, "nullable": nullable}
                       for n, t, nullable in FIELDS if n in data.schema.names]}


def encode(fields: list[dict], row: dict) -> bytes:
    """roost-row-1 (docs/format/rows.md), written out here independently of
    roost._rows: bitmap, slots, variable bytes."""
    fixed = {"bool": "<B", "int32": "<i", "int64": "<q", "float32": "<f", "float64": "<d"}
    bitmap = bytearray((len(fields) + 7) // 8 if any(f["nullable"] for f in fields) else 0)
    slots, var = b"", b""
    for i, f in enumerate(fields):
        v = row[f["name"]]
        if v is None:
            bitmap[i // 8] |= 1 << (i % 8)
        if f["type"] in fixed:
            slots += struct.pack(fixed[f["type"]], v or 0)
            continue
        if v is not None:
            if f["type"] == "string":
                var += v.encode()
            elif f["type"] == "float32_list":
                var += struct.pack(f"<{len(v)}f", *v)
            else:  # string_list
                data = [x.encode() for x in v]
                ends = list(itertools.accumulate(len(d) for d in data))
                var += struct.pack(f"<I{len(ends)}I", len(ends), *ends) + b"".join(data)
        slots += struct.pack("<I", len(var))
    return bytes(bitmap) + slots + var


def build_rows(cluster, table: str, data: pa.Table, shards: int) -> None:
    """Publishes `data` (an "id" column, the rest fields) as the next
    version of a table of rows: rows encoded here, built by the real
    roost-load as values into a staging folder, the schema written into the
    MANIFEST (what roost-load build --rows writes there, as the server's own
    rows test does), then renamed into the served data folder."""
    schema = schema_json(data)
    stage = cluster.scratch / f"stage-{table}-{len(list(cluster.scratch.glob('stage-*')))}"
    stage.mkdir()
    cluster.build(table, {row.pop("id").encode(): encode(schema["fields"], row)
                          for row in data.to_pylist()}, shards=shards, data=stage)
    built = stage / table / "v000001"
    served = cluster.data / table
    served.mkdir(exist_ok=True)
    number = 1 + len(list(served.glob("v*")))
    manifest = built / "MANIFEST"
    os.chmod(built, 0o755)
    os.chmod(manifest, 0o644)
    doc = json.loads(manifest.read_text())
    doc["schema"] = schema
    doc["version"] = number
    manifest.write_text(json.dumps(doc, indent=2))
    os.rename(built, served / f"v{number:06d}")


def expected(data: pa.Table) -> dict[str, dict]:
    out = {}
    for row in data.to_pylist():
        key = row.pop("id")
        out[key] = row
    return out


@pytest.fixture
def served(cluster):
    data = source(300)
    build_rows(cluster, "users", data, shards=2)
    cluster.build("opaque", {b"k": b"v"})
    servers = [cluster.server(shard=s) for s in range(2)]
    return [[s.address] for s in servers], data


def close(a, b) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return math.isclose(a, b, rel_tol=1e-6)
    return a == b


def test_get_rows_every_row(served):
    shards, data = served
    want = expected(data)
    keys = list(want) + ["nobody", "user0003"]
    with roost.Client(shards) as client:
        rows = client.get_rows("users", keys)
        assert len(rows) == len(keys)
        for key, row in zip(keys, rows):
            if key == "nobody":
                assert row is None
                continue
            assert list(row) == ["ltv", "visits", "segments", "embedding", "active", "country"]
            assert close([row[k] for k in row], [want[key][k] for k in row]), (key, row)
        table = client.get_rows_table("users", keys)
        assert table.num_rows == len(keys)
        assert [close(a, b) for a, b in zip(table.to_pylist()[:-2], rows[:-2])] == \
            [True] * (len(keys) - 2)
        assert all(v is None for v in table.to_pylist()[-2].values())


def test_projection(served):
    shards, data = served
    want = expected(data)
    with roost.Client(shards) as client:
        rows = client.get_rows("users", ["user0011", "user0001", "x"],
                               fields=["embedding", "visits"])
        assert list(rows[0]) == ["embedding", "visits"]
        for key, row in zip(["user0011", "user0001"], rows):
            assert close(row["embedding"], want[key]["embedding"])
            assert row["visits"] == want[key]["visits"]
        assert rows[2] is None
        t = client.get_rows_table("users", ["user0005"], fields=["country", "ltv"])
        assert t.schema.names == ["country", "ltv"]
        assert t.to_pylist() == [{"country": None, "ltv": want["user0005"]["ltv"]}]
        with pytest.raises(roost.RoostError, match="nope") as e:
            client.get_rows("users", ["user0001"], fields=["visits", "nope"])
        assert e.value.code.name == "INVALID_ARGUMENT"
        with pytest.raises(roost.RoostError, match="opaque|rows"):
            client.get_rows("opaque", ["k"])


def test_schema_follows_the_version(cluster, served):
    shards, _ = served
    with roost.Client(shards) as client:
        assert "score" not in client.get_rows("users", ["user0002"])[0]
        build_rows(cluster, "users", source(300, generation=1), shards=2)
        client.wait("users", "v000002", timeout=60)
        row = client.get_rows("users", ["user0002"])[0]
        assert row["score"] == 2.0 and row["ltv"] == 2 * 1.25 + 1


def reference(data: pa.Table, keys: list[str], query: np.ndarray, cosine: bool) -> list[float]:
    by_key = dict(zip(data.column("id").to_pylist(), data.column("embedding").to_pylist()))
    out = []
    for k in keys:
        v = by_key.get(k)
        if v is None or len(v) != len(query):
            out.append(math.nan)
            continue
        v = np.array(v, dtype=np.float32)
        s = float(np.dot(v, query))
        if cosine:
            s /= float(np.linalg.norm(v) * np.linalg.norm(query))
        out.append(s)
    return out


@pytest.mark.parametrize("similarity", ["dot", "cosine"])
def test_score_against_numpy(served, similarity):
    shards, data = served
    keys = [f"user{i:04d}" for i in range(0, 300, 2)] + ["nobody"]
    query = np.random.default_rng(1).standard_normal(DIM).astype(np.float32)
    want = reference(data, keys, query, similarity == "cosine")
    with roost.Client(shards) as client:
        got = client.score("users", keys, "embedding", query.tolist(), similarity=similarity)
        assert got.top == [] and got.version == "v000001"
        for k, g, w in zip(keys, got.scores, want):
            assert (math.isnan(g) and math.isnan(w)) or math.isclose(g, w, rel_tol=1e-4,
                                                                       abs_tol=1e-4), (k, g, w)
        best = client.score("users", keys, "embedding", query.tolist(),
                            similarity=similarity, top_k=5)
        order = sorted((i for i, w in enumerate(want) if not math.isnan(w)),
                       key=lambda i: (-want[i], i))[:5]
        assert best.top == order
        assert best.scores == pytest.approx([want[i] for i in order], rel=1e-4, abs=1e-4)
        with pytest.raises(roost.RoostError, match="visits"):
            client.score("users", keys, "visits", query.tolist())


def test_asyncio(served):
    shards, data = served
    want = expected(data)
    query = [1.0] * DIM

    async def run():
        async with roost.AsyncClient(shards) as client:
            rows = await client.get_rows("users", ["user0001", "none"], fields=["active"])
            table = await client.get_rows_table("users", ["user0001"], fields=["segments"])
            scored = await client.score("users", ["user0001", "user0002"], "embedding", query,
                                        top_k=1)
            return rows, table, scored

    rows, table, scored = asyncio.run(run())
    assert rows == [{"active": want["user0001"]["active"]}, None]
    assert table.to_pylist() == [{"segments": want["user0001"]["segments"]}]
    sums = [sum(want[k]["embedding"]) for k in ("user0001", "user0002")]
    assert scored.top == [0 if sums[0] >= sums[1] else 1]
