"""roost-build: Parquet, Arrow IPC and Feather into tables, end to end.

Each test writes real files with pyarrow, runs the installed `roost-build`
console script against the build's real roost-load, reads the table back
with `roost-load get`, and compares every value with what pyarrow reads
from the file, under the mapping of docs/format/column_stream.md. Needs the
package's [batch] extra (pyarrow): ctest runs it in the venv of
python_batch_install.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import io
import json
import math
import os
import re
import struct
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Optional

import pytest

pa = pytest.importorskip("pyarrow")
import pyarrow.compute as pc  # noqa: E402
import pyarrow.feather as feather  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from conftest import ROOT, binary  # noqa: E402
from s3_fixture import start_minio  # noqa: E402
from roost.batch import ColumnStreamWriter, write_column_stream  # noqa: E402

EX_USAGE, EX_DATAERR = 64, 65


def roost_load() -> str:
    return binary("ROOST_LOAD_BINARY", "loader/roost-load")


def roost_build(*args: str, check: bool = True, env_extra: Optional[dict[str, str]] = None
                ) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).parent / "roost-build"
    env = dict(os.environ, ROOST_LOAD=roost_load(), **(env_extra or {}))
    r = subprocess.run([str(script), *args, "-q"], env=env, capture_output=True, text=True,
                       timeout=300)
    if check and r.returncode != 0:
        pytest.fail(f"roost-build {' '.join(args)} exited {r.returncode}:\n{r.stderr}")
    return r


def read_back(table: Path, keys: list[bytes]) -> dict[bytes, bytes]:
    r = subprocess.run([roost_load(), "get", "--key-encoding", "hex", "--value-encoding", "hex",
                        str(table), *[k.hex() for k in keys]], capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    out = {}
    for line in r.stdout.decode().splitlines():
        k, _, v = line.partition("\t")
        out[bytes.fromhex(k)] = bytes.fromhex(v)
    return out


def shortest_float32(v: float) -> float:
    """The float32 `v`'s shortest decimal text that reads back as it, read
    as a double (std::to_chars of a float)."""
    def f32(x: float) -> float:
        return float(struct.unpack("<f", struct.pack("<f", x))[0])
    for digits in range(1, 10):
        text = f"{v:.{digits}g}"
        if f32(float(text)) == v:
            return float(text)
    return v


UNIT_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def fraction(t: pa.DataType, micro: int, nano: int = 0) -> str:
    digits = UNIT_DIGITS[t.unit]
    if digits == 0:
        return ""
    sub_second = micro * 1000 + nano
    return "." + f"{sub_second:09d}"[:digits]


def as_json(v: Any, t: pa.DataType) -> Any:
    """What docs/format/column_stream.md says value `v` (as pyarrow's
    to_pylist gives it) of type `t` is in JSON, as json.loads reads it."""
    if v is None:
        return None
    if pa.types.is_dictionary(t):
        return as_json(v, t.value_type)
    if pa.types.is_floating(t):
        if math.isnan(v) or math.isinf(v):
            return None
        return shortest_float32(v) if t == pa.float32() else v
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return base64.b64encode(v).decode()
    if pa.types.is_timestamp(t):
        nano = getattr(v, "nanosecond", 0)
        if t.tz:
            v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return v.strftime("%Y-%m-%dT%H:%M:%S") + fraction(t, v.microsecond, nano) + \
            ("Z" if t.tz else "")
    if pa.types.is_date(t):
        return v.isoformat()
    if pa.types.is_time(t):
        return v.strftime("%H:%M:%S") + fraction(t, v.microsecond)
    if pa.types.is_decimal(t):
        return f"{v:f}"
    if pa.types.is_map(t):
        return {k: as_json(x, t.item_type) for k, x in v}
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return [as_json(x, t.value_type) for x in v]
    if pa.types.is_struct(t):
        return {t.field(i).name: as_json(v[t.field(i).name], t.field(i).type)
                for i in range(t.num_fields)}
    return v


def expected_values(table: pa.Table, key: str, columns: Optional[list[str]] = None
                    ) -> dict[bytes, Any]:
    """Each row's key bytes -> its value as a dict under the doc's mapping."""
    columns = columns or [n for n in table.column_names if n != key]
    rows: dict[bytes, Any] = {}
    raw = {}
    for c in columns:
        if pa.types.is_duration(table.schema.field(c).type):
            raw[c] = pc.cast(table[c], pa.int64()).to_pylist()  # counts of the unit
    pylists = {c: table[c].to_pylist() for c in columns if c not in raw}
    for i, k in enumerate(table[key].to_pylist()):
        kb = k if isinstance(k, bytes) else str(k).encode()
        rows[kb] = {c: raw[c][i] if c in raw else as_json(pylists[c][i], table.schema.field(c).type)
                    for c in columns}
    return rows


def assert_round_trip(table_path: Path, table: pa.Table, key: str,
                      columns: Optional[list[str]] = None) -> None:
    want = expected_values(table, key, columns)
    got = read_back(table_path, list(want))
    assert set(got) == set(want)
    for k, v in want.items():
        assert json.loads(got[k]) == v, k


def every_type_table() -> pa.Table:
    utc = datetime.timezone.utc
    n = 4
    return pa.table({
        "id": pa.array([f"row{i}" for i in range(n)]),
        "null": pa.nulls(n),
        "bool": pa.array([True, False, None, True]),
        "int8": pa.array([-128, 127, None, 0], pa.int8()),
        "int16": pa.array([-32768, 32767, None, 1], pa.int16()),
        "int32": pa.array([-2**31, 2**31 - 1, None, 2], pa.int32()),
        "int64": pa.array([-2**63, 2**63 - 1, None, 3], pa.int64()),
        "uint8": pa.array([0, 255, None, 4], pa.uint8()),
        "uint16": pa.array([0, 65535, None, 5], pa.uint16()),
        "uint32": pa.array([0, 2**32 - 1, None, 6], pa.uint32()),
        "uint64": pa.array([0, 2**64 - 1, None, 7], pa.uint64()),
        "float32": pa.array([0.1, -1.5e38, None, float("nan")], pa.float32()),
        "float64": pa.array([0.1, 1e300, float("inf"), -0.0], pa.float64()),
        "string": pa.array(["plain", 'quote " backslash \\ tab \t nl \n ctl \x01', None,
                            "unicode é ☃ 😀"]),
        "large_string": pa.array(["a", "", None, "z"], pa.large_string()),
        "binary": pa.array([b"\x00\x01\xff", b"", None, b"abc"]),
        "large_binary": pa.array([b"x", b"\xfe", None, b""], pa.large_binary()),
        "fixed_binary": pa.array([b"abc", b"\x00\x00\x00", None, b"xyz"], pa.binary(3)),
        "date32": pa.array([datetime.date(2024, 5, 1), datetime.date(1969, 12, 31), None,
                            datetime.date(1, 1, 1)], pa.date32()),
        "date64": pa.array([datetime.date(2024, 5, 1), None, datetime.date(1970, 1, 1),
                            datetime.date(9999, 12, 31)], pa.date64()),
        "ts_s": pa.array([datetime.datetime(2024, 5, 1, 12, 0, 1), None,
                          datetime.datetime(1969, 12, 31, 23, 59, 59),
                          datetime.datetime(2000, 2, 29)], pa.timestamp("s")),
        "ts_ms_utc": pa.array([datetime.datetime(2024, 5, 1, 12, 0, 1, 500000, tzinfo=utc),
                               None, datetime.datetime(1970, 1, 1, tzinfo=utc),
                               datetime.datetime(1960, 1, 1, 0, 0, 0, 1000, tzinfo=utc)],
                              pa.timestamp("ms", tz="UTC")),
        "ts_us_ny": pa.array([datetime.datetime(2024, 5, 1, 12, 0, 1, 123456, tzinfo=utc),
                              None, None, datetime.datetime(2024, 12, 1, tzinfo=utc)],
                             pa.timestamp("us", tz="America/New_York")),
        "ts_ns": pa.array([1_700_000_000_123_456_000, None, 0, -1_000], pa.timestamp("ns")),
        "time32_s": pa.array([datetime.time(0, 0, 1), None, datetime.time(23, 59, 59),
                              datetime.time(12)], pa.time32("s")),
        "time32_ms": pa.array([datetime.time(1, 2, 3, 4000), None, datetime.time(0),
                               datetime.time(12)], pa.time32("ms")),
        "time64_us": pa.array([datetime.time(1, 2, 3, 456789), None, datetime.time(0),
                               datetime.time(23, 59, 59, 999999)], pa.time64("us")),
        "time64_ns": pa.array([3_723_000_001_000, None, 0, 1_000], pa.time64("ns")),
        "duration_s": pa.array([1, -2, None, 86400], pa.duration("s")),
        "duration_ns": pa.array([1, -2, None, 2**62], pa.duration("ns")),
        "decimal": pa.array([decimal.Decimal("12.345"), decimal.Decimal("-0.001"), None,
                             decimal.Decimal("9999999.999")], pa.decimal128(10, 3)),
        "list": pa.array([[1, None, 3], [], None, [2**62]], pa.list_(pa.int64())),
        "large_list": pa.array([["a"], None, [], ["b", None]], pa.large_list(pa.string())),
        "fixed_list": pa.array([[1.5, 2.5], None, [0.0, -1.0], [None, 3.0]],
                               pa.list_(pa.float32(), 2)),
        "list_of_lists": pa.array([[[1], [2, 3]], [None], None, []],
                                  pa.list_(pa.list_(pa.int16()))),
        "struct": pa.array([{"a": 1, "b": ["x"]}, None, {"a": None, "b": None},
                            {"a": 4, "b": []}],
                           pa.struct([("a", pa.int32()), ("b", pa.list_(pa.string()))])),
        "map": pa.array([[("k", 1.5), ("j", None)], [], None, [("z", -2.0)]],
                        pa.map_(pa.string(), pa.float64())),
        "dictionary": pa.array(["red", "green", None, "red"]).dictionary_encode(),
        "string_view": pa.array(["v1", None, "", "v4"], pa.string_view()),
    })


def test_the_stream_is_the_docs_worked_example() -> None:
    # docs/format/column_stream.md's program, and its dump byte for byte.
    t = pa.table({"id": pa.array(["a", "b"]), "n": pa.array([1, None], pa.int32())})
    out = io.BytesIO()
    write_column_stream(out, t.schema, [(t.to_batches()[0], "x.parquet row group 0", 0)], "id")
    doc = (ROOT / "docs" / "format" / "column_stream.md").read_text()
    dump = b"".join(bytes.fromhex("".join(m.group(1).split()))
                    for m in re.finditer(r"^[0-9a-f]{8}: ((?:[0-9a-f]{2,4} )+) ", doc, re.M))
    assert len(dump) == 196
    assert out.getvalue() == dump


def test_every_type_round_trips_through_feather(tmp_path: Path) -> None:
    table = every_type_table()
    feather.write_feather(table, tmp_path / "all.feather", compression="uncompressed")
    roost_build("-i", str(tmp_path / "all.feather"), "--key-column", "id",
                "-o", str(tmp_path / "t.sst"))
    assert_round_trip(tmp_path / "t.sst", table, "id")


def test_sliced_batches_round_trip(tmp_path: Path) -> None:
    # Arrays at an offset (the batches of a slice), nested ones included,
    # written straight with the writer as a Spark executor would.
    table = every_type_table()
    stream = tmp_path / "s.cols"
    with open(stream, "wb") as out:
        writer = ColumnStreamWriter(out, table.schema, "id")
        for start in range(4):
            batch = table.slice(start, 1).combine_chunks().to_batches()[0]
            writer.write_batch(batch, "slices", start)
        writer.close()
    subprocess.run([roost_load(), "build", "-q", "--input-format", "arrow-columns",
                    "-i", str(stream), "-o", str(tmp_path / "t.sst")], check=True)
    assert_round_trip(tmp_path / "t.sst", table, "id")


def numbers_table(start: int, n: int) -> pa.Table:
    ids = pa.array(range(start, start + n), pa.int64())
    return pa.table({
        "id": ids,
        "score": pc.divide(pc.cast(ids, pa.float64()), 7.0),
        "name": pa.array([f"name {i}" for i in range(start, start + n)]),
        "tags": pa.array([[float(i), 0.5] for i in range(start, start + n)],
                         pa.list_(pa.float32())),
    })


def test_parquet_file_with_row_groups_and_value_columns(tmp_path: Path) -> None:
    table = numbers_table(0, 5000)
    pq.write_table(table, tmp_path / "n.parquet", row_group_size=1000)
    roost_build("-i", str(tmp_path / "n.parquet"), "--key-column", "id",
                "--value-columns", "name,score", "-o", str(tmp_path / "t.sst"))
    assert_round_trip(tmp_path / "t.sst", table, "id", ["name", "score"])


def test_one_value_columns_bytes(tmp_path: Path) -> None:
    table = pa.table({"k": pa.array([b"\x00k", b"k2"]), "v": pa.array(["raw \t value", "{}"]),
                      "other": pa.array([1, 2])})
    pq.write_table(table, tmp_path / "b.parquet")
    roost_build("-i", str(tmp_path / "b.parquet"), "--key-column", "k", "--value-column", "v",
                "-o", str(tmp_path / "t.sst"))
    assert read_back(tmp_path / "t.sst", [b"\x00k", b"k2"]) == {
        b"\x00k": b"raw \t value", b"k2": b"{}"}


def test_directory_of_parts_into_a_sharded_data_dir(tmp_path: Path) -> None:
    parts = tmp_path / "parts"
    parts.mkdir()
    tables = [numbers_table(i * 1000, 1000) for i in range(3)]
    for i, t in enumerate(tables):
        pq.write_table(t, parts / f"part-{i}.parquet")
    roost_build("-i", str(parts), "--key-column", "id", "--data-dir", str(tmp_path / "data"),
                "--table", "numbers", "--shards", "2", "--format", "block")
    version = tmp_path / "data" / "numbers" / "v000001"
    assert version.is_dir(), list((tmp_path / "data").rglob("*"))
    assert_round_trip(version, pa.concat_tables(tables), "id")


def test_hive_partitioned_dataset(tmp_path: Path) -> None:
    table = numbers_table(0, 300).append_column(
        "region", pa.array(["eu", "us", "ap"] * 100))
    pq.write_to_dataset(table, tmp_path / "hive", partition_cols=["region"])
    assert (tmp_path / "hive" / "region=eu").is_dir()
    roost_build("-i", str(tmp_path / "hive"), "--key-column", "id",
                "--value-columns", "region,name", "-o", str(tmp_path / "t.sst"))
    # The partition column is a value column like any other.
    assert_round_trip(tmp_path / "t.sst", table, "id", ["region", "name"])


def test_arrow_ipc_file(tmp_path: Path) -> None:
    table = numbers_table(0, 100)
    with pa.OSFile(str(tmp_path / "n.arrow"), "wb") as sink:
        with pa.ipc.new_file(sink, table.schema) as w:
            w.write_table(table, max_chunksize=30)
    roost_build("-i", str(tmp_path / "n.arrow"), "--key-column", "id",
                "-o", str(tmp_path / "t.sst"))
    assert_round_trip(tmp_path / "t.sst", table, "id")


def test_refuses_a_null_key_naming_file_row_group_row(tmp_path: Path) -> None:
    table = pa.table({"id": pa.array([1, 2, None, 4]), "v": pa.array([1, 2, 3, 4])})
    pq.write_table(table, tmp_path / "k.parquet", row_group_size=2)
    r = roost_build("-i", str(tmp_path / "k.parquet"), "--key-column", "id",
                    "-o", str(tmp_path / "t.sst"), check=False)
    assert r.returncode == EX_DATAERR, r.stderr
    assert f"{tmp_path}/k.parquet row group 1 row 0, column id: the key is null" in r.stderr
    assert not (tmp_path / "t.sst").exists()


def test_refuses_invalid_utf8_naming_row_and_column(tmp_path: Path) -> None:
    # pyarrow does not check a view of bytes as strings; Parquet keeps them.
    bad = pa.array([b"fine", b"bad \xff here"]).view(pa.string())
    table = pa.table({"id": pa.array(["a", "b"]), "name": bad})
    pq.write_table(table, tmp_path / "u.parquet")
    r = roost_build("-i", str(tmp_path / "u.parquet"), "--key-column", "id",
                    "--data-dir", str(tmp_path / "data"), "--table", "t", check=False)
    assert r.returncode == EX_DATAERR, r.stderr
    assert (f"{tmp_path}/u.parquet row group 0 row 1, column name: invalid UTF-8 at byte 4"
            in r.stderr)
    assert not (tmp_path / "data" / "t" / "v000001").exists()


def test_refuses_an_unsupported_type_before_running(tmp_path: Path) -> None:
    table = pa.table({"id": pa.array([1]),
                      "every": pa.array([pa.MonthDayNano([1, 2, 3])],
                                        pa.month_day_nano_interval())})
    feather.write_feather(table, tmp_path / "h.feather")
    r = roost_build("-i", str(tmp_path / "h.feather"), "--key-column", "id",
                    "-o", str(tmp_path / "t.sst"), check=False)
    assert r.returncode == EX_USAGE, r.stderr
    assert ("column 'every' is month_day_nano_interval, which roost-build does not read"
            in r.stderr)
    assert not (tmp_path / "t.sst").exists()


def test_refuses_missing_columns_naming_those_there_are(tmp_path: Path) -> None:
    pq.write_table(numbers_table(0, 3), tmp_path / "n.parquet")
    r = roost_build("-i", str(tmp_path / "n.parquet"), "--key-column", "user",
                    "--value-columns", "name,age", "-o", str(tmp_path / "t.sst"), check=False)
    assert r.returncode == EX_USAGE, r.stderr
    assert "no column 'user', 'age'; the data has id, score, name, tags" in r.stderr


def test_refuses_a_duplicate_key_naming_both_places(tmp_path: Path) -> None:
    parts = tmp_path / "parts"
    parts.mkdir()
    pq.write_table(pa.table({"id": ["a", "b"], "v": [1, 2]}), parts / "p0.parquet")
    pq.write_table(pa.table({"id": ["c", "b"], "v": [3, 4]}), parts / "p1.parquet")
    r = roost_build("-i", str(parts), "--key-column", "id", "-o", str(tmp_path / "t.sst"),
                    check=False)
    assert r.returncode == EX_DATAERR, r.stderr
    assert (f'{parts}/p1.parquet row group 0 row 1: duplicate key "b" (first seen at '
            f'{parts}/p0.parquet row group 0 row 1)') in r.stderr


def test_a_file_that_fails_midway_publishes_nothing(tmp_path: Path) -> None:
    parts = tmp_path / "parts"
    parts.mkdir()
    pq.write_table(numbers_table(0, 100), parts / "p0.parquet")
    good = (parts / "p0.parquet").read_bytes()
    pq.write_table(numbers_table(100, 100), parts / "p1.parquet")
    # p1's footer is intact, its pages are not: pyarrow fails reading them.
    data = bytearray((parts / "p1.parquet").read_bytes())
    data[4:len(data) // 2] = b"\x55" * (len(data) // 2 - 4)
    (parts / "p1.parquet").write_bytes(bytes(data))
    assert (parts / "p0.parquet").read_bytes() == good
    r = roost_build("-i", str(parts), "--key-column", "id", "--data-dir", str(tmp_path / "data"),
                    "--table", "t", check=False)
    assert r.returncode != 0, r.stderr
    assert "before the end marker" in r.stderr, r.stderr
    assert not (tmp_path / "data" / "t" / "v000001").exists()


def test_parquet_dataset_on_s3(tmp_path: Path) -> None:
    """A Hive-partitioned dataset in a real MinIO (s3_fixture.py), read
    through s3:// and AWS_ENDPOINT_URL."""
    with start_minio(tmp_path, buckets=["data"]) as minio:
        fs = minio.filesystem()
        table = numbers_table(0, 600).append_column("day", pa.array(["d1", "d2"] * 300))
        pq.write_to_dataset(table, "data/users", partition_cols=["day"], filesystem=fs)
        roost_build("-i", "s3://data/users/", "--key-column", "id", "--value-columns",
                    "day,name,tags", "-o", str(tmp_path / "t.sst"),
                    env_extra=minio.environment())
        assert_round_trip(tmp_path / "t.sst", table, "id", ["day", "name", "tags"])


