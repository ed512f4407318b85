"""roost-build --rows: Parquet and Feather into tables of typed rows, end to end.

As test_build.py, with real files written by pyarrow, the installed
`roost-build` and the build's real roost-load; each row is read back with
`roost-load get`, which prints it as a JSON object, and compared with what
pyarrow reads from the file under docs/operations/loading.md's mapping of
Arrow types to row types (every type it maps, nulls included). Refusals
name the file, row and column; a schema that may not follow the version
before is refused at publish unless forced.
"""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow")
import pyarrow.compute as pc  # noqa: E402
import pyarrow.feather as feather  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from test_build import EX_DATAERR, roost_build, roost_load, shortest_float32  # noqa: E402

INT64_MAX = 2**63 - 1

# Arrow type -> the row type docs/operations/loading.md gives it.
ROW_TYPES = {
    "bool": "bool", "int8": "int32", "int16": "int32", "int32": "int32",
    "uint8": "int32", "uint16": "int32", "int64": "int64", "uint32": "int64",
    "uint64": "int64", "ts_ms": "int64", "ts_ns_utc": "int64", "float32": "float32",
    "float64": "float64", "string": "string", "large_string": "string",
    "dictionary": "string", "binary": "bytes", "large_binary": "bytes",
    "fixed_binary": "bytes", "embedding": "float32_list", "fixed_embedding": "float32_list",
    "ids": "int64_list", "small_ids": "int64_list", "tags": "string_list",
    "large_tags": "string_list",
}


def rows_table() -> pa.Table:
    n = 4
    return pa.table({
        "id": pa.array([f"row{i}" for i in range(n)]),
        "bool": pa.array([True, False, None, True]),
        "int8": pa.array([-128, 127, None, 0], pa.int8()),
        "int16": pa.array([-32768, 32767, None, 1], pa.int16()),
        "int32": pa.array([-2**31, 2**31 - 1, None, 2], pa.int32()),
        "uint8": pa.array([0, 255, None, 4], pa.uint8()),
        "uint16": pa.array([0, 65535, None, 5], pa.uint16()),
        "int64": pa.array([-2**63, INT64_MAX, None, 3], pa.int64()),
        "uint32": pa.array([0, 2**32 - 1, None, 6], pa.uint32()),
        "uint64": pa.array([0, INT64_MAX, None, 7], pa.uint64()),
        "ts_ms": pa.array([1_714_564_800_500, -1, None, 0], pa.timestamp("ms")),
        "ts_ns_utc": pa.array([1_700_000_000_123_456_789, None, 0, -1_000],
                              pa.timestamp("ns", tz="UTC")),
        "float32": pa.array([0.1, -1.5e38, None, 3.0], pa.float32()),
        "float64": pa.array([0.1, 1e300, None, -0.0], pa.float64()),
        "string": pa.array(["plain", 'quote " tab \t nl \n', None, "unicode é ☃ 😀"]),
        "large_string": pa.array(["a", "", None, "z"], pa.large_string()),
        "dictionary": pa.array(["red", "green", None, "red"]).dictionary_encode(),
        "binary": pa.array([b"\x00\x01\xff", b"", None, b"abc"]),
        "large_binary": pa.array([b"x", b"\xfe", None, b""], pa.large_binary()),
        "fixed_binary": pa.array([b"abc", b"\x00\x00\x00", None, b"xyz"], pa.binary(3)),
        "embedding": pa.array([[0.5, -1.25, 3.0], [], None, [0.1]], pa.list_(pa.float32())),
        "fixed_embedding": pa.array([[1.5, 2.5], None, [0.0, -1.0], [4.0, 8.0]],
                                    pa.list_(pa.float32(), 2)),
        "ids": pa.array([[1, -2, 2**62], [], None, [0]], pa.large_list(pa.int64())),
        "small_ids": pa.array([[1, 255], None, [], [7]], pa.list_(pa.uint8())),
        "tags": pa.array([["a", "b c"], [], None, ["é"]], pa.list_(pa.string())),
        "large_tags": pa.array([["x"], None, [""], []], pa.large_list(pa.large_string())),
    })


def as_row_json(v: Any, t: pa.DataType) -> Any:
    """What RowToJson prints for value `v` (to_pylist's) of Arrow type `t`."""
    if v is None:
        return None
    if pa.types.is_dictionary(t):
        return as_row_json(v, t.value_type)
    if t == pa.float32():
        return shortest_float32(v)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return base64.b64encode(v).decode()
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return [as_row_json(x, t.value_type) for x in v]
    return v


def expected_rows(table: pa.Table, key: str) -> dict[bytes, dict[str, Any]]:
    columns = [n for n in table.column_names if n != key]
    values = {}
    for c in columns:
        t = table.schema.field(c).type
        if pa.types.is_timestamp(t):  # its count of units
            values[c] = pc.cast(table[c], pa.int64()).to_pylist()
        else:
            values[c] = [as_row_json(v, t) for v in table[c].to_pylist()]
    return {str(k).encode(): {c: values[c][i] for c in columns}
            for i, k in enumerate(table[key].to_pylist())}


