"""One round of calls, one per part, with retries and hedging over replicas.

`Attempts` decides, the clients' drivers do: a driver issues each attempt
Attempts asks for (a gRPC call of one part to one replica), tells it each
attempt's end (`done`), wakes it when `next_wakeup()` comes (`tick`), and
cancels what it is told to. Attempts itself does no I/O and holds no lock:
one driver runs one round from one thread or task.

The policy, per part:
- the first attempt goes to the shard's next replica in round-robin order,
  skipping replicas that failed in the last half second (and have not
  answered since) while another is left;
- an attempt that fails with a retryable status (UNAVAILABLE, CANCELLED,
  DEADLINE_EXCEEDED while time is left, RESOURCE_EXHAUSTED that says
  "retry") is tried again at once on a replica not tried yet, and once every
  replica was tried, on the next one after a backoff (20 ms doubling to
  500 ms), until the deadline;
- with hedging (`hedge_after` seconds), a part still unanswered that long
  after its first attempt started gets a second attempt on another replica;
  the first answer wins and the other is cancelled;
- any other status ends the part at once with that Failure; a Failure that
  is not FAILED_PRECONDITION ends the whole round (the call will fail),
  except, with `partial`, one that says the shard could not answer
  (`shard_down`): that part ends with it and the others go on.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Mapping, Optional, Sequence

import grpc

from roost._partition import part_shard
from roost._versions import Failure, Outcome, shard_down

# After a replica failed, other replicas are preferred for this long.
PENALTY_SECONDS = 0.5
_FIRST_BACKOFF = 0.02
_MAX_BACKOFF = 0.5


class ShardReplicas:
    """The replica targets of one shard and which is next; shared by every
    call of a client (next() on itertools.count is atomic under the GIL, and
    a stale penalty read is harmless)."""

    def __init__(self, index: int, targets: Sequence[str]) -> None:
        self.index = index
        self.targets = tuple(targets)
        self._turn = itertools.count()
        self._penalised_until = [0.0] * len(self.targets)

    def pick(self, tried: set[int], now: float) -> int:
        """The next replica not in `tried` and not penalised; else the next
        not in `tried`; else the next."""
        n = len(self.targets)
        start = next(self._turn) % n
        order = [(start + i) % n for i in range(n)]
        fresh = [r for r in order if r not in tried]
        healthy = [r for r in fresh if self._penalised_until[r] <= now]
        if healthy:
            return healthy[0]
        return fresh[0] if fresh else start

    def penalise(self, replica: int, now: float) -> None:
        self._penalised_until[replica] = now + PENALTY_SECONDS

    def pardon(self, replica: int) -> None:
        """The replica answered: it is as good as any again."""
        if self._penalised_until[replica]:
            self._penalised_until[replica] = 0.0


def retryable(code: grpc.StatusCode, details: str) -> bool:
    """Whether another attempt (on another replica) may succeed
    (docs/operations/reference.md, "What a client should do")."""
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED,
                grpc.StatusCode.DEADLINE_EXCEEDED):
        return True
    return code == grpc.StatusCode.RESOURCE_EXHAUSTED and "retry" in details


@dataclasses.dataclass
class Issue:
    """An attempt to start: part `part` (its shard's replica `replica`)."""

    attempt: int
    part: int
    replica: int


@dataclasses.dataclass
class _Part:
    shard: ShardReplicas
    version: str
    tried: set[int] = dataclasses.field(default_factory=set)
    in_flight: set[int] = dataclasses.field(default_factory=set)
    retry_at: Optional[float] = None
    hedge_at: Optional[float] = None
    backoff: float = _FIRST_BACKOFF
    last: Optional[Failure] = None
    attempts: int = 0


class Attempts:
    """The state of one round (see the module comment)."""

    def __init__(
        self,
        pins: Mapping[int, str],
        shards: Sequence[ShardReplicas],
        deadline: float,
        hedge_after: Optional[float],
        partial: bool = False,
    ) -> None:
        self.deadline = deadline
        self.hedge_after = hedge_after
        self.partial = partial
        self.outcomes: dict[int, Outcome] = {}
        self.fatal: Optional[Failure] = None
        self._parts = {p: _Part(shards[part_shard(p, len(shards))], v)
                       for p, v in pins.items()}
        self._attempt_part: dict[int, tuple[int, int]] = {}  # part, replica
        self._ids = itertools.count()
        # For the client metrics: hedges sent, and attempts sent again
        # after a retryable failure.
        self.hedges = 0
        self.retries = 0

    def version(self, part: int) -> str:
        return self._parts[part].version

    def finished(self) -> bool:
        return self.fatal is not None or len(self.outcomes) == len(self._parts)

    def start(self, now: float) -> list[Issue]:
        return [self._issue(p, now) for p in self._parts]

    def in_flight(self) -> list[int]:
        """Every attempt still running (to cancel when the round ends)."""
        return list(self._attempt_part)

    def done(self, attempt: int, outcome: Optional[Outcome], now: float) -> tuple[list[Issue], list[int]]:
        """Attempt `attempt` ended with `outcome` (None: it was cancelled).
        Returns the attempts to start and those to cancel."""
        where = self._attempt_part.pop(attempt, None)
        if where is None or self.fatal is not None:
            return [], []
        p, replica = where
        part = self._parts[p]
        part.in_flight.discard(attempt)
        if outcome is None:
            return [], []
        if not isinstance(outcome, Failure):
            part.shard.pardon(replica)
            return [], self._settle(p, outcome)
        if retryable(outcome.code, outcome.details) and now < self.deadline:
            part.shard.penalise(replica, now)
            part.last = outcome
            if part.in_flight:  # a hedge still runs: it may answer
                return [], []
            if len(part.tried) < len(part.shard.targets):
                self.retries += 1
                return [self._issue(p, now)], []
            part.retry_at = now + part.backoff
            part.backoff = min(part.backoff * 2, _MAX_BACKOFF)
            if part.retry_at < self.deadline:
                return [], []
            outcome = self._give_up(part)
        cancel = self._settle(p, outcome)
        if self.partial and shard_down(outcome):
            return [], cancel
        if outcome.code != grpc.StatusCode.FAILED_PRECONDITION:
            self.fatal = outcome
            cancel = self.in_flight()
        return [], cancel

    def next_wakeup(self) -> float:
        """When tick() must run next (at the latest the deadline)."""
        times = [self.deadline]
        for p, part in self._parts.items():
            if p in self.outcomes:
                continue
            if part.retry_at is not None:
                times.append(part.retry_at)
            if part.hedge_at is not None:
                times.append(part.hedge_at)
        return min(times)

    def tick(self, now: float) -> tuple[list[Issue], list[int]]:
        """Starts retries and hedges that are due; past the deadline, ends
        every unanswered part with its last failure (or DEADLINE_EXCEEDED)."""
        issues: list[Issue] = []
        if now >= self.deadline and self.partial:
            cancel: list[int] = []
            for p, part in self._parts.items():
                if p not in self.outcomes:
                    cancel += self._settle(p, self._give_up(part))
            return [], cancel
        for p, part in self._parts.items():
            if p in self.outcomes:
                continue
            if now >= self.deadline:
                self.fatal = self._give_up(part)
                return [], self.in_flight()
            if part.retry_at is not None and part.retry_at <= now:
                part.retry_at = None
                part.tried.clear()
                self.retries += 1
                issues.append(self._issue(p, now))
            elif part.hedge_at is not None and part.hedge_at <= now:
                part.hedge_at = None
                if len(part.in_flight) == 1 and len(part.tried) < len(part.shard.targets):
                    self.hedges += 1
                    issues.append(self._issue(p, now))
        return issues, []

    def _issue(self, p: int, now: float) -> Issue:
        part = self._parts[p]
        replica = part.shard.pick(part.tried, now)
        part.tried.add(replica)
        part.attempts += 1
        attempt = next(self._ids)
        part.in_flight.add(attempt)
        self._attempt_part[attempt] = (p, replica)
        if self.hedge_after is not None and len(part.in_flight) == 1 and part.hedge_at is None:
            part.hedge_at = now + self.hedge_after
        return Issue(attempt, p, replica)

    def _give_up(self, part: _Part) -> Failure:
        """The failure of a part that no replica answered in time."""
        last = part.last or Failure(grpc.StatusCode.DEADLINE_EXCEEDED, "no answer",
                                    part.shard.index, "")
        return Failure(
            last.code,
            f"{last.details} (last of {part.attempts} attempts; no replica answered "
            f"before the deadline)",
            part.shard.index, ", ".join(part.shard.targets))

    def _settle(self, p: int, outcome: Outcome) -> list[int]:
        part = self._parts[p]
        self.outcomes[p] = outcome
        cancel = list(part.in_flight)
        for a in cancel:
            self._attempt_part.pop(a, None)
        part.in_flight.clear()
        part.retry_at = part.hedge_at = None
        return cancel

