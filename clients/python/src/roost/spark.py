"""Publishing a Spark DataFrame as a version of a roost table, built on the
executors that computed it.

`publish` claims the table's next version in the repository (driver), routes
every row to its shard by roost's own partition function (the one the
clients route by: docs/format/partitioning.md), builds each shard where its
rows are (an executor runs `roost-load build --shard I` on them and uploads
the shard file straight to the repository), and only once every shard is
there does the driver publish the version (`roost-load publish`: every
shard checked against its checksum and key count, then the MANIFEST, then
the POINTER). All or nothing: a job that fails or is killed before that
leaves an incomplete version, which no server serves and retention removes
(`roost-load prune --abandoned-after`, or the next publish with
`keep_versions`).

Retried and speculative tasks: `roost-load build --shard` writes a shard
file that depends only on the shard's set of records, not on their order,
so two attempts at one shard upload the same bytes to the same object.

Example:
    import roost.spark
    df = spark.read.parquet("s3a://lake/features/date=2024-05-01")
    roost.spark.publish(df, table="features", key="user_id",
                        value_columns=["ltv", "segments"],
                        repository="s3://tables/prod", shards=16)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Any, Iterator, Optional, Sequence

__all__ = ["publish", "PublishError"]

#: The Spark conf key that names the roost-load binary on the executors
#: (and the driver), when it is not on their PATH as "roost-load".
LOAD_BINARY_CONF = "spark.roost.loadBinary"

_SHARD_COLUMN = "__roost_shard"


class PublishError(RuntimeError):
    """A step of publish failed; the message says which and why. Nothing was
    published (the version claimed stays incomplete until retention)."""


def _roost_load(spark: Any, given: Optional[str]) -> str:
    if given:
        return given
    conf = spark.conf.get(LOAD_BINARY_CONF, None)
    if conf:
        return str(conf)
    found = shutil.which("roost-load")
    if not found:
        raise PublishError(
            "roost-load is not on PATH: give roost_load=PATH, or set the Spark "
            f"conf {LOAD_BINARY_CONF}")
    return found


def _run(cmd: Sequence[str], what: str, stdin: Optional[bytes] = None) -> str:
    """Runs a roost-load command to its end: its stdout, or PublishError with
    its stderr (roost-load's message names what was wrong)."""
    proc = subprocess.run(list(cmd), input=stdin if stdin is not None else b"",
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        raise PublishError(f"{what} failed (roost-load exit {proc.returncode}): "
                           f"{proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout.decode()


def _shard_ids(keys: Any, shards: int) -> Any:
    """The shard of every key of the Arrow array `keys`, as roost-load will
    read the key (docs/format/column_stream.md): a string's or binary's bytes,
    an integer's decimal text. A null key goes to shard 0, whose build
    refuses it naming its row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from roost._partition import shards_of

    if pa.types.is_integer(keys.type):
        keys = pc.cast(keys, pa.string())
    if pa.types.is_large_string(keys.type):
        keys = pc.cast(keys, pa.large_binary())
    elif pa.types.is_string(keys.type) or pa.types.is_fixed_size_binary(keys.type):
        keys = pc.cast(keys, pa.binary())
    keys = keys.fill_null(b"")
    return pa.array(shards_of(keys.to_pylist(), shards), pa.int32())


class _ShardBuild:
    """One shard's `roost-load build --shard`, fed an arrow-columns stream on
    its stdin (on an executor)."""

    def __init__(self, cmd: list[str], out: Any, err: Any) -> None:
        self.out, self.err = out, err
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=out, stderr=err)
        self.writer: Any = None
        self.rows = 0
        self.broken = False  # roost-load stopped reading: its exit says why

    def stdin(self) -> Any:
        return self.proc.stdin

    def write(self, batch: Any, source: str) -> None:
        if self.broken:
            return
        try:
            self.writer.write_batch(batch, source, self.rows)
        except BrokenPipeError:
            self.broken = True
        self.rows += batch.num_rows

    def finish(self) -> tuple[int, str, str]:
        """Ends the stream; roost-load's exit code, stdout and stderr."""
        assert self.proc.stdin is not None
        try:
            if not self.broken:
                self.writer.close()
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        code = self.proc.wait()
        self.out.seek(0)
        self.err.seek(0)
        return (code, self.out.read().decode(errors="replace"),
                self.err.read().decode(errors="replace").strip())

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.out.close()
        self.err.close()


def publish(df: Any, *, table: str, key: str, repository: str, shards: int,
            value: Optional[str] = None,
            value_columns: Optional[Sequence[str]] = None,
            format: str = "cuckoo", roost_load: Optional[str] = None,
            keep_versions: Optional[int] = None,
            abandoned_after: Optional[str] = None,
            data_timestamp: Optional[str] = None,
            build_args: Sequence[str] = ()) -> dict[str, Any]:
    """Builds `df` into the next version of `table` in `repository` (the URIs
    of roost-load: s3://BUCKET/PREFIX, file:///PATH) with `shards` shards (2
    to 1024), and publishes it; returns roost-load publish's JSON summary
    (`version_name`, `keys`, ...).

    `key` names the key column (string, binary or integer: an integer's key is
    its decimal text). The value is `value`'s bytes, or a JSON object of
    `value_columns` (default: every column but the key), typed as
    docs/format/column_stream.md says. `format` is "cuckoo" or "block";
    `build_args` are more flags for each shard's `roost-load build` (e.g.
    ["--memory-limit", "4G"]). `keep_versions` and `abandoned_after` run
    retention after publishing, as `roost-load publish` does (an earlier job
    killed before its publish left an incomplete version: this removes it).

    roost-load runs on the executors (and the driver): `roost_load`, else the
    Spark conf spark.roost.loadBinary, else "roost-load" on PATH. The
    executors need the repository's credentials as roost-load reads them
    (the AWS_* variables, a web identity token, an instance role, ...).
    `df` is read twice at most per shard on a retry: it must give the same
    rows each time (cache or checkpoint a DataFrame that would not).

    Raises PublishError naming the step that failed; nothing is published
    then.
    """
    if not 2 <= shards <= 1024:
        raise ValueError(f"shards is 2 to 1024, not {shards}")
    if format not in ("cuckoo", "block"):
        raise ValueError(f'format is "cuckoo" or "block", not {format!r}')
    if value is not None and value_columns is not None:
        raise ValueError("give value or value_columns, not both")
    names = list(df.columns)
    values = ([value] if value is not None else list(value_columns)
              if value_columns is not None else [n for n in names if n != key])
    missing = [c for c in [key] + values if c not in names]
    if missing:
        raise ValueError(f"no column {', '.join(map(repr, missing))}; the DataFrame "
                         f"has {', '.join(names)}")
    if _SHARD_COLUMN in names:
        raise ValueError(f"the DataFrame has a column named {_SHARD_COLUMN}, "
                         "which publish adds")

    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import IntegerType, StringType, StructField, StructType

    spark = df.sparkSession
    load = _roost_load(spark, roost_load)
    where = ["--repository", repository, "--table", table]
    claimed = json.loads(_run([load, "claim", *where, "--output-format", "json"],
                              f"claiming the next version of {table}"))
    version = claimed["version_name"]

    selected = df.select(key, *values)
    arrow_schema = to_arrow_schema(selected.schema)
    value_flags: dict[str, Any] = ({"value_column": value} if value is not None
                                   else {"value_columns": values})
    build = [load, "build", "--input-format", "arrow-columns", "-i", "-", *where,
             "--shards", str(shards), "--version", version, "--format", format,
             "--output-format", "json", "-q", *build_args]
    n = shards

    def route(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            yield batch.append_column(_SHARD_COLUMN, _shard_ids(batch.column(0), n))

    routed_schema = StructType(selected.schema.fields
                               + [StructField(_SHARD_COLUMN, IntegerType(), False)])
    result_schema = StructType([StructField("shard", IntegerType(), False),
                                StructField("summary", StringType(), False)])

    def build_shards(batches: Iterator[Any]) -> Iterator[Any]:
        # Every shard whose rows this partition holds (all of each shard's
        # rows are here: the repartition is by shard), each into a
        # roost-load of its own, fed as the batches come. Their output goes
        # to files, so that none blocks on a full pipe while it is fed.
        import tempfile

        import pyarrow as pa
        import pyarrow.compute as pc
        from pyspark import TaskContext

        from roost.batch import ColumnStreamWriter

        context = TaskContext.get()
        label = f"spark partition {context.partitionId() if context else '?'}"
        running: dict[int, _ShardBuild] = {}
        try:
            for batch in batches:
                ids = batch.column(batch.num_columns - 1)
                rows = batch.drop_columns([_SHARD_COLUMN])
                for s in pc.unique(ids).to_pylist():
                    if s not in running:
                        running[s] = _ShardBuild(build + ["--shard", str(s)],
                                                 tempfile.TemporaryFile(),
                                                 tempfile.TemporaryFile())
                        running[s].writer = ColumnStreamWriter(
                            running[s].stdin(), arrow_schema, key, **value_flags)
                    part = rows.filter(pc.equal(ids, pa.scalar(s, pa.int32())))
                    running[s].write(part, f"{label} shard {s}")
            failed = []
            for s, b in sorted(running.items()):
                code, out, err = b.finish()
                if code != 0:
                    failed.append(f"shard {s} (roost-load exit {code}): {err}")
                else:
                    yield pa.RecordBatch.from_pydict(
                        {"shard": [s], "summary": [out]},
                        schema=pa.schema([("shard", pa.int32(), False),
                                          ("summary", pa.string(), False)]))
            if failed:
                raise RuntimeError("roost-load build failed for " + "; ".join(failed))
        finally:
            for b in running.values():
                b.kill()

    try:
        built = (selected.mapInArrow(route, routed_schema)
                 .repartition(shards, _SHARD_COLUMN)
                 .mapInArrow(build_shards, result_schema)
                 .collect())
    except Exception as e:  # Spark's wrapping of the task's error
        raise PublishError(f"building the shards of {table} {version} failed; nothing "
                           f"was published ({version} stays incomplete until "
                           f"retention removes it): {e}") from e

    # Shards no row went to: empty tables of their shard, built here.
    done = {row["shard"] for row in built}
    if len(done) != len(built):
        raise PublishError(f"a shard of {table} {version} was built twice in one job")
    for s in sorted(set(range(shards)) - done):
        import io

        from roost.batch import ColumnStreamWriter

        empty = io.BytesIO()
        ColumnStreamWriter(empty, arrow_schema, key, **value_flags).close()
        _run(build + ["--shard", str(s)], f"building empty shard {s} of {table} {version}",
             stdin=empty.getvalue())

    command = [load, "publish", *where, "--version", version, "--shards", str(shards),
               "--output-format", "json", "-q"]
    if keep_versions is not None:
        command += ["--keep-versions", str(keep_versions)]
    if abandoned_after is not None:
        command += ["--abandoned-after", abandoned_after]
    if data_timestamp is not None:
        command += ["--data-timestamp", data_timestamp]
    summary: dict[str, Any] = json.loads(
        _run(command, f"publishing {table} {version}"))
    return summary
