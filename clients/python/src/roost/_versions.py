"""Table versions and the consistency algorithm, shared by both clients.

The algorithm (the same in the C++ client): send each shard's part of a
batch with no version. If every part names the same version, done.
Otherwise re-send the parts that answered a newer version, pinned to the
oldest version answered (those servers keep the replaced version for
--version-grace). If a pinned part fails FAILED_PRECONDITION (that version
is gone), re-send instead the parts that answered older, pinned to the
newest, after a short backoff, until the caller's deadline; then fail with
ABORTED naming the versions seen. An empty version in a response means a
server too old to say: such parts are accepted as they are.

`consistent_rounds` is that algorithm as a generator, free of I/O: it yields
a Round (which parts to send, pinned to which version, after what delay);
the client runs it (sync or asyncio, with its retries over replicas) and
sends back each part's outcome, a response or a Failure. Its return value
is the response of every part. With `partial`, a part whose shard could not
answer (`shard_down`) is left out of the batch: never compared nor re-sent,
and its Failure is its result; the call fails only when no part answered.

With `monotonic` (a MonotonicReads and the table), the batch settles on the
table's target instead of the oldest version answered (client/README.md in
the repository, "Monotonic reads", has the rules; every client runs them).

Example (what a client's driver does):
    plan = consistent_rounds(parts, deadline, time.monotonic, fail)
    results = None
    round = next(plan)
    while results is None:
        outcomes = run(round)            # part -> response or Failure
        try:
            round = plan.send(outcomes)
        except StopIteration as done:
            results = done.value
"""

from __future__ import annotations

import dataclasses
import re
import threading
from typing import Callable, Generator, Iterable, Mapping, NoReturn, Optional, Protocol, Union

import grpc

from roost._errors import InconsistentVersionsError, RoostError

_VERSION = re.compile(r"v?([0-9]{1,18})")


def version_number(version: str) -> int:
    """The number of a version named "v000007", "v7" or "7"."""
    m = _VERSION.fullmatch(version)
    if m is None:
        raise ValueError(f'"{version}" is not a table version (e.g. "v000007" or "7")')
    return int(m.group(1))


def version_name(number: int) -> str:
    """The canonical name of version `number`: "v000007"."""
    return f"v{number:06d}"


class Versioned(Protocol):
    """A response that names the version that answered it."""

    @property
    def version(self) -> str: ...


@dataclasses.dataclass(frozen=True)
class Failure:
    """A part that failed for good (after its retries): the status the last
    replica gave, and which shard and replica."""

    code: grpc.StatusCode
    details: str
    shard: int
    replica: str

    def describe(self) -> str:
        return f"shard {self.shard} ({self.replica}): {self.code.name}: {self.details}"

    def version_gone(self) -> bool:
        """A pinned request refused because the version is not there: not
        a key of another shard (the server's text for that names it)."""
        return (
            self.code == grpc.StatusCode.FAILED_PRECONDITION
            and "belongs to shard" not in self.details
        )


Outcome = Union[Versioned, Failure]


@dataclasses.dataclass(frozen=True)
class Round:
    """Send each part in `pins` pinned to its version ("" for none), after
    waiting `delay` seconds."""

    pins: Mapping[int, str]
    delay: float = 0.0


class MonotonicReads:
    """What a client with monotonic reads remembers of each table: the floor
    F (the newest version a call was answered from), the withdrawn range
    (L, W] (versions a rollback withdrew: an answer from L named W in
    withdrawn_through) and, per shard, the newest version not withdrawn any
    of its replicas answered from. A call settles on the target R = max(F,
    the oldest of those over the shards heard from). Thread-safe; one per
    client, shared by its calls (an asyncio client's too)."""

    @dataclasses.dataclass
    class _Table:
        floor: int = 0
        withdrawn_after: int = 0
        withdrawn: int = 0
        newest: dict[int, int] = dataclasses.field(default_factory=dict)

        def is_withdrawn(self, version: int) -> bool:
            return self.withdrawn_after < version <= self.withdrawn

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tables: dict[str, MonotonicReads._Table] = {}

    def answered(self, table: str, shard: int, version: str, withdrawn_through: str = "") -> None:
        """Shard `shard` answered a call of `table` from `version`, naming
        `withdrawn_through` ("" for none)."""
        v = _number_or_none(version)
        if v is None:
            return
        x = _number_or_none(withdrawn_through)
        with self._lock:
            t = self._tables.setdefault(table, MonotonicReads._Table())
            if x is not None and x > v:
                if x > t.withdrawn or (x == t.withdrawn and v < t.withdrawn_after):
                    t.withdrawn_after, t.withdrawn = v, x
                if v < t.floor <= x:
                    t.floor = v
                for s, newest in t.newest.items():
                    if v < newest <= x:
                        t.newest[s] = v
            if not t.is_withdrawn(v):
                t.newest[shard] = max(t.newest.get(shard, 0), v)

    def target(self, table: str) -> int:
        """The version a call of `table` settles on; 0 when nothing is known."""
        with self._lock:
            t = self._tables.get(table)
            if t is None:
                return 0
            return max(t.floor, min(t.newest.values(), default=0))

    def readable(self, table: str, version: int) -> bool:
        """Whether `version` may answer a call of `table` (not withdrawn)."""
        with self._lock:
            t = self._tables.get(table)
            return t is None or not t.is_withdrawn(version)

    def settled(self, table: str, version: int) -> None:
        """A call of `table` was answered from `version`: the floor rises."""
        with self._lock:
            t = self._tables.setdefault(table, MonotonicReads._Table())
            t.floor = max(t.floor, version)

    def floor(self, table: str) -> int:
        with self._lock:
            t = self._tables.get(table)
            return t.floor if t is not None else 0


