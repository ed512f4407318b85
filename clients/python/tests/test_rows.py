"""roost-row-1 rows (ROWS_SPEC / docs/format/rows.md) decoded by roost._rows:
rows made by hand, byte by byte, as the spec lays them out, for every
type, nulls, empty lists and strings, and malformed rows, each refused
with a ValueError naming the field; the pyarrow.Table of a batch equal to
the dicts row by row."""

from __future__ import annotations

import math
import struct

import pytest

from roost._rows import Schema, decode_row, decode_rows, rows_to_table

pa = pytest.importorskip("pyarrow")

EVERY = {"encoding": "roost-row-1", "fields": [
    {"name": "flag", "type": "bool", "nullable": False},
    {"name": "i32", "type": "int32", "nullable": True},
    {"name": "name", "type": "string", "nullable": True},
    {"name": "i64", "type": "int64", "nullable": False},
    {"name": "f32", "type": "float32", "nullable": True},
    {"name": "blob", "type": "bytes", "nullable": False},
    {"name": "f64", "type": "float64", "nullable": True},
    {"name": "emb", "type": "float32_list", "nullable": True},
    {"name": "ids", "type": "int64_list", "nullable": False, "default": []},
    {"name": "tags", "type": "string_list", "nullable": True},
]}


def string_list(items: list[str]) -> bytes:
    data = [s.encode() for s in items]
    ends, end = [], 0
    for d in data:
        end += len(d)
        ends.append(end)
    return struct.pack(f"<I{len(ends)}I", len(ends), *ends) + b"".join(data)


def row(flag=True, i32=-7, name="héllo", i64=-(2**62), f32=1.5, blob=b"\x00\xff",
        f64=math.pi, emb=(0.5, -2.0), ids=(1, -1, 2**40), tags=("a", "", "bc")) -> bytes:
    """The spec's layout, written out for EVERY: bitmap (2 bytes, 10
    fields), slots, the variable fields' bytes in field order."""
    values = [flag, i32, name, i64, f32, blob, f64, emb, ids, tags]
    bitmap = 0
    for i, v in enumerate(values):
        if v is None:
            bitmap |= 1 << i
    var = [b"" if name is None else name.encode(), blob,
           b"" if emb is None else struct.pack(f"<{len(emb)}f", *emb),
           struct.pack(f"<{len(ids)}q", *ids),
           b"" if tags is None else string_list(list(tags))]
    ends, end = [], 0
    for v in var:
        end += len(v)
        ends.append(end)
    return (struct.pack("<H", bitmap)
            + struct.pack("<B", bool(flag))
            + struct.pack("<i", i32 or 0)
            + struct.pack("<I", ends[0])
            + struct.pack("<q", i64)
            + struct.pack("<f", f32 or 0.0)
            + struct.pack("<I", ends[1])
            + struct.pack("<d", f64 or 0.0)
            + struct.pack("<III", ends[2], ends[3], ends[4])
            + b"".join(var))


def test_header_layout():
    s = Schema.from_json(EVERY)
    assert s.bitmap_size == 2
    # 2 + 1 + 4 + 4 + 8 + 4 + 4 + 8 + 4 + 4 + 4
    assert s.header_size == 47
    assert [f.offset for f in s.fields] == [2, 3, 7, 11, 19, 23, 27, 35, 39, 43]


def test_every_type():
    got = decode_row(Schema.from_json(EVERY), row())
    assert got == {"flag": True, "i32": -7, "name": "héllo", "i64": -(2**62), "f32": 1.5,
                   "blob": b"\x00\xff", "f64": math.pi, "emb": [0.5, -2.0],
                   "ids": [1, -1, 2**40], "tags": ["a", "", "bc"]}
    assert list(got) == [f["name"] for f in EVERY["fields"]]


def test_nulls_and_empties():
    r = row(i32=None, name=None, f32=None, f64=None, emb=None, tags=None, blob=b"", ids=())
    assert decode_row(Schema.from_json(EVERY), r) == {
        "flag": True, "i32": None, "name": None, "i64": -(2**62), "f32": None, "blob": b"",
        "f64": None, "emb": None, "ids": [], "tags": None}
    r = row(name="", emb=(), tags=())
    got = decode_row(Schema.from_json(EVERY), r)
    assert (got["name"], got["emb"], got["tags"]) == ("", [], [])


