"""roost-build: Parquet, Arrow IPC or Feather into ``roost-load build``.

Reads a file, a directory of part files or a Hive-partitioned dataset (local
or ``s3://``) with pyarrow, and streams its record batches through a pipe
into ``roost-load build --input-format arrow-columns -i -`` (the stream of
``_stream.py``), reading ahead on a thread while roost-load consumes. Every
flag it does not know is roost-load build's, passed on as given; roost-load's
messages and exit code are roost-build's.
"""

from __future__ import annotations

import argparse
import os
import queue
import shutil
import subprocess
import sys
import threading
from typing import Any, Iterator, List, Optional, Sequence, Tuple

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs

from roost.batch._stream import ColumnStreamWriter, UnsupportedColumnError

EX_USAGE = 64  # sysexits.h, as roost-load's
EX_DATAERR = 65
EX_IOERR = 74

_USAGE = """roost-build -i PATH --key-column K [--value-column V | --value-columns A,B,C]
                   [--input-format auto|parquet|arrow|feather] [roost-load build flags]"""
_EPILOG = """Every other flag is roost-load build's (--output/--data-dir/--repository,
--table, --shards, --format, ...), passed on as given. roost-load is found
by --roost-load, else $ROOST_LOAD, else on PATH.

Values: with --value-column, that column's bytes (a string or binary column;
any other type as its JSON text); else a JSON object of the value columns
(default: every column but the key). docs/format/column_stream.md has the
JSON form of every Arrow type.

Example:
  roost-build -i s3://bucket/users/ --key-column user_id \\
      --repository s3://tables --table users --shards 8
"""


class BuildError(Exception):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="roost-build", usage=_USAGE,
                                description=__doc__.split("\n\n")[0],
                                epilog=_EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-i", "--input", required=True, metavar="PATH",
                   help="a file, a directory of part files or a Hive-partitioned "
                        "dataset; local or s3://bucket/prefix")
    p.add_argument("--input-format", default="auto",
                   choices=["auto", "parquet", "arrow", "feather"],
                   help="by the file names' extension when auto (.parquet, "
                        ".arrow, .ipc, .feather; parquet otherwise)")
    p.add_argument("--key-column", required=True, metavar="K")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--value-column", metavar="V",
                   help="the value is this column's bytes")
    g.add_argument("--value-columns", metavar="A,B,C",
                   help="the value is a JSON object of these columns "
                        "(default: every column but the key)")
    p.add_argument("--rows", action="store_true",
                   help="store each value as a row of typed fields, one per value "
                        "column (roost-load build --rows; docs/format/rows.md)")
    p.add_argument("--roost-load", metavar="PATH",
                   help="the roost-load binary (default: $ROOST_LOAD, then PATH)")
    p.add_argument("--batch-rows", type=int, default=65536, metavar="N",
                   help="rows per record batch read (default 65536)")
    return p


def _filesystem(path: str) -> Tuple[Optional[pafs.FileSystem], str]:
    """pyarrow's filesystem for ``path``: S3 (AWS_ENDPOINT_URL for MinIO and
    other S3-compatible stores) for s3://, else the local one."""
    if not path.startswith("s3://"):
        return None, path
    # As roost-load reads them (repository/s3_client.cc).
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get(
        "AWS_ENDPOINT_URL")
    kwargs: dict[str, Any] = {}
    if endpoint:
        scheme, _, host = endpoint.partition("://")
        kwargs["endpoint_override"] = host.rstrip("/")
        kwargs["scheme"] = scheme
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if region:
        kwargs["region"] = region
    return pafs.S3FileSystem(**kwargs), path[len("s3://"):]


def _format(name: str, path: str, fs: Optional[pafs.FileSystem]) -> str:
    if name == "parquet":
        return "parquet"
    if name in ("arrow", "feather"):
        return "ipc"
    names = [path]
    if fs is None and os.path.isdir(path):
        names = [n for _, _, files in os.walk(path) for n in files]
    elif fs is not None:
        info = fs.get_file_info(path)
        if info.type == pafs.FileType.Directory:
            names = [i.path for i in fs.get_file_info(
                pafs.FileSelector(path, recursive=True))]
    for n in names:
        if n.endswith((".arrow", ".ipc", ".feather", ".arrows")):
            return "ipc"
        if n.endswith((".parquet", ".pq", ".parq")):
            return "parquet"
    return "parquet"


