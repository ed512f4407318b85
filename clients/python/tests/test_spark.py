"""roost.spark.publish, end to end: PySpark in local mode builds the shards of
a table on its executors into a real MinIO, and real roost-servers pull and
serve them.

Needs the package's [spark] extra (PySpark, pyarrow) and Java 17: ctest runs
it in the venv of python_batch_install. Spark runs `local[2, 4]`: two
executor threads, and a task retried up to 4 times, as a cluster retries
one.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

pa = pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402

from conftest import Cluster, binary, serving_version, wait_for  # noqa: E402
from s3_fixture import Minio, start_minio  # noqa: E402

import roost  # noqa: E402

ROWS = 1_000_000
SHARDS = 4
REPOSITORY = "s3://tables/prod"


def roost_load() -> str:
    return binary("ROOST_LOAD_BINARY", "loader/roost-load")


def spark_environment(minio: Minio) -> dict[str, str]:
    """What the driver, its JVM and the executors' Python workers need: the
    store's credentials for roost-load, and this venv's Python."""
    return dict(minio.environment(), PYSPARK_PYTHON=sys.executable,
                PYSPARK_DRIVER_PYTHON=sys.executable)


@pytest.fixture(scope="module")
def minio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Minio]:
    with start_minio(tmp_path_factory.mktemp("minio"), buckets=["tables"]) as m:
        yield m


@pytest.fixture(scope="module")
def spark(minio: Minio) -> Iterator[Any]:
    if shutil.which("java") is None:
        pytest.fail("PySpark needs Java 17 (openjdk-17-jre-headless: scripts/install-deps.sh)")
    # Read by the JVM when it starts, and inherited by the executors' Python
    # workers it forks: the local-mode equivalent of executor environment.
    os.environ.update(spark_environment(minio))
    from pyspark.sql import SparkSession
    session = (SparkSession.builder.master("local[2, 4]").appName("roost-spark-test")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.driver.memory", "1g")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def users_dataset(tmp_path: Path) -> str:
    """ROWS rows as a Parquet dataset of 4 part files of 2 row groups each,
    written by pyarrow as a batch job would; its directory."""
    out = tmp_path / "users"
    out.mkdir()
    per = ROWS // 4
    for part in range(4):
        ids = pa.array(range(part * per, (part + 1) * per), pa.int64())
        table = pa.table({
            "id": ids,
            "name": pa.array([f"user {i}" for i in range(part * per, (part + 1) * per)]),
            "score": pa.array([i / 8 for i in range(part * per, (part + 1) * per)],
                              pa.float64()),
            "segments": pa.array([[f"s{i % 7}", f"s{i % 5}"]
                                  for i in range(part * per, (part + 1) * per)],
                                 pa.list_(pa.string())),
        })
        pq.write_table(table, out / f"part-{part}.parquet", row_group_size=per // 2)
    return str(out)


def expected(i: int) -> dict[str, Any]:
    return {"name": f"user {i}", "score": i / 8, "segments": [f"s{i % 7}", f"s{i % 5}"]}


def killing_wrapper(tmp_path: Path) -> Path:
    """A roost-load that, the first time it builds shard 1, is SIGKILLed while
    it reads its input, as a lost executor's would be; every later run is
    the real one."""
    marker = tmp_path / "shard-1-killed"
    script = tmp_path / "roost-load-killed-once"
    script.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        case " $* " in
          *" --shard 1 "*)
            if mkdir {marker} 2>/dev/null; then
              # An asynchronous command's stdin is /dev/null unless given
              # another: the task's pipe, kept as fd 3.
              exec 3<&0
              {roost_load()} "$@" <&3 3<&- &
              sleep 0.3
              kill -9 $! && mkdir {marker}/mid-build
              exit 137
            fi ;;
        esac
        exec {roost_load()} "$@"
        """))
    script.chmod(0o755)
    return script


def versions(minio: Minio, table: str) -> list[dict[str, Any]]:
    r = subprocess.run([roost_load(), "versions", "--repository", REPOSITORY, "--table", table,
                        "--output-format", "json"], capture_output=True, text=True,
                       env=dict(os.environ, **minio.environment()), timeout=60)
    assert r.returncode == 0, r.stderr
    listed: list[dict[str, Any]] = json.loads(r.stdout)["versions"]
    return listed


