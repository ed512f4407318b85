"""The packed MultiGet answer (lookup.proto, MultiGetRequest.packed): both
answer forms decoded alike, the fixed-width fast path against real servers,
and packed bytes that do not add up refused with an error naming the shard."""

from __future__ import annotations

import random
from typing import Any

import pytest

import roost
from roost._calls import values_of
from roost.v1 import lookup_pb2

from conftest import Cluster


def classic(values: list[bytes | None]) -> lookup_pb2.MultiGetResponse:
    response = lookup_pb2.MultiGetResponse(version="v000001")
    for v in values:
        response.results.add(found=v is not None, value=v or b"")
    return response


def packed(values: list[bytes | None]) -> lookup_pb2.MultiGetResponse:
    """As the server packs them: one width when every found value has it."""
    response = lookup_pb2.MultiGetResponse(version="v000001")
    response.packed_values = b"".join(v for v in values if v is not None)
    response.missing.extend(i for i, v in enumerate(values) if v is None)
    widths = {len(v) for v in values if v is not None}
    if len(widths) == 1 and 0 not in widths:
        response.packed_width = widths.pop()
    else:
        response.packed_sizes.extend(len(v) if v is not None else 0 for v in values)
    return response


CASES = [
    [],
    [b"xy", None, b"z"],  # lookup.proto's worked examples
    [b"xy", None, b"zw"],
    [b"", b"", b""],  # empty values are values
    [None, None],
    [b"12345678"] * 50,  # one width
    [None, None] + [b"12345678"] * 10 + [None] + [b"12345678"] * 5 + [None],
    [b"ab", b"", b"cd"],  # an empty value: sizes, not a width
    [b"a" * 300, b"", b"b", None, b"c" * 200],
]


@pytest.mark.parametrize("values", CASES)
def test_both_forms_decode_alike(values: list[bytes | None]) -> None:
    assert values_of(classic(values), len(values), 0) == values
    assert values_of(packed(values), len(values), 0) == values
    # The worked examples' bytes, as lookup.proto spells them out.
    if values == [b"xy", None, b"z"]:
        assert packed(values).SerializeToString() == (
            b"\x12\x07v000001\x1a\x03xyz\x22\x03\x02\x00\x01\x2a\x01\x01")
    if values == [b"xy", None, b"zw"]:
        assert packed(values).SerializeToString() == (
            b"\x12\x07v000001\x1a\x04xyzw\x2a\x01\x01\x30\x02")


def test_packed_bytes_that_do_not_add_up_are_refused() -> None:
    def bad(values: list[bytes | None], mutate: Any) -> lookup_pb2.MultiGetResponse:
        r = packed(values)
        mutate(r)
        return r

    mixed: list[bytes | None] = [b"ab", None, b"c"]
    fixed: list[bytes | None] = [b"ab", None, b"cd", None]
    cases: list[tuple[lookup_pb2.MultiGetResponse, str]] = [
        (bad(mixed, lambda r: r.packed_sizes.pop()), "asked for 3 keys, the server answered 2"),
        (bad(mixed, lambda r: setattr(r, "packed_values", b"abcde")),
         "the packed values are 5 bytes, their sizes add up to 3"),
        (bad(mixed, lambda r: r.missing.append(7)), "names key 7 missing, of 3 keys"),
        (bad(mixed, lambda r: r.missing.append(0)),
         "names key 0 missing, out of order or with a value"),
        (bad(mixed, lambda r: r.results.add(found=True, value=b"x")), "in both forms at once"),
        (bad(fixed, lambda r: setattr(r, "packed_values", b"abc")),
         "the packed values are 3 bytes, where 2 values of 2 were expected"),
        (bad(fixed, lambda r: r.packed_sizes.extend([2, 0, 2, 0])), "where 2 values of 2"),
        (bad(fixed, lambda r: r.missing.reverse()), "names key 1 missing, out of order"),
        (bad(fixed, lambda r: r.missing.append(9)), "where 1 values of 2"),
    ]
    for response, message in cases:
        n = 3 if response.packed_width == 0 else 4
        with pytest.raises(roost.RoostError, match=f"shard 2: .*{message}"):
            values_of(response, n, 2)
    with pytest.raises(roost.RoostError, match="asked for 4 keys, the server answered 3"):
        values_of(classic([b"a", b"b", b"c"]), 4, 0)


def test_fixed_width_values_through_real_servers(cluster: Cluster) -> None:
    # Every value 8 bytes: the decoder's struct path, with and without
    # misses in a batch, over three shards.
    kvs = {f"key{i:05d}".encode(): i.to_bytes(8, "little") for i in range(3000)}
    cluster.build("fixed", kvs, shards=3)
    layout = [[cluster.server(shard=s).address] for s in range(3)]
    with roost.Client(layout, timeout=30) as client:
        keys = list(kvs)
        random.Random(3).shuffle(keys)
        for start in range(0, len(keys), 1000):
            batch = keys[start:start + 1000]
            assert client.get_many("fixed", batch) == [kvs[k] for k in batch]
        batch = keys[:200] + [b"missing"] + keys[200:400]
        assert client.get_many("fixed", batch) == [kvs.get(k) for k in batch]