def open_dataset(path: str, input_format: str = "auto") -> ds.Dataset:
    """The dataset at ``path`` (a file, a directory of parts, Hive-partitioned:
    its partition columns are columns)."""
    fs, inner = _filesystem(path)
    fmt = _format(input_format, inner, fs)
    try:
        return ds.dataset(inner, format=fmt, partitioning="hive", filesystem=fs,
                          exclude_invalid_files=False)
    except FileNotFoundError as e:
        raise BuildError(f"roost-build: {path}: {e}", EX_IOERR) from e
    except (pa.ArrowInvalid, OSError) as e:
        raise BuildError(f"roost-build: {path}: {e}", EX_DATAERR) from e


def sourced_batches(dataset: ds.Dataset, columns: Sequence[str],
                    batch_rows: int) -> Iterator[Tuple[pa.RecordBatch, str, int]]:
    """Every batch of ``columns``, with where it comes from: "FILE row group
    G" and its first row there for Parquet, "FILE" and its row for IPC."""
    for fragment in dataset.get_fragments():
        pieces = [fragment]
        parquet = isinstance(fragment, ds.ParquetFileFragment)
        if parquet:
            pieces = fragment.split_by_row_group()
        for piece in pieces:
            label = fragment.path
            if parquet:
                label += f" row group {piece.row_groups[0].id}"
            row = 0
            for batch in piece.to_batches(schema=dataset.schema, columns=list(columns),
                                          batch_size=batch_rows, use_threads=True):
                yield batch, label, row
                row += batch.num_rows


def _roost_load(flag: Optional[str]) -> str:
    found = flag or os.environ.get("ROOST_LOAD") or shutil.which("roost-load")
    if not found:
        raise BuildError("roost-build: roost-load is not on PATH; give "
                         "--roost-load PATH or set ROOST_LOAD", EX_USAGE)
    return found


def _read_ahead(items: Iterator[Any], depth: int) -> Iterator[Any]:
    """``items``, produced on a thread up to ``depth`` ahead of the consumer
    (pyarrow decodes without the GIL while the pipe is written)."""
    q: "queue.Queue[Tuple[str, Any]]" = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                if stop.is_set():
                    return
                q.put(("item", item))
            q.put(("end", None))
        except BaseException as e:  # handed to the consumer, raised there
            q.put(("error", e))

    t = threading.Thread(target=produce, daemon=True)
    t.start()
    try:
        while True:
            kind, item = q.get()
            if kind == "end":
                return
            if kind == "error":
                raise item
            yield item
    finally:
        stop.set()
        while not q.empty():
            q.get_nowait()


def run(argv: Sequence[str]) -> int:
    args, rest = _parser().parse_known_args(argv)
    for flag in ("-i", "--input", "--input-format"):
        if any(r == flag or r.startswith(flag + "=") for r in rest):
            raise BuildError(f"roost-build: {flag} is given twice", EX_USAGE)
    value_columns = (None if args.value_columns is None
                     else [c for c in args.value_columns.split(",") if c])
    dataset = open_dataset(args.input, args.input_format)
    try:
        writer_args = dict(key_column=args.key_column, value_column=args.value_column,
                           value_columns=value_columns)
        # Checks the columns and their types before roost-load starts.
        with open(os.devnull, "wb") as nowhere:
            ColumnStreamWriter(nowhere, dataset.schema, **writer_args)
    except (ValueError, UnsupportedColumnError) as e:
        raise BuildError(f"roost-build: {args.input}: {e}", EX_USAGE) from e
    key = [args.key_column]
    values = ([args.value_column] if args.value_column is not None
              else value_columns if value_columns is not None
              else [n for n in dataset.schema.names if n != args.key_column])
    load = _roost_load(args.roost_load)
    cmd = [load, "build", "--input-format", "arrow-columns", "-i", "-",
           *(["--rows"] if args.rows else []), *rest]
    # Buffered: a raw pipe's write() may write part of a large buffer.
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, bufsize=1 << 16)
    assert proc.stdin is not None
    failure: Optional[BaseException] = None
    try:
        schema = pa.schema([dataset.schema.field(c) for c in key + values])
        writer = ColumnStreamWriter(proc.stdin, schema, args.key_column,
                                    args.value_column, value_columns)
        for batch, label, row in _read_ahead(
                sourced_batches(dataset, key + values, args.batch_rows), 4):
            writer.write_batch(batch, label, row)
        writer.close()
    except BrokenPipeError:
        pass  # roost-load stopped reading: its exit code says why
    except Exception as e:  # pyarrow's, a cast's: reported once roost-load is done
        failure = e
    finally:
        try:
            proc.stdin.close()  # without the end marker if we failed
        except BrokenPipeError:
            pass
    code = proc.wait()
    if failure is not None:
        print(f"roost-build: {args.input}: {failure}", file=sys.stderr)
        return code if code != 0 else EX_DATAERR
    return code


def main(argv: Optional[List[str]] = None) -> int:
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except BuildError as e:
        print(e, file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