def test_s3_on_container_credentials_alone(tmp_path: Path) -> None:
    """With no keys anywhere but a container credentials endpoint (ECS, EKS
    Pod Identity), roost-build reads s3:// (pyarrow's AWS SDK) and its
    roost-load publishes to s3:// (roost's own chain), both on the REAL
    temporary credentials tests/harness/aws_credentials_standin.py hands out
    from MinIO's STS."""
    with start_minio(tmp_path, buckets=["data", "tables"]) as minio:
        table = numbers_table(0, 300)
        pq.write_to_dataset(table, "data/users", filesystem=minio.filesystem())
        port_file = tmp_path / "standin.port"
        standin = subprocess.Popen(
            [sys.executable, str(ROOT / "tests" / "harness" / "aws_credentials_standin.py"),
             "--minio-endpoint", minio.endpoint, "--minio-access-key",
             minio.environment()["AWS_ACCESS_KEY_ID"], "--minio-secret-key",
             minio.environment()["AWS_SECRET_ACCESS_KEY"], "--container-token", "pod-token",
             "--port-file", str(port_file)])
        try:
            deadline = time.monotonic() + 30
            while not port_file.exists() or not port_file.read_text().strip():
                assert standin.poll() is None and time.monotonic() < deadline, \
                    "the credentials stand-in did not start"
                time.sleep(0.05)
            port = int(port_file.read_text())
            env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
            env.update(AWS_REGION="us-east-1", AWS_ENDPOINT_URL=minio.endpoint,
                       AWS_CONTAINER_CREDENTIALS_FULL_URI=f"http://127.0.0.1:{port}/container/x",
                       AWS_CONTAINER_AUTHORIZATION_TOKEN="pod-token",
                       AWS_EC2_METADATA_DISABLED="true",
                       AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
                       AWS_CONFIG_FILE=str(tmp_path / "none"),
                       ROOST_LOAD=roost_load(), HOME=str(tmp_path))
            script = Path(sys.executable).parent / "roost-build"
            r = subprocess.run([str(script), "-i", "s3://data/users/", "--key-column", "id",
                                "--repository", "s3://tables/prod", "--table", "users"],
                               env=env, capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, r.stderr
            assert "credentials from container" in r.stderr, r.stderr
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=5) as s:
                stats = json.load(s)
            # pyarrow's read and roost-load's publish each asked at least once.
            assert stats.get("container", 0) >= 2, stats
            assert set(stats["container_auth"]) == {"pod-token"}, stats
        finally:
            standin.kill()
            standin.wait()