def get_rows(table_dir: Path, keys: list[bytes]) -> dict[bytes, dict[str, Any]]:
    r = subprocess.run([roost_load(), "get", "--key-encoding", "hex", str(table_dir),
                        *[k.hex() for k in keys]], capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    out = {}
    for line in r.stdout.decode().splitlines():  # JSON Lines, as roost-get --rows
        found = json.loads(line)
        out[bytes.fromhex(found["key"])] = found["row"]
    return out


def manifest(version_dir: Path) -> dict[str, Any]:
    return json.loads((version_dir / "MANIFEST").read_text())


@pytest.mark.parametrize("fmt", ["parquet", "feather"])
def test_every_type_round_trips_as_rows(tmp_path: Path, fmt: str) -> None:
    table = rows_table()
    path = tmp_path / f"rows.{fmt}"
    if fmt == "parquet":
        pq.write_table(table, path, row_group_size=2)
    else:
        feather.write_feather(table, path, compression="uncompressed")
    data = tmp_path / "data"
    roost_build("-i", str(path), "--key-column", "id", "--rows",
                "--data-dir", str(data), "--table", "users")
    version = data / "users" / "v000001"
    schema = manifest(version)["schema"]
    assert schema["encoding"] == "roost-row-1"
    assert [(f["name"], f["type"], f["nullable"]) for f in schema["fields"]] == [
        (c, ROW_TYPES[c], True) for c in table.column_names if c != "id"]
    want = expected_rows(table, "id")
    got = get_rows(version, list(want))
    assert set(got) == set(want)
    for k, row in want.items():
        assert list(got[k]) == list(row), k  # the schema's order
        assert got[k] == row, k
    verify = subprocess.run([roost_load(), "verify", str(version)], capture_output=True,
                            text=True, timeout=120)
    assert verify.returncode == 0, verify.stderr
    assert "every value a row of its schema" in verify.stdout


def test_sharded_rows_into_a_repository(tmp_path: Path) -> None:
    table = rows_table()
    pq.write_table(table, tmp_path / "rows.parquet")
    repo = tmp_path / "repo"
    roost_build("-i", str(tmp_path / "rows.parquet"), "--key-column", "id", "--rows",
                "--repository", str(repo), "--table", "users", "--shards", "2",
                "--format", "block")
    version = repo / "users" / "v000001"
    assert "schema" in manifest(version)
    want = expected_rows(table, "id")
    assert get_rows(version, list(want)) == want


def test_refuses_a_uint64_past_int64_naming_row_and_column(tmp_path: Path) -> None:
    table = pa.table({"id": ["a", "b"], "n": pa.array([1, 2**63], pa.uint64())})
    pq.write_table(table, tmp_path / "u.parquet")
    r = roost_build("-i", str(tmp_path / "u.parquet"), "--key-column", "id", "--rows",
                    "--data-dir", str(tmp_path / "data"), "--table", "t", check=False)
    assert r.returncode == EX_DATAERR, r.stderr
    assert "u.parquet row group 0 row 1, column n: uint64 value 9223372036854775808" in r.stderr
    assert not (tmp_path / "data" / "t").exists()


def test_refuses_a_type_without_a_row_type_naming_the_column(tmp_path: Path) -> None:
    table = pa.table({"id": ["a"], "s": pa.array([{"x": 1}], pa.struct([("x", pa.int32())]))})
    pq.write_table(table, tmp_path / "s.parquet")
    r = roost_build("-i", str(tmp_path / "s.parquet"), "--key-column", "id", "--rows",
                    "--data-dir", str(tmp_path / "data"), "--table", "t", check=False)
    assert r.returncode == EX_DATAERR, r.stderr
    assert 'column "s" is struct<x: int32>, which has no row type' in r.stderr
    # Without --rows the same file is a JSON object, as before.
    roost_build("-i", str(tmp_path / "s.parquet"), "--key-column", "id",
                "--data-dir", str(tmp_path / "data"), "--table", "t")


def test_a_dropped_column_is_refused_at_publish_unless_forced(tmp_path: Path) -> None:
    table = rows_table().select(["id", "int64", "tags"])
    pq.write_table(table, tmp_path / "a.parquet")
    pq.write_table(table.select(["id", "int64"]), tmp_path / "b.parquet")
    data = tmp_path / "data"
    common = ["--key-column", "id", "--rows", "--data-dir", str(data), "--table", "t"]
    roost_build("-i", str(tmp_path / "a.parquet"), *common)
    r = roost_build("-i", str(tmp_path / "b.parquet"), *common, check=False)
    assert r.returncode == EX_DATAERR, r.stderr
    assert 'field "tags" is gone (dropped or renamed)' in r.stderr
    assert sorted(p.name for p in (data / "t").iterdir()) == ["v000001"]
    roost_build("-i", str(tmp_path / "b.parquet"), *common, "--allow-schema-change")
    assert "tags" in manifest(data / "t" / "v000002")["schema_change"]
