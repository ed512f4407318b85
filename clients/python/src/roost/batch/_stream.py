"""The arrow-columns stream: Arrow record batches, as their own buffers.

``ColumnStreamWriter`` writes what ``roost-load build --input-format
arrow-columns`` reads (docs/format/column_stream.md): a header naming the
key column, the value columns and their types, then each record batch's
arrays as Arrow lays them out in memory (validity bitmaps, offsets, values,
child arrays), then an end marker. The buffers are written as pyarrow holds
them, without a Python loop over rows; dictionary and view columns are cast
to their plain types first (vectorised).

Example::

    with open("users.cols", "wb") as out:
        writer = ColumnStreamWriter(out, table.schema, key_column="id")
        for batch in table.to_batches():
            writer.write_batch(batch, source="users.parquet row group 0")
        writer.close()

The writer is what ``roost-build`` uses, and what a Spark job's executors
can use on the batches ``mapInArrow`` gives them.
"""

from __future__ import annotations

import struct
from typing import IO, Iterable, List, Optional, Sequence, Tuple, Union

import pyarrow as pa

MAGIC = b"ROOSTCOL"
VERSION = 1
_BATCH = b"\x01"
_END = b"\x00"

# Type codes of docs/format/column_stream.md.
_FIXED_CODES = {
    pa.int8(): 2, pa.int16(): 3, pa.int32(): 4, pa.int64(): 5,
    pa.uint8(): 6, pa.uint16(): 7, pa.uint32(): 8, pa.uint64(): 9,
    pa.float32(): 10, pa.float64(): 11,
}
_UNITS = {"s": 0, "ms": 1, "us": 2, "ns": 3}
_Piece = Union[bytes, memoryview]


class UnsupportedColumnError(ValueError):
    """A column whose Arrow type the stream cannot carry (float16, decimal256,
    unions, intervals, extension types, a map with non-string keys)."""


def _u32(v: int) -> bytes:
    return struct.pack("<I", v)


def _string(s: str) -> bytes:
    b = s.encode("utf-8")
    return _u32(len(b)) + b


def plain_type(t: pa.DataType) -> pa.DataType:
    """``t`` with dictionaries replaced by their value type and view types by
    their plain ones, all the way down (what the stream carries)."""
    if pa.types.is_dictionary(t):
        return plain_type(t.value_type)
    if t == pa.string_view():
        return pa.string()
    if t == pa.binary_view():
        return pa.binary()
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(plain_type(t.value_type)))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(t.value_field.with_type(plain_type(t.value_type)),
                        t.list_size)
    if pa.types.is_map(t):
        return pa.map_(plain_type(t.key_type), plain_type(t.item_type))
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(plain_type(t.value_type)))
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(plain_type(t.field(i).type))
                          for i in range(t.num_fields)])
    return t


def encode_type(t: pa.DataType, column: str) -> bytes:
    """The stream's bytes for plain type ``t``; UnsupportedColumnError
    naming ``column`` and the type for one it cannot carry."""
    if t in _FIXED_CODES:
        return bytes([_FIXED_CODES[t]])
    if pa.types.is_null(t):
        return b"\x00"
    if pa.types.is_boolean(t):
        return b"\x01"
    if pa.types.is_string(t):
        return b"\x0c"
    if pa.types.is_large_string(t):
        return b"\x0d"
    if pa.types.is_binary(t):
        return b"\x0e"
    if pa.types.is_large_binary(t):
        return b"\x0f"
    if pa.types.is_fixed_size_binary(t) and not pa.types.is_decimal(t):
        return b"\x10" + struct.pack("<i", t.byte_width)
    if pa.types.is_date32(t):
        return b"\x11"
    if pa.types.is_date64(t):
        return b"\x12"
    if pa.types.is_timestamp(t):
        return b"\x13" + bytes([_UNITS[t.unit]]) + _string(t.tz or "")
    if pa.types.is_time32(t):
        return b"\x14" + bytes([_UNITS[t.unit]])
    if pa.types.is_time64(t):
        return b"\x15" + bytes([_UNITS[t.unit]])
    if pa.types.is_duration(t):
        return b"\x16" + bytes([_UNITS[t.unit]])
    if pa.types.is_decimal128(t):
        return b"\x17" + struct.pack("<ii", t.precision, t.scale)
    if pa.types.is_large_list(t):
        return b"\x19" + encode_type(t.value_type, column)
    if pa.types.is_fixed_size_list(t):
        return (b"\x1a" + struct.pack("<i", t.list_size)
                + encode_type(t.value_type, column))
    if pa.types.is_map(t):
        if not (pa.types.is_string(t.key_type)
                or pa.types.is_large_string(t.key_type)):
            raise UnsupportedColumnError(
                f"column {column!r} is {t}: a map becomes a JSON object, "
                "whose keys must be strings")
        return (b"\x1c" + encode_type(t.key_type, column)
                + encode_type(t.item_type, column))
    if pa.types.is_list(t):
        return b"\x18" + encode_type(t.value_type, column)
    if pa.types.is_struct(t):
        out = b"\x1b" + _u32(t.num_fields)
        for i in range(t.num_fields):
            f = t.field(i)
            out += _string(f.name) + encode_type(f.type, column)
        return out
    raise UnsupportedColumnError(
        f"column {column!r} is {t}, which roost-build does not read "
        "(docs/format/column_stream.md lists the types it does)")