def test_publish_builds_on_executors_and_every_key_reads_back(
        spark: Any, minio: Minio, tmp_path: Path) -> None:
    from roost.spark import publish

    df = spark.read.parquet(users_dataset(tmp_path))
    wrapper = killing_wrapper(tmp_path)
    summary = publish(df, table="users", key="id", repository=REPOSITORY, shards=SHARDS,
                      roost_load=str(wrapper))
    assert (tmp_path / "shard-1-killed" / "mid-build").is_dir(), \
        "shard 1's first attempt was not killed while it ran"
    assert summary["version_name"] == "v000001", summary
    assert summary["keys"] == ROWS, summary

    # Real servers pull their shard of it from MinIO, and every key is read
    # back through the routing client.
    (tmp_path / "cluster").mkdir()
    cluster = Cluster(tmp_path / "cluster")
    try:
        servers = []
        for shard in range(SHARDS):
            data = tmp_path / f"server{shard}"
            data.mkdir()
            servers.append(cluster.server(shard=shard, data=data, extra=[
                "--repository", REPOSITORY, "--repository-poll", "0.2"], ready=False))
        for s in servers:
            s.wait_listening()
            wait_for(lambda: serving_version(s.address, "users") == "v000001",
                     "users v000001 to be served", describe=s.describe)
        client = roost.Client([[s.address] for s in servers])
        step = 20_000
        for start in range(0, ROWS, step):
            keys = [str(i).encode() for i in range(start, start + step)]
            values = client.get_many("users", keys)
            for i, v in zip(range(start, start + step), values):
                assert v is not None, f"key {i} is missing"
                assert json.loads(v) == expected(i), (i, v)
        assert client.get_many("users", [b"-1", str(ROWS).encode()]) == [None, None]
        client.close()
    finally:
        cluster.close()


DRIVER = """
import os, sys
from pyspark.sql import SparkSession
from roost.spark import publish
spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "4").getOrCreate())
df = spark.createDataFrame([(i, f"v{i}") for i in range(1000)], "id long, v string")
publish(df, table="killed", key="id", value="v", repository=sys.argv[1], shards=2,
        roost_load=sys.argv[2])
print("published: the driver was not killed")
"""


def test_a_driver_killed_before_publishing_publishes_nothing(
        spark: Any, minio: Minio, tmp_path: Path) -> None:
    """A job killed after its shards are built and before the commit leaves
    an incomplete version that nothing serves; the next publish's retention
    removes it."""
    from roost.spark import publish

    # Version 1 of `killed`, published whole.
    first = spark.createDataFrame([(i, f"old{i}") for i in range(10)], "id long, v string")
    publish(first, table="killed", key="id", value="v", repository=REPOSITORY, shards=2,
            roost_load=roost_load())

    # A driver that stops for good as it is about to publish version 2.
    stopped = tmp_path / "driver-at-publish"
    wrapper = tmp_path / "roost-load-stops-at-publish"
    wrapper.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        if [ "$1" = publish ]; then touch {stopped}; exec sleep 600; fi
        exec {roost_load()} "$@"
        """))
    wrapper.chmod(0o755)
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    driver = subprocess.Popen([sys.executable, str(script), REPOSITORY, str(wrapper)],
                              env=dict(os.environ, **spark_environment(minio)),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              start_new_session=True)
    try:
        wait_for(lambda: stopped.exists() or driver.poll() is not None,
                 "the driver to reach its publish", timeout=240)
        assert stopped.exists(), driver.communicate()[0].decode(errors="replace")
    finally:
        os.killpg(driver.pid, signal.SIGKILL)  # the driver, its JVM, its roost-load
        driver.wait()

    listed = {v["name"]: v for v in versions(minio, "killed")}
    assert set(listed) == {"v000001", "v000002"}, listed
    assert listed["v000001"]["pointer"] and listed["v000001"]["complete"], listed
    assert not listed["v000002"]["complete"], listed
    assert listed["v000002"]["files"] >= 2, listed  # its shards were uploaded

    # The next job publishes version 3 and its retention removes the
    # abandoned version 2 (but never the newest, nor the one served).
    time.sleep(1.5)
    again = spark.createDataFrame([(i, f"new{i}") for i in range(10)], "id long, v string")
    summary = publish(again, table="killed", key="id", value="v", repository=REPOSITORY,
                      shards=2, roost_load=roost_load(), keep_versions=5,
                      abandoned_after="1s")
    assert summary["version_name"] == "v000003", summary
    listed = {v["name"]: v for v in versions(minio, "killed")}
    assert set(listed) == {"v000001", "v000003"}, listed
    assert listed["v000003"]["pointer"], listed


def test_refusals_name_what_is_wrong(spark: Any, minio: Minio) -> None:
    from roost.spark import PublishError, publish

    df = spark.createDataFrame([(1, "a"), (None, "b")], "id long, v string")
    with pytest.raises(ValueError, match="no column 'nope'; the DataFrame has id, v"):
        publish(df, table="t", key="nope", repository=REPOSITORY, shards=2,
                roost_load=roost_load())
    with pytest.raises(ValueError, match="shards is 2 to 1024, not 1"):
        publish(df, table="t", key="id", repository=REPOSITORY, shards=1,
                roost_load=roost_load())
    # A null key: refused by the build of the shard it went to, naming its
    # row; nothing is published.
    with pytest.raises(PublishError, match="null") as e:
        publish(df, table="nulls", key="id", value="v", repository=REPOSITORY, shards=2,
                roost_load=roost_load())
    assert "nothing was published" in str(e.value)
    listed = versions(minio, "nulls")
    assert all(not v["complete"] for v in listed), listed