def _number_or_none(version: str) -> Optional[int]:
    m = _VERSION.fullmatch(version) if version else None
    return int(m.group(1)) if m is not None else None


# Backoff between attempts of the last step of the algorithm, in seconds.
_FIRST_BACKOFF = 0.02
_MAX_BACKOFF = 0.5


def consistent_rounds(
    parts: Iterable[int],
    deadline: float,
    clock: Callable[[], float],
    fail: Callable[[Failure], NoReturn],
    pin: Optional[str] = None,
    partial: bool = False,
    monotonic: Optional[tuple[MonotonicReads, str]] = None,
    shard_of: Callable[[int], int] = lambda part: part,
) -> Generator[Round, Mapping[int, Outcome], dict[int, Outcome]]:
    """The consistency algorithm over `parts` (see the module comment).
    `fail` raises the error of a failed part. With `pin`, every part is
    sent pinned to that version once, and its failures are the caller's.
    With `partial`, parts whose shard could not answer are dropped (their
    Failure is their result). With `monotonic` (the client's MonotonicReads
    and the table), monotonic reads, unless `pin` is given; each part is
    the shard it reads. Part p reads shard `shard_of(p)` (a batch larger
    than a server takes has several parts per shard: _partition.Split)."""
    dropped: dict[int, Failure] = {}

    def answered(outcomes: Mapping[int, Outcome]) -> dict[int, Outcome]:
        kept: dict[int, Outcome] = {}
        for p, o in outcomes.items():
            if partial and isinstance(o, Failure) and shard_down(o):
                dropped[p] = o
            else:
                kept[p] = o
        return kept

    if monotonic is not None and pin is None:
        rounds = _monotonic_rounds(parts, deadline, clock, fail, monotonic[0], monotonic[1],
                                   answered, shard_of)
    else:
        rounds = _rounds(parts, deadline, clock, fail, pin, answered, shard_of)
    results: dict[int, Outcome] = dict((yield from rounds))
    # A part dropped in a later round loses the answer it gave before.
    results.update(dropped)
    if dropped and len(dropped) == len(results):
        fail(dropped[min(dropped)])  # no shard answered: nothing partial
    return results


def shard_down(failure: Failure) -> bool:
    """Whether a part's final failure says its shard could not answer (every
    replica down, busy or too slow until the deadline): what partial
    answers mark a key with rather than fail the call for."""
    return failure.code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED,
                            grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.CANCELLED)


def _rounds(
    parts: Iterable[int],
    deadline: float,
    clock: Callable[[], float],
    fail: Callable[[Failure], NoReturn],
    pin: Optional[str],
    answered: Callable[[Mapping[int, Outcome]], dict[int, Outcome]],
    shard_of: Callable[[int], int],
) -> Generator[Round, Mapping[int, Outcome], dict[int, Versioned]]:
    """consistent_rounds over the parts `answered` keeps."""
    parts = list(parts)
    if pin is not None:
        outcomes = answered((yield Round({p: pin for p in parts})))
        return _all_answered(outcomes, fail, pin, shard_of)
    first = _all_answered(answered((yield Round({p: "" for p in parts}))), fail, None, shard_of)
    numbers = {p: _number_of(r.version, shard_of(p)) for p, r in first.items() if r.version}
    if len(set(numbers.values())) <= 1:
        return first
    oldest, newest = min(numbers.values()), max(numbers.values())
    seen = sorted({first[p].version for p in numbers}, key=version_number)

    # Step 2: the newer parts, pinned to the oldest version.
    pinned = version_name(oldest)
    outcomes = answered((yield Round({p: pinned for p, n in numbers.items() if n > oldest})))
    if not any(isinstance(o, Failure) and o.version_gone() for o in outcomes.values()):
        results = dict(first)
        results.update(_all_answered(outcomes, fail, pinned, shard_of))
        return results

    # Step 3: the older parts, pinned to the newest, until the deadline.
    results = {p: r for p, r in first.items() if numbers.get(p, newest) == newest}
    pinned = version_name(newest)
    todo = {p: pinned for p, n in numbers.items() if n < newest}
    backoff = _FIRST_BACKOFF
    last: Optional[Failure] = None
    while todo:
        remaining = deadline - clock()
        if remaining <= backoff:
            raise _no_common_version(seen, last)
        sent = yield Round(dict(todo), backoff)
        outcomes = answered(sent)
        for p in sent:
            if p not in outcomes:  # dropped
                results.pop(p, None)
                del todo[p]
        backoff = min(backoff * 2, _MAX_BACKOFF)
        for p, o in outcomes.items():
            if isinstance(o, Failure):
                if not o.version_gone():
                    fail(o)
                last = o
                continue
            _check_answered(o, pinned, shard_of(p))
            results[p] = o
            del todo[p]
    return results


