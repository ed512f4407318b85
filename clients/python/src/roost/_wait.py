"""wait(): until every replica of every shard serves one version.

The same check as `roost-admin wait`: each replica's ListTables must show
the table serving that version. A "dns:///name:port" replica entry stands
for every address the name resolves to, each asked on its own (a round-robin
channel would ask only one of them). A replica whose table is another shard
than the layout says raises StaleLayoutError at once: waiting would never
end.

Example:
    plan = WaitPlan(layout, "users", "v000007", timeout=60)
    while True:
        for shard, target in plan.targets():
            ...  # ListTables on target: plan.answered(...) or plan.failed(...)
        if plan.done():      # raises WaitTimeoutError past the timeout
            break
        sleep(plan.pause(0.2))
"""

from __future__ import annotations

import socket
import time
from typing import Any

import grpc

from roost._errors import StaleLayoutError, WaitTimeoutError
from roost._layout import Layout
from roost._versions import version_name, version_number


def _dns_name(target: str) -> tuple[str, str] | None:
    """(host, port) of "dns:///host:port" or "dns:host:port"; None for any
    other target (including a dns target naming its own DNS server)."""
    if target.startswith("dns:///"):
        rest = target[len("dns:///"):]
    elif target.startswith("dns:") and not target.startswith("dns://"):
        rest = target[len("dns:"):]
    else:
        return None
    if rest.startswith("["):
        host, _, port = rest[1:].partition("]:")
    else:
        host, _, port = rest.rpartition(":")
    return (host, port) if host and port else None


class WaitPlan:
    def __init__(self, layout: Layout, table: str, version: str, timeout: float) -> None:
        if not table:
            raise ValueError("the table name must be a non-empty string")
        self.layout = layout
        self.table = table
        self.want = version_number(version)  # ValueError names a bad version
        self.deadline = time.monotonic() + timeout
        self._lagging: list[str] = []

    def targets(self) -> list[tuple[int, str]]:
        """Every replica address to ask this round (resolving DNS names)."""
        self._lagging = []
        out = []
        for shard, replicas in enumerate(self.layout.shards):
            for target in replicas:
                name = _dns_name(target)
                if name is None:
                    out.append((shard, target))
                    continue
                try:
                    infos = socket.getaddrinfo(name[0], int(name[1]), type=socket.SOCK_STREAM)
                except (OSError, ValueError) as e:
                    self._lagging.append(f"shard {shard} {target}: cannot resolve: {e}")
                    continue
                addresses = sorted({i[4][0] for i in infos})
                for a in addresses:
                    out.append((shard, f"[{a}]:{name[1]}" if ":" in a else f"{a}:{name[1]}"))
        return out

    def call_timeout(self) -> float:
        return max(0.05, min(2.0, self.deadline - time.monotonic()))

    def answered(self, shard: int, target: str, response: Any) -> None:
        where = f"shard {shard} {target}"
        for info in response.tables:
            if info.name != self.table:
                continue
            n = len(self.layout.shards)
            if info.shard_count and (info.shard_count != n or info.shard != shard):
                raise StaleLayoutError(
                    f"{where}: serves shard {info.shard} of {info.shard_count} of table "
                    f"{self.table}; the layout has {n} shards", grpc.StatusCode.FAILED_PRECONDITION,
                    shard)
            serving = info.serving_version
            try:
                if serving and version_number(serving) == self.want:
                    return
            except ValueError:
                pass
            self._lagging.append(f"{where}: serves {serving or 'no version'}")
            return
        self._lagging.append(f"{where}: does not serve table {self.table}")

    def failed(self, shard: int, target: str, code: grpc.StatusCode, details: str) -> None:
        self._lagging.append(f"shard {shard} {target}: {code.name}: {details}")

    def done(self) -> bool:
        if not self._lagging:
            return True
        if time.monotonic() >= self.deadline:
            raise WaitTimeoutError(
                f"not every replica serves {self.table} {version_name(self.want)} "
                f"before the timeout: {'; '.join(self._lagging)}", list(self._lagging))
        return False

    def pause(self, poll_interval: float) -> float:
        return max(0.0, min(poll_interval, self.deadline - time.monotonic()))
