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
from roost._versions import Failure, Round, consistent_rounds


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