def _own_buffer_count(t: pa.DataType) -> int:
    if pa.types.is_null(t):
        return 1
    if (pa.types.is_string(t) or pa.types.is_large_string(t)
            or pa.types.is_binary(t) or pa.types.is_large_binary(t)):
        return 3
    if pa.types.is_struct(t) or pa.types.is_fixed_size_list(t):
        return 1
    return 2  # fixed width, bool, list, large_list, map


def _trim(buf: Optional[pa.Buffer], size: int) -> _Piece:
    if buf is None or size <= 0:
        return b""
    return memoryview(buf)[:size]


def _offsets(buf: Optional[pa.Buffer], end: int, width: int) -> _Piece:
    """Offsets [0, end]: an empty array may have no buffer, but the stream
    holds its one offset."""
    if buf is None or buf.size < (end + 1) * width:
        return bytes((end + 1) * width)
    return memoryview(buf)[:(end + 1) * width]


def _array(a: pa.Array, pieces: List[_Piece]) -> int:
    """Appends array ``a`` (the format's "Arrays") to ``pieces``; returns the
    bytes appended."""
    t = a.type
    if a.offset != 0:
        # A slice (pyarrow's batches of a row group are slices of it): its
        # buffers and children hold the whole row group. One copy of the
        # slice alone, compact at offset 0, is cheaper than writing them.
        a = pa.concat_arrays([a])
    own = a.buffers()[:_own_buffer_count(t)]
    end = a.offset + len(a)
    head = struct.pack("<QQQ", len(a), a.offset, a.null_count)
    bufs: List[_Piece] = []
    if pa.types.is_null(t):
        bufs.append(b"")
    else:
        bufs.append(_trim(own[0], (end + 7) // 8) if a.null_count else b"")
    children: List[pa.Array] = []
    if pa.types.is_boolean(t):
        bufs.append(_trim(own[1], (end + 7) // 8))
    elif (pa.types.is_string(t) or pa.types.is_binary(t)
          or pa.types.is_large_string(t) or pa.types.is_large_binary(t)):
        w = 8 if (pa.types.is_large_string(t)
                  or pa.types.is_large_binary(t)) else 4
        offsets = _offsets(own[1], end, w)
        bufs.append(offsets)
        last = (struct.unpack_from("<q" if w == 8 else "<i", offsets,
                                   end * w)[0] if len(offsets) else 0)
        bufs.append(_trim(own[2], last))
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
        w = 8 if pa.types.is_large_list(t) else 4
        offsets = _offsets(own[1], end, w)
        bufs.append(offsets)
        # The child as the offsets index it, without what follows the last.
        last = struct.unpack_from("<q" if w == 8 else "<i", offsets, end * w)[0]
        values = a.values.slice(0, last)
        if pa.types.is_map(t):
            children = [values.field(0), values.field(1)]
        else:
            children = [values]
    elif pa.types.is_fixed_size_list(t):
        children = [a.values.slice(0, end * t.list_size)]
    elif pa.types.is_struct(t):
        children = [a.field(i) for i in range(t.num_fields)]
    elif not pa.types.is_null(t):
        width = t.byte_width
        bufs.append(_trim(own[1], end * width))
    pieces.append(head)
    total = len(head)
    for b in bufs:
        size = struct.pack("<Q", len(b))
        pieces.append(size)
        pieces.append(b)
        total += 8 + len(b)
    for c in children:
        total += _array(c, pieces)
    return total


class ColumnStreamWriter:
    """Writes an arrow-columns stream to a binary file object.

    ``schema`` is the batches' schema; ``key_column`` names the key (a string,
    binary or integer column). The value is ``value_column``'s bytes when it
    is given, else a JSON object of ``value_columns`` (default: every column
    but the key, in schema order). Raises ValueError naming the columns the
    schema has when one is missing, and UnsupportedColumnError for a type the
    stream cannot carry; both before anything is written.
    """

    def __init__(self, out: IO[bytes], schema: pa.Schema, key_column: str,
                 value_column: Optional[str] = None,
                 value_columns: Optional[Sequence[str]] = None) -> None:
        if value_column is not None and value_columns is not None:
            raise ValueError("give value_column or value_columns, not both")
        if value_column is not None:
            values = [value_column]
        elif value_columns is not None:
            values = list(value_columns)
        else:
            values = [n for n in schema.names if n != key_column]
        columns = [key_column] + values
        missing = [c for c in columns if c not in schema.names]
        if missing:
            raise ValueError(
                f"no column {', '.join(repr(m) for m in missing)}; "
                f"the data has {', '.join(schema.names)}")
        if not values:
            raise ValueError(f"no value columns: the data has only {key_column!r}")
        if len(set(columns)) != len(columns):
            raise ValueError(
                f"a column is named twice among {', '.join(columns)} "
                "(the key column is not a value column)")
        self._out = out
        self._indices = [schema.get_field_index(c) for c in columns]
        self._types = [plain_type(schema.field(i).type) for i in self._indices]
        key_type = self._types[0]
        if not (pa.types.is_string(key_type) or pa.types.is_large_string(key_type)
                or pa.types.is_binary(key_type) or pa.types.is_large_binary(key_type)
                or pa.types.is_fixed_size_binary(key_type)
                or pa.types.is_integer(key_type)):
            raise UnsupportedColumnError(
                f"key column {key_column!r} is {key_type}: a key is a string, "
                "binary or integer column")
        header = bytes([0 if value_column is not None else 1]) + _u32(len(columns))
        for name, t in zip(columns, self._types):
            header += _string(name) + encode_type(t, name)
        self._header = MAGIC + struct.pack("<II", VERSION, len(header)) + header
        self._started = False

    def _start(self) -> None:
        if not self._started:
            self._out.write(self._header)
            self._started = True

    def write_batch(self, batch: pa.RecordBatch, source: str = "",
                    first_row: int = 0) -> None:
        """Writes one batch. ``source`` names where its rows come from in
        roost-load's messages ("part-0.parquet row group 3"), and
        ``first_row`` is the first one's row there (from 0)."""
        self._start()
        pieces: List[_Piece] = []
        head = _string(source) + struct.pack("<QQ", first_row, batch.num_rows)
        total = len(head)
        pieces.append(head)
        for i, t in zip(self._indices, self._types):
            column = batch.column(i)
            if column.type != t:
                column = column.cast(t)
            total += _array(column, pieces)
        self._out.write(_BATCH + struct.pack("<Q", total))
        for p in pieces:
            if len(p):
                self._out.write(p)

    def close(self) -> None:
        """Writes the end marker (a stream without it is refused as cut
        short). Does not close the file object."""
        self._start()
        self._out.write(_END)
        self._out.flush()


SourcedBatch = Tuple[pa.RecordBatch, str, int]


def write_column_stream(out: IO[bytes], schema: pa.Schema,
                        batches: Iterable[Union[pa.RecordBatch, SourcedBatch]],
                        key_column: str, value_column: Optional[str] = None,
                        value_columns: Optional[Sequence[str]] = None) -> None:
    """Writes a whole stream: the header, every batch (a RecordBatch, or a
    ``(batch, source, first_row)`` tuple), the end marker."""
    writer = ColumnStreamWriter(out, schema, key_column, value_column,
                                value_columns)
    for item in batches:
        if isinstance(item, tuple):
            writer.write_batch(*item)
        else:
            writer.write_batch(item)
    writer.close()
