"""The partition function against every row of the committed test vectors
(docs/format/partition_vectors.tsv), and the split of a batch by shard."""

from __future__ import annotations

import bisect
import random

import pytest

import roost
from roost._partition import Split, _bounds, shards_of

from conftest import ROOT

VECTORS = ROOT / "docs" / "format" / "partition_vectors.tsv"


def vectors() -> tuple[list[int], list[list[str]]]:
    rows = [line.split("\t") for line in VECTORS.read_text("utf-8").splitlines()
            if line and not line.startswith("#")]
    header, rows = rows[0], rows[1:]
    assert header[:2] == ["key_hex", "xxh3_64"], header
    return [int(n) for n in header[2:]], rows


def test_every_vector() -> None:
    counts, rows = vectors()
    assert len(rows) > 100 and counts == [1, 2, 3, 4, 7, 16, 64, 1000]
    for row in rows:
        key = bytes.fromhex(row[0])
        assert f"{roost.partition_hash(key):016x}" == row[1], row[0]
        for n, want in zip(counts, row[2:]):
            assert roost.partition_of(key, n) == int(want), (row[0], n)


def test_the_worked_examples() -> None:
    assert roost.PARTITION_SEED == 491495846772
    assert roost.partition_hash(b"") == 0xB44BAE46EA74D054
    assert [roost.partition_of(b"user1", n) for n in (4, 7, 1000)] == [3, 5, 823]


def test_a_str_key_is_its_utf8() -> None:
    assert roost.partition_of("user1", 4) == 3
    assert roost.partition_hash("clé") == roost.partition_hash("clé".encode())
    with pytest.raises(TypeError, match=r"^a key is bytes \(or str, sent as UTF-8\), not int$"):
        roost.partition_of(1, 4)  # type: ignore[arg-type]
    assert [roost.partition_of(b"\x00\xff", n) for n in (4, 7, 1000)] == [0, 0, 137]


@pytest.mark.parametrize("n", [0, -1, 1025])
def test_a_shard_count_out_of_range_is_refused(n: int) -> None:
    with pytest.raises(ValueError, match="1 to 1024 shards"):
        roost.partition_of(b"k", n)


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_split_keeps_request_order_per_shard(n: int) -> None:
    rng = random.Random(n)
    batch = [rng.randbytes(rng.randrange(0, 20)) for _ in range(500)]
    batch += batch[:50]  # duplicates stay, each in its place
    split = Split(batch, n)
    if n == 1:
        assert split.positions is None and list(split.keys[0]) == batch
        return
    assert split.positions is not None
    seen = sorted(i for positions in split.positions.values() for i in positions)
    assert seen == list(range(len(batch)))
    for shard, keys in split.keys.items():
        positions = split.positions[shard]
        assert positions == sorted(positions)
        assert list(keys) == [batch[i] for i in positions]
        assert all(roost.partition_of(k, n) == shard for k in keys)


@pytest.mark.parametrize("n", [1, 3])
def test_split_puts_each_shards_keys_in_parts_of_max_batch(n: int) -> None:
    rng = random.Random(n)
    batch = [rng.randbytes(8) for _ in range(100)]
    split = Split(batch, n, max_batch=7)
    assert split.positions is not None
    seen = sorted(i for positions in split.positions.values() for i in positions)
    assert seen == list(range(len(batch)))
    for shard in range(n):
        parts = sorted(p for p in split.keys if split.shard(p) == shard)
        # Parts shard, shard + n, ...: each full but the last, in request order.
        assert parts == [shard + n * c for c in range(len(parts))]
        positions = [i for p in parts for i in split.positions[p]]
        assert positions == sorted(positions)
        assert all(len(split.keys[p]) == 7 for p in parts[:-1])
        assert 1 <= len(split.keys[parts[-1]]) <= 7
        for p in parts:
            assert list(split.keys[p]) == [batch[i] for i in split.positions[p]]
            assert all(roost.partition_of(k, n) == shard for k in split.keys[p])
    # At most max_batch keys a shard: one part each, as without max_batch.
    assert Split(batch, n, max_batch=100).keys == Split(batch, n).keys


def test_an_empty_batch_has_no_part() -> None:
    assert Split([], 1).keys == {} and Split([], 3).keys == {}


def test_shards_of_is_partition_of_for_every_vector() -> None:
    counts, rows = vectors()
    keys = [bytes.fromhex(row[0]) for row in rows]
    for c, n in enumerate(counts):
        assert shards_of(keys, n) == [int(row[2 + c]) for row in rows], n


@pytest.mark.parametrize("n", [2, 3, 7, 64, 1000, 1024])
def test_the_bisect_bounds_are_the_multiply_shift_exactly(n: int) -> None:
    # Each bound and its neighbours: the hashes where a rounding slip
    # would put a key in the next or the previous shard.
    for bound in _bounds(n):
        for h in (bound - 1, bound, bound + 1):
            assert bisect.bisect_right(_bounds(n), h) == (h * n) >> 64, (n, h)
    assert bisect.bisect_right(_bounds(n), 0) == 0
    assert bisect.bisect_right(_bounds(n), (1 << 64) - 1) == n - 1


@pytest.mark.parametrize("n", [0, 1025])
def test_shards_of_refuses_a_shard_count_out_of_range(n: int) -> None:
    with pytest.raises(ValueError, match="1 to 1024 shards"):
        shards_of([b"k"], n)