def test_spec_example_without_bitmap():
    # No nullable field: no bitmap. user_id int64, segments string_list.
    s = Schema.from_json('{"encoding": "roost-row-1", "fields": ['
                         '{"name": "user_id", "type": "int64", "nullable": false},'
                         '{"name": "segments", "type": "string_list", "nullable": false}]}')
    assert (s.bitmap_size, s.header_size) == (0, 12)
    body = string_list(["eu", "vip"])
    r = struct.pack("<qI", 42, len(body)) + body
    assert decode_row(s, r) == {"user_id": 42, "segments": ["eu", "vip"]}


def test_projection_schema():
    s = Schema.from_json(EVERY).project(["f64", "name"])
    assert s.names == ["f64", "name"] and s.bitmap_size == 1 and s.header_size == 13
    r = b"\x00" + struct.pack("<dI", 2.5, 2) + b"hi"
    assert decode_row(s, r) == {"f64": 2.5, "name": "hi"}
    s = Schema.from_json(EVERY).project(["i64"])  # no nullable field asked: no bitmap
    assert s.bitmap_size == 0 and decode_row(s, struct.pack("<q", 9)) == {"i64": 9}
    with pytest.raises(ValueError, match="no field 'nope'"):
        Schema.from_json(EVERY).project(["nope"])


def malformed() -> list[tuple[bytes, str]]:
    good = row()
    b = bytearray(good)
    cases = [(good[:20], "field 'f32' is cut short"),
             (good[:-1], "field 'tags'.*past the row"),
             (good + b"x", "1 bytes past its last field's end"),
             ]
    bad = bytearray(b)
    bad[2] = 2  # bool
    cases.append((bytes(bad), "field 'flag': bool byte 2"))
    bad = bytearray(b)
    bad[0] |= 1  # null bit of the non-nullable 'flag'
    cases.append((bytes(bad), "field 'flag': null bit set"))
    bad = bytearray(b)
    struct.pack_into("<I", bad, 23, 0)  # blob's end before name's end
    cases.append((bytes(bad), "field 'blob': end offset 0 is before"))
    bad = bytearray(b)
    struct.pack_into("<I", bad, 7, 10**6)  # name's end past the data
    cases.append((bytes(bad), "field 'name': end offset 1000000 is past"))
    # emb of 7 bytes: a partial float
    r = row(emb=(1.0, 2.0))
    bad = bytearray(r)
    end_name = struct.unpack_from("<I", bad, 7)[0]
    struct.pack_into("<I", bad, 23, end_name + 3)  # blob takes a byte of emb
    cases.append((bytes(bad), "field 'emb': 7 bytes is not a whole number"))
    cases.append((row(name="ok").replace(b"ok", b"\xff\xfe"), "field 'name': not UTF-8"))
    # tags: count says 5 strings
    r = row(tags=("a",))
    bad = bytearray(r)
    start = len(bad) - len(string_list(["a"]))
    struct.pack_into("<I", bad, start, 5)
    cases.append((bytes(bad), "field 'tags': a string_list of 5 strings needs"))
    # A null var field with bytes
    r = row(name="x")
    bad = bytearray(r)
    bad[0] |= 1 << 2
    cases.append((bytes(bad), "field 'name' is null but has 1 bytes"))
    return cases


@pytest.mark.parametrize("data,message", malformed())
def test_malformed_refused(data, message):
    s = Schema.from_json(EVERY)
    with pytest.raises(ValueError, match=message):
        decode_row(s, data)
    with pytest.raises(ValueError, match="row 1: .*" + message):
        decode_rows(s, [row(), data])
    with pytest.raises(ValueError, match="row 2: .*" + message):
        rows_to_table(s, [row(), None, data])


def test_bad_schemas():
    with pytest.raises(ValueError, match="unknown type 'int8'"):
        Schema([{"name": "a", "type": "int8"}])
    with pytest.raises(ValueError, match="'a': named twice"):
        Schema([{"name": "a", "type": "int64"}, {"name": "a", "type": "bool"}])
    with pytest.raises(ValueError, match="encoding 'avro'"):
        Schema.from_json({"encoding": "avro", "fields": []})


