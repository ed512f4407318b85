"""Typed rows: roost-row-1 (docs/format/rows.md) decoded into Python.

A table built with `roost-load build --rows` stores each value as a row of
its schema (the MANIFEST's "schema", ListTables' schema_json). `Schema`
reads that JSON; `decode_row` turns one row into a dict of field name to
value, `rows_to_table` a batch of rows into a pyarrow.Table (one column per
field, with numpy doing the work per column rather than Python per row).

Python values, by type: bool -> bool, int32/int64 -> int, float32/float64
-> float, string -> str, bytes -> bytes, float32_list -> list of float,
int64_list -> list of int, string_list -> list of str; a null field ->
None. float32_list is a plain list (not a numpy array) so that a row is
ordinary data (JSON-able, comparable, no numpy needed); for vectors in
bulk take `rows_to_table`, whose list<float32> column hands numpy its
values without a copy (`column.combine_chunks().values.to_numpy()`).

A row that does not fit its schema (cut short, an offset out of order or
past its end, a bool that is not 0 or 1, a null bit on a field that is not
nullable, a list of a partial element, a string that is not UTF-8) raises
ValueError naming the field and, in a batch, the row's index.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Union

ENCODING = "roost-row-1"

# type -> (slot width, struct format of a fixed slot, or None for a
# variable one whose slot is its u32 end offset)
_FIXED = {"bool": (1, "<B"), "int32": (4, "<i"), "int64": (8, "<q"),
          "float32": (4, "<f"), "float64": (8, "<d")}
_VARIABLE = ("string", "bytes", "float32_list", "int64_list", "string_list")
TYPES = tuple(_FIXED) + _VARIABLE
_U32 = struct.Struct("<I")


@dataclass(frozen=True)
class Field:
    name: str
    type: str
    nullable: bool
    offset: int          # of its slot in the row
    width: int           # of its slot
    previous_end: int    # slot offset of the previous variable field, -1: none


class Schema:
    """A roost-row-1 schema: its fields in order, and where each one's slot
    is in a row. `Schema.from_json(text_or_dict)`; `project(names)` is the
    schema of a projected row (the fields asked, in that order)."""

    def __init__(self, fields: Sequence[Mapping[str, Any]]) -> None:
        if not fields:
            raise ValueError("a row schema has at least one field")
        names = set()
        nullable_any = any(bool(f.get("nullable", False)) for f in fields)
        self.bitmap_size = (len(fields) + 7) // 8 if nullable_any else 0
        offset = self.bitmap_size
        previous_end = -1
        parsed = []
        self.raw = [dict(f) for f in fields]
        for i, f in enumerate(fields):
            name, type_ = f.get("name"), f.get("type")
            if not isinstance(name, str) or not name:
                raise ValueError(f"schema field {i}: no name")
            if name in names:
                raise ValueError(f"schema field {name!r}: named twice")
            names.add(name)
            if type_ not in TYPES:
                raise ValueError(f"schema field {name!r}: unknown type {type_!r} "
                                 f"(one of {', '.join(TYPES)})")
            width = _FIXED[type_][0] if type_ in _FIXED else 4
            parsed.append(Field(name, type_, bool(f.get("nullable", False)), offset, width,
                                previous_end if type_ in _VARIABLE else -1))
            if type_ in _VARIABLE:
                previous_end = offset
            offset += width
        self.fields: tuple[Field, ...] = tuple(parsed)
        self.header_size = offset
        self.last_end = previous_end  # slot of the last variable field, -1: none
        self._by_name = {f.name: i for i, f in enumerate(parsed)}
        self._fixed_structs = {f.name: struct.Struct(_FIXED[f.type][1])
                               for f in parsed if f.type in _FIXED}
        self._projections: dict[tuple[str, ...], Schema] = {}

    @classmethod
    def from_json(cls, schema: Union[str, bytes, Mapping[str, Any]]) -> "Schema":
        """From the MANIFEST's "schema" / ListTables' schema_json."""
        doc = json.loads(schema) if isinstance(schema, (str, bytes)) else schema
        if not isinstance(doc, Mapping):
            raise ValueError("a row schema is a JSON object")
        if doc.get("encoding") != ENCODING:
            raise ValueError(f"row encoding {doc.get('encoding')!r} is not {ENCODING!r}")
        fields = doc.get("fields")
        if not isinstance(fields, list):
            raise ValueError("a row schema has a \"fields\" list")
        return cls(fields)

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> Field:
        try:
            return self.fields[self._by_name[name]]
        except KeyError:
            raise ValueError(f"no field {name!r} in the schema (fields: "
                             f"{', '.join(self.names)})") from None

    def project(self, names: Sequence[str]) -> "Schema":
        """The schema of a row projected to these fields, in this order
        (kept: a reader asks for the same fields again and again)."""
        key = tuple(names)
        projected = self._projections.get(key)
        if projected is None:
            projected = Schema([self.raw[self._by_name[self.field(n).name]] for n in names])
            if len(self._projections) < 256:
                self._projections[key] = projected
        return projected

    # -- one row ------------------------------------------------------------

    def decode(self, row: bytes) -> dict[str, Any]:
        """The row's fields, by name, in schema order."""
        view = memoryview(row)
        size = len(view)
        if size < self.header_size:
            raise ValueError(f"row of {size} bytes is shorter than the schema's header "
                             f"({self.header_size} bytes: "
                             f"{'null bitmap and ' if self.bitmap_size else ''}slots), "
                             f"so field {self._field_at(size)!r} is cut short")
        var_size = size - self.header_size
        out: dict[str, Any] = {}
        start = 0
        for i, f in enumerate(self.fields):
            null = bool(self.bitmap_size and view[i >> 3] >> (i & 7) & 1)
            if null and not f.nullable:
                raise ValueError(f"field {f.name!r}: null bit set, but the field is not nullable")
            if f.type in _FIXED:
                if null:
                    out[f.name] = None
                    continue
                (value,) = self._fixed_structs[f.name].unpack_from(view, f.offset)
                if f.type == "bool":
                    if value > 1:
                        raise ValueError(f"field {f.name!r}: bool byte {value} is not 0 or 1")
                    value = bool(value)
                out[f.name] = value
                continue
            (end,) = _U32.unpack_from(view, f.offset)
            if end < start:
                raise ValueError(f"field {f.name!r}: end offset {end} is before its start "
                                 f"{start} (the previous variable field's end)")
            if end > var_size:
                raise ValueError(f"field {f.name!r}: end offset {end} is past the row's "
                                 f"{var_size} bytes of variable data")
            data = view[self.header_size + start:self.header_size + end]
            start = end
            if null:
                if len(data):
                    raise ValueError(f"field {f.name!r} is null but has {len(data)} bytes")
                out[f.name] = None
                continue
            out[f.name] = _decode_variable(f, data)
        if start != var_size:
            raise ValueError(f"row has {var_size - start} bytes past its last field's end"
                             f" (field {self._last_var_name()!r} ends at {start})")
        return out

    def _field_at(self, offset: int) -> str:
        if offset < self.bitmap_size:
            return self.fields[0].name
        for f in self.fields:
            if offset < f.offset + f.width:
                return f.name
        return self.fields[-1].name

    def _last_var_name(self) -> str:
        names = [f.name for f in self.fields if f.type in _VARIABLE]
        return names[-1] if names else "(none: the schema has no variable field)"