def _monotonic_rounds(
    parts: Iterable[int],
    deadline: float,
    clock: Callable[[], float],
    fail: Callable[[Failure], NoReturn],
    reads: MonotonicReads,
    table: str,
    answered: Callable[[Mapping[int, Outcome]], dict[int, Outcome]],
    shard_of: Callable[[int], int],
) -> Generator[Round, Mapping[int, Outcome], dict[int, Versioned]]:
    """_rounds with monotonic reads: the parts settle on `reads`' target
    for `table` (or, once a pinned part was refused, on the newest readable
    version answered, never older than the target)."""

    def note(outcomes: Mapping[int, Versioned]) -> None:
        for p, r in outcomes.items():
            reads.answered(table, shard_of(p), r.version, getattr(r, "withdrawn_through", ""))

    results = _all_answered(answered((yield Round({p: "" for p in parts}))), fail, None,
                            shard_of)
    note(results)
    seen: set[str] = set()
    forward = False
    backoff = _FIRST_BACKOFF
    delay = 0.0
    last: Optional[Failure] = None
    while True:
        numbers = {p: _number_of(r.version, shard_of(p)) for p, r in results.items()
                   if r.version}
        seen |= {results[p].version for p in numbers}
        if not numbers:
            return results  # servers too old to say: taken as they are
        target = reads.target(table)
        versions = set(numbers.values())
        if len(versions) == 1:
            (v,) = versions
            if reads.readable(table, v) and (v >= target if forward else v == target):
                reads.settled(table, v)
                return results
        pin = target
        if forward:
            pin = max([target] + [n for n in versions if reads.readable(table, n)])
        if clock() + delay >= deadline:
            raise _no_common_version(sorted(seen, key=version_number), last)
        pinned = version_name(pin)
        todo = {p: pinned for p, n in numbers.items() if n != pin}
        if not todo:  # cannot be: a version every part answered is the pin
            return results
        sent = yield Round(todo, delay)
        outcomes = answered(sent)
        for p in sent:
            if p not in outcomes:  # dropped
                results.pop(p, None)
        refused = False
        for p, o in outcomes.items():
            if isinstance(o, Failure):
                if not o.version_gone():
                    fail(o)
                last, refused = o, True
                continue
            _check_answered(o, pinned, shard_of(p))
            results[p] = o
            note({p: o})
        # A refusal moves the batch forward, after a backoff.
        delay = backoff if refused else 0.0
        if refused:
            backoff = min(backoff * 2, _MAX_BACKOFF)
            forward = True


def _no_common_version(seen: list[str], last: Optional[Failure]) -> InconsistentVersionsError:
    """The error of a batch whose parts found no common version by the
    deadline: the versions seen (oldest first), and the last refusal."""
    detail = f"; last: {last.describe()}" if last is not None else ""
    return InconsistentVersionsError(
        f"the shards served no common version before the deadline "
        f"(versions seen: {', '.join(seen)}){detail}",
        seen,
    )


def _number_of(version: str, shard: int) -> int:
    try:
        return version_number(version)
    except ValueError:
        raise RoostError(f"shard {shard}: the server answered with an unreadable version "
                         f"{version!r}", shard=shard) from None


def _all_answered(
    outcomes: Mapping[int, Outcome], fail: Callable[[Failure], NoReturn], pin: Optional[str],
    shard_of: Callable[[int], int],
) -> dict[int, Versioned]:
    results: dict[int, Versioned] = {}
    for p, o in outcomes.items():
        if isinstance(o, Failure):
            fail(o)
        if pin is not None:
            _check_answered(o, pin, shard_of(p))
        results[p] = o
    return results


def _check_answered(response: Versioned, pin: str, shard: int) -> None:
    # A server too old to know versions answers "" (and ignores the pin).
    if response.version and version_number(response.version) != version_number(pin):
        raise RoostError(
            f"shard {shard}: asked for version {pin}, the server answered "
            f"{response.version}",
            shard=shard,
        )
