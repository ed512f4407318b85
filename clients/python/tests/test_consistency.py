"""The consistency algorithm (roost/_versions.py) step by step, driven with
made-up part outcomes: which parts it re-sends, pinned to which version,
and what it returns or raises. The same algorithm against real servers is
in test_versions.py."""

from __future__ import annotations

import dataclasses
from typing import Any, Generator, Mapping, Optional

import grpc
import pytest

import roost
from roost._calls import raise_failure
from roost._versions import Failure, MonotonicReads, Round, consistent_rounds


@dataclasses.dataclass
class Answer:
    version: str
    value: str = ""


GONE = "table \"t\" has no version v000001 to answer from: it serves v000002"


def gone(part: int) -> Failure:
    return Failure(grpc.StatusCode.FAILED_PRECONDITION, GONE, part, f"replica{part}")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def start(parts: list[int], clock: Clock, deadline: float = 10.0,
          pin: Optional[str] = None) -> tuple[Generator[Round, Mapping[int, Any], Any], Round]:
    plan = consistent_rounds(parts, deadline, clock, raise_failure, pin)
    return plan, next(plan)


def finish(plan: Generator[Round, Mapping[int, Any], Any], outcomes: Mapping[int, Any]) -> Any:
    with pytest.raises(StopIteration) as done:
        plan.send(outcomes)
    return done.value.value


def test_one_version_everywhere_is_one_round() -> None:
    plan, first = start([0, 1, 2], Clock())
    assert first.pins == {0: "", 1: "", 2: ""} and first.delay == 0
    results = finish(plan, {0: Answer("v000003"), 1: Answer("v000003"), 2: Answer("v000003")})
    assert {p: r.version for p, r in results.items()} == {0: "v000003", 1: "v000003",
                                                           2: "v000003"}


def test_servers_too_old_to_say_are_accepted() -> None:
    plan, _ = start([0, 1], Clock())
    results = finish(plan, {0: Answer(""), 1: Answer("v000002")})
    assert results[0].version == "" and results[1].version == "v000002"


def test_newer_parts_are_pinned_to_the_oldest() -> None:
    plan, _ = start([0, 1, 2], Clock())
    second = plan.send({0: Answer("v000002", "new"), 1: Answer("v000001", "old"),
                        2: Answer("v000003", "newer")})
    assert second.pins == {0: "v000001", 2: "v000001"}
    results = finish(plan, {0: Answer("v000001", "old0"), 2: Answer("v000001", "old2")})
    assert {p: r.value for p, r in results.items()} == {0: "old0", 1: "old", 2: "old2"}


def test_when_the_oldest_is_gone_the_older_parts_wait_for_the_newest() -> None:
    clock = Clock()
    plan, _ = start([0, 1, 2], clock)
    plan.send({0: Answer("v000002", "new0"), 1: Answer("v000001"), 2: Answer("v000001")})
    third = plan.send({0: gone(0)})
    assert third.pins == {1: "v000002", 2: "v000002"} and third.delay > 0
    clock.now = 1.0
    # Shard 2 has v2 now, shard 1 not yet: only shard 1 is asked again.
    fourth = plan.send({1: gone(1), 2: Answer("v000002", "new2")})
    assert fourth.pins == {1: "v000002"} and fourth.delay > third.delay
    results = finish(plan, {1: Answer("v000002", "new1")})
    assert {p: r.value for p, r in results.items()} == {0: "new0", 1: "new1", 2: "new2"}


def test_no_common_version_before_the_deadline_is_aborted() -> None:
    clock = Clock()
    plan, _ = start([0, 1], clock, deadline=5.0)
    plan.send({0: Answer("v000002"), 1: Answer("v000001")})
    plan.send({0: gone(0)})
    clock.now = 5.0
    with pytest.raises(roost.InconsistentVersionsError) as e:
        plan.send({1: gone(1)})
    assert e.value.code == grpc.StatusCode.ABORTED
    assert e.value.versions == ["v000001", "v000002"]
    assert "versions seen: v000001, v000002" in str(e.value) and GONE in str(e.value)


def test_a_stale_layout_is_not_a_version_to_wait_for() -> None:
    plan, _ = start([0, 1], Clock())
    stale = Failure(grpc.StatusCode.FAILED_PRECONDITION,
                    "key 0 belongs to shard 2 of 3; this server serves shard 0", 0, "r0")
    with pytest.raises(roost.StaleLayoutError, match=r"^shard 0 \(r0\): FAILED_PRECONDITION"):
        plan.send({0: stale, 1: Answer("v000001")})


def test_a_pinned_call_is_one_round_and_its_failure_is_the_callers() -> None:
    plan, first = start([0, 1], Clock(), pin="7")
    assert first.pins == {0: "7", 1: "7"}
    with pytest.raises(roost.VersionUnavailableError):
        plan.send({0: gone(0), 1: Answer("v000007")})
    plan, _ = start([0], Clock(), pin="v000007")
    with pytest.raises(roost.RoostError, match="asked for version v000007, the server "
                                               "answered v000008"):
        plan.send({0: Answer("v000008")})


def test_an_unreadable_version_is_an_error() -> None:
    plan, _ = start([0, 1], Clock())
    with pytest.raises(roost.RoostError, match="unreadable version 'latest'"):
        plan.send({0: Answer("latest"), 1: Answer("v000001")})


@pytest.mark.parametrize("text,number", [("v000007", 7), ("7", 7), ("v7", 7), ("0", 0)])
def test_version_names(text: str, number: int) -> None:
    assert roost.version_number(text) == number
    assert roost.version_name(number) == f"v{number:06d}"