def test_table_equals_dicts():
    s = Schema.from_json(EVERY)
    rows = [row(), None, row(i32=None, name=None, f32=None, f64=None, emb=None, tags=None,
                             blob=b"", ids=()),
            row(flag=False, name="", emb=(), tags=(), i32=2**31 - 1, ids=(7,)),
            row(name="z" * 300, emb=tuple(float(i) for i in range(128)), blob=b"\x01" * 70)]
    table = rows_to_table(s, rows)
    assert table.schema.names == s.names
    assert [str(t) for t in table.schema.types] == [
        "bool", "int32", "string", "int64", "float", "binary", "double", "list<item: float>",
        "list<item: int64>", "list<item: string>"]
    dicts = decode_rows(s, rows)
    for i, (got, want) in enumerate(zip(table.to_pylist(), dicts)):
        if want is None:
            assert all(v is None for v in got.values()), i
        else:
            assert got == want, i


def test_table_of_nothing_and_all_missing():
    s = Schema.from_json(EVERY)
    assert rows_to_table(s, []).num_rows == 0
    t = rows_to_table(s, [None, None])
    assert t.num_rows == 2 and all(c.null_count == 2 for c in t.columns)


def test_table_no_bitmap_no_var():
    s = Schema([{"name": "a", "type": "int64"}, {"name": "b", "type": "float32"}])
    t = rows_to_table(s, [struct.pack("<qf", i, i / 2) for i in range(1000)])
    assert t.column("a").to_pylist() == list(range(1000))
    assert t.column("b").to_pylist() == [i / 2 for i in range(1000)]


def test_golden_row_of_rows_md():
    # docs/format/rows.md's worked example (format_golden_test builds the
    # same bytes in C++), and its projection onto ["embedding", "visits"].
    s = Schema.from_json({"encoding": "roost-row-1", "fields": [
        {"name": "ltv", "type": "float64", "nullable": True},
        {"name": "visits", "type": "int32", "nullable": False},
        {"name": "segments", "type": "string_list", "nullable": False},
        {"name": "embedding", "type": "float32_list", "nullable": False},
        {"name": "active", "type": "bool", "nullable": False},
        {"name": "country", "type": "string", "nullable": True}]})
    dump = bytes.fromhex("2000 0000 0000 0029 4007 0000 000f 0000"
                         "0017 0000 0001 1700 0000 0200 0000 0100"
                         "0000 0300 0000 6162 6300 0080 3f00 0000"
                         "bf")
    want = {"ltv": 12.5, "visits": 7, "segments": ["a", "bc"], "embedding": [1.0, -0.5],
            "active": True, "country": None}
    assert decode_row(s, dump) == want
    assert rows_to_table(s, [dump]).to_pylist() == [want]
    projected = bytes.fromhex("08 00 00 00 07 00 00 00 00 00 80 3f 00 00 00 bf")
    assert decode_row(s.project(["embedding", "visits"]), projected) == {
        "embedding": [1.0, -0.5], "visits": 7}


class _Answer:
    def __init__(self, scores, top=()):
        self.scores, self.top = list(scores), list(top)


def test_scores_merged_over_shards():
    from roost._calls import merge_scores, scores_of
    from roost._partition import Split
    keys = [b"k%d" % i for i in range(40)]
    split = Split(keys, 4)
    assert split.positions is not None
    # Every key scored: each shard's scores land at their keys' indexes.
    answers = {s: _Answer([float(i) for i in pos]) for s, pos in split.positions.items()}
    scores, top = merge_scores(scores_of(split, 40, answers, 0), 40, 0)
    assert scores == [float(i) for i in range(40)] and top == []
    # top 3 of each shard, merged: best first, ties to the lower index, NaN never.
    value = {i: (1.0 if i in (5, 30) else math.nan if i == 7 else -i) for i in range(40)}
    answers = {}
    for s, pos in split.positions.items():
        best = sorted((j for j, i in enumerate(pos) if not math.isnan(value[i])),
                      key=lambda j: (-value[pos[j]], pos[j]))[:3]
        answers[s] = _Answer([value[pos[j]] for j in best], best)
    scores, top = merge_scores(scores_of(split, 40, answers, 3), 40, 3)
    assert top == [5, 30, 0] and scores == [1.0, 1.0, 0.0]


def test_score_answers_checked():
    from roost._calls import scores_of
    from roost._errors import RoostError
    from roost._partition import Split
    split = Split([b"a", b"b"], 1)
    with pytest.raises(RoostError, match="asked for 2 keys"):
        scores_of(split, 2, {0: _Answer([1.0])}, 0)
    with pytest.raises(RoostError, match="top 1 answer of 2 indexes"):
        scores_of(split, 2, {0: _Answer([1.0, 2.0], [0, 1])}, 1)
    with pytest.raises(RoostError, match="top 2 answer"):
        scores_of(split, 2, {0: _Answer([1.0], [5])}, 2)