def _decode_variable(f: Field, data: memoryview) -> Any:
    n = len(data)
    if f.type == "string":
        try:
            return str(data, "utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"field {f.name!r}: not UTF-8 at byte {e.start}") from None
    if f.type == "bytes":
        return bytes(data)
    if f.type in ("float32_list", "int64_list"):
        width, code = (4, "f") if f.type == "float32_list" else (8, "q")
        if n % width:
            raise ValueError(f"field {f.name!r}: {n} bytes is not a whole number of "
                             f"{width}-byte elements")
        return list(struct.unpack(f"<{n // width}{code}", data))
    # string_list: u32 count, count u32 end offsets, the strings.
    if n < 4:
        raise ValueError(f"field {f.name!r}: {n} bytes, too few for a string_list's count")
    (count,) = _U32.unpack_from(data, 0)
    table_end = 4 + 4 * count
    if table_end > n:
        raise ValueError(f"field {f.name!r}: a string_list of {count} strings needs "
                         f"{table_end} bytes for its offsets, has {n}")
    ends = struct.unpack_from(f"<{count}I", data, 4)
    strings = data[table_end:]
    out, start = [], 0
    for j, end in enumerate(ends):
        if end < start or end > len(strings):
            raise ValueError(f"field {f.name!r}: string {j}'s end offset {end} is out of "
                             f"order or past the {len(strings)} bytes of strings")
        try:
            out.append(str(strings[start:end], "utf-8"))
        except UnicodeDecodeError as e:
            raise ValueError(f"field {f.name!r}: string {j} is not UTF-8 at byte "
                             f"{e.start}") from None
        start = end
    if start != len(strings):
        raise ValueError(f"field {f.name!r}: {len(strings) - start} bytes past the last "
                         f"string's end")
    return out


def decode_row(schema: Schema, row: bytes) -> dict[str, Any]:
    """One roost-row-1 row as a dict (see the module's doc for the types)."""
    return schema.decode(row)


def decode_rows(schema: Schema, rows: Sequence[Optional[bytes]]) -> list[Optional[dict[str, Any]]]:
    """Each row as a dict, None staying None (a key the table lacks); a
    malformed row's ValueError names its index."""
    out: list[Optional[dict[str, Any]]] = []
    for i, row in enumerate(rows):
        if row is None:
            out.append(None)
            continue
        try:
            out.append(schema.decode(row))
        except ValueError as e:
            raise ValueError(f"row {i}: {e}") from None
    return out


def arrow_type(type_: str) -> Any:
    import pyarrow as pa
    return {"bool": pa.bool_(), "int32": pa.int32(), "int64": pa.int64(),
            "float32": pa.float32(), "float64": pa.float64(), "string": pa.string(),
            "bytes": pa.binary(), "float32_list": pa.list_(pa.float32()),
            "int64_list": pa.list_(pa.int64()), "string_list": pa.list_(pa.string())}[type_]


def rows_to_table(schema: Schema, rows: Sequence[Optional[bytes]]) -> Any:
    """A batch of rows as a pyarrow.Table, one column per field in schema
    order, one row per entry of `rows`; a None entry (a missing key) is a
    row of nulls. Every row is checked as `decode_row` checks it, and a
    malformed one raises its ValueError with the row's index.

    The columns are cut from the rows' bytes by numpy, per column: a slot is
    at the same offset in every row, and a variable field's bytes are
    gathered by one index array. string_list columns go through Python."""
    import numpy as np
    import pyarrow as pa

    n = len(rows)
    present = np.fromiter((r is not None for r in rows), dtype=bool, count=n)
    lengths = np.fromiter((len(r) if r is not None else 0 for r in rows), dtype=np.int64,
                          count=n)
    buf = np.frombuffer(b"".join(r for r in rows if r is not None), dtype=np.uint8)
    starts = np.zeros(n, dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    h = schema.header_size

    def fail(mask: Any) -> None:
        # The first bad row, decoded on its own, says what is wrong with it.
        i = int(np.flatnonzero(mask)[0])
        row = rows[i]
        assert row is not None
        try:
            schema.decode(row)
        except ValueError as e:
            raise ValueError(f"row {i}: {e}") from None
        raise AssertionError(f"row {i} failed a check its decoding passes")  # pragma: no cover

    short = present & (lengths < h)
    if short.any():
        fail(short)
    # Rows of nulls stand in for missing keys: give them a header of zeros.
    pstarts = np.where(present, starts, 0)
    if not present.all():
        buf = np.concatenate([buf, np.zeros(h, dtype=np.uint8)])
        pstarts = np.where(present, starts, len(buf) - h)

    def slot(offset: int, width: int) -> Any:
        idx = pstarts[:, None] + (offset + np.arange(width))
        return buf[idx] if n else np.zeros((0, width), dtype=np.uint8)

    if schema.bitmap_size:
        bitmap = slot(0, schema.bitmap_size)
    columns = []
    var_start = np.zeros(n, dtype=np.int64)
    var_size = lengths - h
    for i, f in enumerate(schema.fields):
        null = ~present
        if schema.bitmap_size:
            bit = (bitmap[:, i >> 3] >> (i & 7)) & 1
            if not f.nullable and (bit.astype(bool) & present).any():
                fail(bit.astype(bool) & present)
            null = null | bit.astype(bool)
        validity = ~null
        mask = None if validity.all() else pa.array(null)
        raw = slot(f.offset, f.width)
        if f.type in _FIXED:
            values = raw.copy().view(np.dtype(_FIXED[f.type][1])).reshape(n)
            if f.type == "bool":
                bad = validity & (values > 1)
                if bad.any():
                    fail(bad)
                values = values.astype(bool)
            columns.append(pa.array(values, type=arrow_type(f.type),
                                   mask=None if mask is None else null))
            continue
        end = raw.copy().view("<u4").reshape(n).astype(np.int64)
        bad = present & ((end < var_start) | (end > var_size))
        if bad.any():
            fail(bad)
        size = np.where(present, end - var_start, 0)
        if (null & (size > 0)).any():
            fail(null & (size > 0))
        first = pstarts + h + var_start
        var_start = np.where(present, end, 0)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(size, out=offsets[1:])
        total = int(offsets[-1])
        gather = np.repeat(first - offsets[:-1], size) + np.arange(total)
        data = buf[gather]
        if f.type == "string_list":
            cells: list[Any] = []
            for j in range(n):
                try:
                    cells.append(None if null[j] else _decode_variable(
                        f, memoryview(data[offsets[j]:offsets[j + 1]].tobytes())))
                except ValueError as e:
                    raise ValueError(f"row {j}: {e}") from None
            columns.append(pa.array(cells, type=arrow_type(f.type)))
            continue
        valid_buf = None if mask is None else pa.array(validity).buffers()[1]
        if f.type in ("string", "bytes"):
            large = pa.large_string() if f.type == "string" else pa.large_binary()
            arr = pa.Array.from_buffers(large, n, [valid_buf, pa.py_buffer(offsets),
                                                   pa.py_buffer(data.tobytes())])
            if f.type == "string":
                try:
                    arr.validate(full=True)
                except pa.ArrowInvalid:
                    fail(_bad_utf8(arr, present))
            columns.append(arr.cast(arrow_type(f.type)))
            continue
        width, dtype = (4, "<f4") if f.type == "float32_list" else (8, "<i8")
        partial = present & (size % width != 0)
        if partial.any():
            fail(partial)
        values = pa.array(data.view(dtype) if total else np.zeros(0, dtype=dtype))
        list_offsets = pa.array((offsets // width).astype(np.int32))
        columns.append(pa.ListArray.from_arrays(list_offsets, values, mask=mask))
    trailing = present & (var_start != var_size)
    if trailing.any():
        fail(trailing)
    return pa.Table.from_arrays(columns, names=schema.names)


def _bad_utf8(arr: Any, present: Any) -> Any:
    import numpy as np
    bad = np.zeros(len(arr), dtype=bool)
    for j, value in enumerate(arr.cast("large_binary").to_pylist()):
        if value is not None:
            try:
                value.decode("utf-8")
            except UnicodeDecodeError:
                bad[j] = True
    return bad & present
