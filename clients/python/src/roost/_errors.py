"""The exceptions of the roost client.

Every failure of a call is a RoostError (or a subclass) whose message names
the shard and the replicas involved and the gRPC status the server gave, so
that a log line alone says what went wrong. A bad layout is a LayoutError, a
ValueError, raised before any call is made.

Example:
    try:
        value = client.get("users", b"user:42")
    except roost.StaleLayoutError as e:
        reload_layout()          # e.shard is the shard that refused the key
    except roost.RoostError as e:
        log.warning("lookup failed: %s (%s)", e, e.code)
"""

from __future__ import annotations

from typing import Optional

import grpc


class RoostError(Exception):
    """A call failed. `code` is the gRPC status code that ended it (None
    when the failure was the client's own, e.g. a response it could not
    read), `shard` the shard whose part failed (None when not one shard's).
    """

    def __init__(
        self,
        message: str,
        code: Optional[grpc.StatusCode] = None,
        shard: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.shard = shard


class StaleLayoutError(RoostError):
    """A server refused a key of another shard (FAILED_PRECONDITION): the
    cluster layout the client was given does not match the table's shards.
    Reload the layout; retrying with the same one cannot succeed."""


class VersionUnavailableError(RoostError):
    """A version named by the caller is served by no replica of a shard
    (FAILED_PRECONDITION): it is not served yet, or its grace period ended."""


class InconsistentVersionsError(RoostError):
    """The shards did not agree on one version of the table before the
    deadline (ABORTED): a rollout was under way and the version every shard
    served moved faster than the client could pin it. Retrying later works
    once the rollout has settled. `versions` lists the versions seen."""

    def __init__(self, message: str, versions: list[str], shard: Optional[int] = None) -> None:
        super().__init__(message, grpc.StatusCode.ABORTED, shard)
        self.versions = versions


class WaitTimeoutError(RoostError, TimeoutError):
    """wait() ran out of time before every replica served the version.
    `lagging` lists each replica that did not, with what it serves."""

    def __init__(self, message: str, lagging: list[str]) -> None:
        super().__init__(message, grpc.StatusCode.DEADLINE_EXCEEDED)
        self.lagging = lagging


class LayoutError(ValueError):
    """A cluster layout (a file or the `shards` argument) is malformed; the
    message names the file and the field."""
