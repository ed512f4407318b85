"""A real MinIO on a loopback port for the Python tests that need object
storage (scripts/install-minio.sh's binary, or $ROOST_MINIO), with its
buckets made and the AWS_* variables roost-load, roost-server and pyarrow
read to reach it.

Example:
    with start_minio(tmp_path, buckets=["tables"]) as minio:
        env = dict(os.environ, **minio.environment())
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

ACCESS_KEY = "roosttest"
SECRET_KEY = "roosttestsecret"


def minio_binary() -> str:
    path = os.environ.get("ROOST_MINIO") or str(
        Path(os.environ.get("ROOST_TOOLS_DIR", Path.home() / ".cache/roost/tools")) / "minio")
    if not os.access(path, os.X_OK):
        pytest.fail(f"no MinIO at {path}: run scripts/install-minio.sh (or set $ROOST_MINIO)")
    return path


@dataclass
class Minio:
    port: int

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def environment(self) -> dict[str, str]:
        return {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
                "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": self.endpoint}

    def filesystem(self) -> "object":
        """pyarrow's S3FileSystem on it (pyarrow imported here, so that the
        fixture serves tests without it too)."""
        import pyarrow.fs as pafs
        return pafs.S3FileSystem(access_key=ACCESS_KEY, secret_key=SECRET_KEY,
                                 endpoint_override=f"127.0.0.1:{self.port}", scheme="http",
                                 region="us-east-1", allow_bucket_creation=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def start_minio(directory: Path, buckets: list[str]) -> Iterator[Minio]:
    """MinIO serving `directory`, with `buckets` made; killed at the end."""
    port = _free_port()
    env = dict(os.environ, MINIO_ROOT_USER=ACCESS_KEY, MINIO_ROOT_PASSWORD=SECRET_KEY,
               MINIO_BROWSER="off", MINIO_UPDATE="off")
    log = directory / "minio.log"
    with open(log, "wb") as out:
        server = subprocess.Popen(
            [minio_binary(), "server", "--quiet", "--address", f"127.0.0.1:{port}",
             "--console-address", f"127.0.0.1:{_free_port()}", str(directory / "data")],
            env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/minio/health/ready", timeout=1)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail(f"MinIO did not start: {log.read_text(errors='replace')}")
                time.sleep(0.1)
        minio = Minio(port)
        if buckets:
            fs = minio.filesystem()
            for bucket in buckets:
                fs.create_dir(bucket)  # type: ignore[attr-defined]
        yield minio
    finally:
        server.kill()
        server.wait()
