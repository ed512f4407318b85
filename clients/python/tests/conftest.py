"""Test support: tables built by the real roost-load, real roost-server
processes on loopback (one per shard and replica), and their logs.

The binaries come from ROOST_LOAD_BINARY and ROOST_SERVER_BINARY (ctest
sets them to the build's), else from build/release of this checkout.
Nothing is mocked. Waits are polls with generous timeouts that fail with the
server's log, never assertions about speed.

Example:
    def test_x(cluster):
        cluster.build("t", {b"k": b"v"}, shards=2)
        servers = [cluster.server(shard=s) for s in range(2)]
        client = roost.Client([[s.address] for s in servers])
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable, Iterator, Optional

import pytest

ROOT = Path(__file__).resolve().parents[3]
WAIT_TIMEOUT = 60.0


def binary(variable: str, relative: str) -> str:
    path = os.environ.get(variable) or str(ROOT / "build" / "release" / relative)
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is not an executable: build with scripts/build.sh or set {variable}")
    return path


def wait_for(predicate: Callable[[], bool], what: str, timeout: float = WAIT_TIMEOUT,
             describe: Callable[[], str] = lambda: "") -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting for {what}{describe()}")
        time.sleep(0.02)


def keys_and_values(n: int) -> dict[bytes, bytes]:
    """n keys, some binary (zero bytes, high bytes), each with its own value."""
    kvs = {f"key{i:05d}".encode(): f"value of key {i}".encode() * (1 + i % 3) for i in range(n)}
    kvs[b""] = b"the empty key's value"
    kvs[b"\x00\xff\x00"] = b"\x00binary\xff"
    kvs[b"tab\tnew\nline"] = b""  # an empty value is a value, not a miss
    return kvs


class Server:
    """A roost-server child process; SIGKILLed at the end of the test."""

    def __init__(self, log: Path, args: list[str]) -> None:
        self.log_path = log
        self.args = args
        with open(log, "wb") as out:
            self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out,
                                            stderr=subprocess.STDOUT)
        self.address = ""

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def describe(self) -> str:
        return f"\n--- {self.log_path} ---\n{self.log()}--- end of log ---"

    def wait_listening(self) -> "Server":
        def listening() -> bool:
            if self.process.poll() is not None:
                pytest.fail(f"roost-server exited {self.process.returncode}{self.describe()}")
            m = re.search(r"lookup service listening on (\S+)\n", self.log())
            if m:
                self.address = m.group(1)
            return bool(m)
        wait_for(listening, "roost-server to listen", describe=self.describe)
        return self

    def wait_log(self, text: str) -> None:
        def logged() -> bool:
            if self.process.poll() is not None:
                pytest.fail(f"roost-server exited {self.process.returncode}{self.describe()}")
            return text in self.log()
        wait_for(logged, repr(text), describe=self.describe)

    def wait_ready(self) -> "Server":
        self.wait_listening()
        self.wait_log("roost-server: ready: ")
        return self

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait()


class Cluster:
    """Tables in one data directory and the servers of a test."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.data = scratch / "data"
        self.data.mkdir()
        self.load = binary("ROOST_LOAD_BINARY", "loader/roost-load")
        self.server_binary = binary("ROOST_SERVER_BINARY", "server/roost-server")
        self.servers: list[Server] = []
        self._inputs = 0

    def build(self, table: str, kvs: dict[bytes, bytes], shards: int = 1,
              fmt: str = "cuckoo", data: Optional[Path] = None) -> None:
        """Publishes the next version of `table` with roost-load build."""
        self._inputs += 1
        tsv = self.scratch / f"input-{table}-{self._inputs}.tsv"
        tsv.write_text("".join(f"{k.hex()}\t{v.hex()}\n" for k, v in kvs.items()))
        args = [self.load, "build", "-q", "--format", fmt, "--key-encoding", "hex",
                "--value-encoding", "hex", "--data-dir", str(data or self.data),
                "--table", table, "--shards", str(shards), "-i", str(tsv)]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 0:
            pytest.fail(f"roost-load build failed ({r.returncode}): {r.stderr}")

    def server(self, shard: Optional[int] = None, extra: Optional[list[str]] = None,
               data: Optional[Path] = None, listen: str = "127.0.0.1:0",
               ready: bool = True) -> Server:
        args = [self.server_binary, "--data-dir", str(data or self.data), "--listen", listen,
                "--admin-listen", "", "--metrics-listen", "", "--poll-interval", "0.2",
                "--drain-period", "0"]
        if shard is not None:
            args += ["--shard", str(shard)]
        args += extra or []
        server = Server(self.scratch / f"server{len(self.servers)}.log", args)
        self.servers.append(server)
        return server.wait_ready() if ready else server.wait_listening()

    def close(self) -> None:
        """Kills every server; a sanitizer report in a log fails the test
        (the sanitize build's servers run these tests too)."""
        for s in self.servers:
            s.kill()
        for s in self.servers:
            log = s.log()
            for report in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"):
                if report in log:
                    pytest.fail(f"roost-server's log holds a sanitizer report:{s.describe()}")


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    c = Cluster(tmp_path)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def free_port() -> int:
    """A loopback port nobody listens on (bound and closed again)."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def skip_unless_server_fills_versions(address: str, table: str, shard: int = 0,
                                      shards: int = 1) -> None:
    """Skips a test of what issue 14's server side adds (versions in
    responses, shard fields in ListTables, pinned versions, Scan) when the
    server under test predates it: its responses name no version."""
    import roost
    key = next(k for k in (b"probe %d" % i for i in range(10000))
               if roost.partition_of(k, shards) == shard)
    with roost.Client([[address]], timeout=30) as client:
        _, version = client.get_versioned(table, key)
    if not version:
        pytest.skip("this roost-server names no version in its responses (it predates "
                    "versions, pinning and Scan)")


def server_supports(flag: str) -> bool:
    """Whether this roost-server has `flag` (in its --help)."""
    server = binary("ROOST_SERVER_BINARY", "server/roost-server")
    r = subprocess.run([server, "--help"], capture_output=True, text=True)
    return flag in r.stdout


def serving_version(address: str, table: str) -> str:
    """The version `table` serves at `address` ("" when none), from its
    ListTables, or "" when the call fails."""
    import grpc
    from roost.v1 import lookup_pb2, lookup_pb2_grpc
    with grpc.insecure_channel(address) as channel:
        try:
            response = lookup_pb2_grpc.LookupStub(channel).ListTables(
                lookup_pb2.ListTablesRequest(), timeout=10)
        except grpc.RpcError:
            return ""
    for info in response.tables:
        if info.name == table:
            return str(info.serving_version)
    return ""
