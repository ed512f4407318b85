"""docs/batch.md's examples, run as they are written: the pandas and Spark
ones as Python scripts, the Airflow task's bash command (its template
rendered; Airflow itself is not run), and the Kubernetes CronJob checked by
kubeconform against Kubernetes' schema and its container's command run on
this host. Each publishes into a local directory as the repository (REPO),
and what it published is read back with roost-load.

Needs the package's [batch] and [spark] extras (ctest runs it in the venv of
python_batch_install), roost-load (ROOST_LOAD_BINARY), Java for PySpark and
scripts/install-k8s-tools.sh's kubeconform.
"""

from __future__ import annotations

import ast
import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, binary

pytest.importorskip("pyarrow")
yaml = pytest.importorskip("yaml")

DOC = ROOT / "docs" / "batch.md"


def example(name: str) -> str:
    """The fenced block after `<!-- example: NAME -->`."""
    m = re.search(rf"<!-- example: {name} -->\n```\w+\n(.*?)\n```", DOC.read_text(), re.S)
    assert m, f"docs/batch.md has no example {name!r}"
    return m.group(1) + "\n"


def environment(tmp_path: Path) -> dict[str, str]:
    """REPO, and roost-load and this venv's roost-build on PATH, as a user's
    shell has them."""
    load = Path(binary("ROOST_LOAD_BINARY", "loader/roost-load"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    link = bin_dir / "roost-load"
    if not link.exists():
        link.symlink_to(load)
    path = f"{bin_dir}:{Path(sys.executable).parent}:{os.environ['PATH']}"
    return dict(os.environ, REPO=f"file://{tmp_path / 'repo'}", PATH=path,
                PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)


def run(args: list[str], env: dict[str, str], cwd: Path) -> str:
    r = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{args[:2]} exited {r.returncode}:\n{r.stdout}\n{r.stderr}"
    return r.stdout


def served(env: dict[str, str], tmp_path: Path, table: str) -> dict[str, Any]:
    """The version `table`'s POINTER names, from `roost-load versions`."""
    out = run([binary("ROOST_LOAD_BINARY", "loader/roost-load"), "versions", "--repository",
               env["REPO"], "--table", table, "--output-format", "json"], env, tmp_path)
    listed = json.loads(out)["versions"]
    current = [v for v in listed if v["pointer"]]
    assert len(current) == 1 and current[0]["complete"], listed
    version: dict[str, Any] = current[0]
    return version


def value(env: dict[str, str], tmp_path: Path, table: str, key: str) -> Any:
    """The value of `key` in what the repository's POINTER names, read by
    roost-load get from a copy of the version's files."""
    version = served(env, tmp_path, table)["name"]
    root = Path(env["REPO"].removeprefix("file://")) / table / version
    out = run([binary("ROOST_LOAD_BINARY", "loader/roost-load"), "get", str(root), key],
              env, tmp_path)
    return json.loads(out.split("\t", 1)[1])


def test_pandas(tmp_path: Path) -> None:
    env = environment(tmp_path)
    (tmp_path / "pandas_example.py").write_text(example("pandas"))
    run([sys.executable, "pandas_example.py"], env, tmp_path)
    assert served(env, tmp_path, "users")["keys"] == 3
    assert value(env, tmp_path, "users", "3") == {"name": "edsger", "ltv": None,
                                                  "segments": ["c"]}
    assert value(env, tmp_path, "users", "1") == {"name": "ada", "ltv": 12.5,
                                                  "segments": ["a", "b"]}


def test_spark(tmp_path: Path) -> None:
    env = environment(tmp_path)
    (tmp_path / "spark_example.py").write_text(example("spark"))
    out = run([sys.executable, "spark_example.py"], env, tmp_path)
    assert out.split()[-2:] == ["v000001", "10000"], out
    assert value(env, tmp_path, "users_spark", "9999") == {"name": "user 9999",
                                                           "ltv": 4999.5}


def test_airflow_task_command(tmp_path: Path) -> None:
    env = environment(tmp_path)
    tree = ast.parse(example("airflow"))
    command = next(n.value.value for n in tree.body if isinstance(n, ast.Assign)
                   and getattr(n.targets[0], "id", "") == "PUBLISH")
    assert isinstance(command, str)
    # What Airflow renders {{ data_interval_end | ts }} to.
    command = command.replace("{{ data_interval_end | ts }}", "2024-05-02T00:00:00+00:00")
    export = tmp_path / "exports" / "users"
    export.mkdir(parents=True)
    import pyarrow as pa
    import pyarrow.parquet as pq
    for part in range(2):
        pq.write_table(pa.table({"user_id": [part * 10 + i for i in range(10)],
                                 "plan": ["free", "pro"] * 5}),
                       export / f"part-{part}.parquet")
    run(["bash", "-euo", "pipefail", "-c", command], dict(env, EXPORT=str(export)), tmp_path)
    assert served(env, tmp_path, "users_daily")["keys"] == 20
    assert value(env, tmp_path, "users_daily", "13") == {"plan": "pro"}


def kubernetes_tools() -> dict[str, str]:
    r = subprocess.run([str(ROOT / "scripts" / "install-k8s-tools.sh"), "--check"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail("kubeconform is missing: run scripts/install-k8s-tools.sh "
                    f"(scripts/install-deps.sh does): {r.stderr}")
    return dict(line.split("=", 1) for line in r.stdout.split())


def test_kubernetes_cronjob(tmp_path: Path) -> None:
    env = environment(tmp_path)
    manifest = tmp_path / "cronjob.yaml"
    manifest.write_text(example("cronjob"))
    tools = kubernetes_tools()
    out = run([tools["ROOST_KUBECONFORM"], "-strict", "-summary", "-kubernetes-version", "1.31.0",
               "-schema-location", tools["ROOST_K8S_SCHEMAS"] +
               "/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/"
               "{{ .ResourceKind }}{{ .KindSuffix }}.json", str(manifest)], env, tmp_path)
    assert "Valid: 1, Invalid: 0, Errors: 0" in out, out

    job = yaml.safe_load(manifest.read_text())
    container = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    exports = tmp_path / "exports"
    exports.mkdir()
    with gzip.open(exports / "users.csv.gz", "wt") as f:
        f.write('user_id,name,note\n1,ada,"likes, commas"\n2,grace,"said ""hi"""\n')
    # The pod's volume and repository, on this host.
    command = [a.replace("/exports", str(exports)).replace("s3://tables/prod", env["REPO"])
               for a in container["command"]]
    run(command, env, tmp_path)
    assert served(env, tmp_path, "users_csv")["keys"] == 2
    assert value(env, tmp_path, "users_csv", "1") == {"name": "ada", "note": "likes, commas"}
    assert value(env, tmp_path, "users_csv", "2") == {"name": "grace", "note": 'said "hi"'}