@pytest.mark.parametrize("text", ["", "v", "x7", "7 ", "-1", "v0000000000000000001"])
def test_bad_version_names(text: str) -> None:
    with pytest.raises(ValueError, match="is not a table version"):
        roost.version_number(text)


# ---- monotonic reads (client/README.md, "Monotonic reads") ----


@dataclasses.dataclass
class Flagged:
    version: str
    withdrawn_through: str = ""
    value: str = ""


def monotonic(reads: MonotonicReads, parts: list[int], clock: Clock,
              deadline: float = 10.0) -> tuple[Generator[Round, Mapping[int, Any], Any], Round]:
    plan = consistent_rounds(parts, deadline, clock, raise_failure, None, False, (reads, "t"))
    return plan, next(plan)


def test_monotonic_a_new_version_waits_for_every_shard_heard_from() -> None:
    reads, clock = MonotonicReads(), Clock()
    plan, _ = monotonic(reads, [0, 1, 2], clock)
    finish(plan, {0: Flagged("v000001"), 1: Flagged("v000001"), 2: Flagged("v000001")})
    # Shard 1 alone has v2: a batch of shards 1 and 2 reads v1 ...
    plan, _ = monotonic(reads, [1, 2], clock)
    second = plan.send({1: Flagged("v000002"), 2: Flagged("v000001")})
    assert second.pins == {1: "v000001"}
    finish(plan, {1: Flagged("v000001")})
    # ... and so does shard 1 read alone, since shard 0 was heard from at v1.
    plan, _ = monotonic(reads, [1], clock)
    assert plan.send({1: Flagged("v000002")}).pins == {1: "v000001"}
    finish(plan, {1: Flagged("v000001")})
    # Every shard at v2: read, and the floor is v2.
    plan, _ = monotonic(reads, [0, 1, 2], clock)
    finish(plan, {0: Flagged("v000002"), 1: Flagged("v000002"), 2: Flagged("v000002")})
    assert reads.floor("t") == 2
    # A replica still at v1 is pinned to v2; refused, the batch moves on to
    # v2 (never v1) after a backoff, until the deadline.
    plan, _ = monotonic(reads, [0, 1], clock, deadline=1.0)
    assert plan.send({0: Flagged("v000001"), 1: Flagged("v000002")}).pins == {0: "v000002"}
    again = plan.send({0: gone(0)})
    assert again.pins == {0: "v000002"} and again.delay > 0
    clock.now = 1.0
    with pytest.raises(roost.InconsistentVersionsError):
        plan.send({0: gone(0)})


def test_monotonic_a_rollback_takes_the_floor_back() -> None:
    reads, clock = MonotonicReads(), Clock()
    plan, _ = monotonic(reads, [0, 1], clock)
    finish(plan, {0: Flagged("v000003"), 1: Flagged("v000003")})
    assert reads.floor("t") == 3
    # Shard 1 rolled back to v2 from v3; shard 0 not yet: its v3 is
    # withdrawn, and the batch reads v2.
    plan, _ = monotonic(reads, [0, 1], clock)
    second = plan.send({0: Flagged("v000003"), 1: Flagged("v000002", "v000003")})
    assert second.pins == {0: "v000002"}
    results = finish(plan, {0: Flagged("v000002")})
    assert {p: r.version for p, r in results.items()} == {0: "v000002", 1: "v000002"}
    assert reads.floor("t") == 2 and not reads.readable("t", 3)
    # A version published after it is read again.
    plan, _ = monotonic(reads, [0, 1], clock)
    finish(plan, {0: Flagged("v000004"), 1: Flagged("v000004")})
    assert reads.floor("t") == 4


def test_monotonic_without_the_servers_signal_the_floor_holds() -> None:
    reads, clock = MonotonicReads(), Clock()
    plan, _ = monotonic(reads, [0], clock)
    finish(plan, {0: Flagged("v000003")})
    plan, _ = monotonic(reads, [0], clock)
    assert plan.send({0: Flagged("v000002")}).pins == {0: "v000003"}


def test_several_parts_of_one_shard_are_parts_like_any_and_errors_name_the_shard() -> None:
    # A shard with more keys than a request takes has parts p, p + n, ...
    # (_partition.Split): each is sent, compared and pinned by itself, and
    # what goes wrong names the shard, not the part.
    def shard_of(part: int) -> int:
        return part % 2
    plan = consistent_rounds([0, 1, 2, 3], 10.0, Clock(), raise_failure, None, False, None,
                             shard_of)
    assert next(plan).pins == {0: "", 1: "", 2: "", 3: ""}
    # Part 2 (shard 0) reached a replica a version ahead: pinned back.
    second = plan.send({0: Answer("v000001"), 1: Answer("v000001"), 2: Answer("v000002"),
                        3: Answer("v000001")})
    assert second.pins == {2: "v000001"}
    with pytest.raises(roost.RoostError) as e:
        plan.send({2: Answer("v000003")})
    assert e.value.shard == 0 and "shard 0: asked for version v000001" in str(e.value)
    plan = consistent_rounds([1, 3], 10.0, Clock(), raise_failure, None, False, None, shard_of)
    next(plan)
    with pytest.raises(roost.RoostError) as e:
        plan.send({1: Answer("v000001"), 3: Answer("latest")})
    assert e.value.shard == 1 and str(e.value).startswith("shard 1: ")
    # Monotonic reads learn each shard's newest from any of its parts.
    reads = MonotonicReads()
    plan = consistent_rounds([0, 1, 2, 3], 10.0, Clock(), raise_failure, None, False,
                             (reads, "t"), shard_of)
    next(plan)
    finish(plan, {p: Flagged("v000001") for p in range(4)})
    assert reads.floor("t") == 1
