"""roost: the routing client of a roost cluster.

Routes each key to its shard by roost's partition function, sends a batch's
parts to the shards at once over their replicas (retrying on another
replica, optionally hedging), and reads one version of the table across
shards. `Client` is synchronous, `AsyncClient` runs on asyncio (grpc.aio).
See README.md beside this package's pyproject.toml.

Example:
    import roost
    client = roost.Client(shards=[["127.0.0.1:7001"], ["127.0.0.1:7002"]])
    client.get("users", b"user:42")               # b"..." or None
    client.get_many("users", [b"a", b"b", b"a"])  # values in request order
"""

from roost._aio import AsyncClient
from roost._calls import BatchResult, ScanResult, ScoreResult
from roost._errors import (
    InconsistentVersionsError,
    LayoutError,
    RoostError,
    StaleLayoutError,
    VersionUnavailableError,
    WaitTimeoutError,
)
from roost._layout import Layout, TlsConfig
from roost._metrics import ClientMetrics
from roost._partition import MAX_SHARDS, PARTITION_SEED, partition_hash, partition_of
from roost._sync import Client
from roost._versions import version_name, version_number

__version__ = "0.1.0"

__all__ = [
    "AsyncClient",
    "BatchResult",
    "Client",
    "ClientMetrics",
    "InconsistentVersionsError",
    "Layout",
    "LayoutError",
    "MAX_SHARDS",
    "PARTITION_SEED",
    "RoostError",
    "ScanResult",
    "ScoreResult",
    "StaleLayoutError",
    "TlsConfig",
    "VersionUnavailableError",
    "WaitTimeoutError",
    "partition_hash",
    "partition_of",
    "version_name",
    "version_number",
]
