#!/usr/bin/env python3
"""The batch inputs' builds, side by side on the same rows (issue 32).

Usage: bench/batch_bench.py [--rows N] [--work DIR] [--build DIR]
                            [--python VENV_PYTHON] [--spark] [--skip-generate]

The same N rows of 8 columns (bench/batch_inputs.py: an id, four floats,
an integer, a string, a list of floats) as CSV, JSON Lines, TSV (the key and
the JSON object CSV's row makes) and Parquet (pyarrow's reading of the JSON
Lines, typed, in row groups of 1M rows). Then, each timed by
/usr/bin/time (wall, CPU, peak RSS):

  roost-load build of the TSV, the CSV, the JSON Lines (--output FILE);
  roost-build of the Parquet (--output FILE);
  reading the Parquet alone: pyarrow.parquet.read_table, and pandas;
  with --spark: roost.spark.publish into a local repository (4 shards) at
  local[1] and local[2], roost-build into the same kind of repository from
  one process, and the same Spark job writing the DataFrame as Parquet.

VENV_PYTHON is a Python with pyarrow, pandas and (for --spark) PySpark and
the roost package (clients/python[batch,spark]). Prints a Markdown table:
rows/s by wall time and by CPU time, and peak RSS (of the largest process:
/usr/bin/time's, so for roost-build the larger of Python and roost-load).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

PARQUET = """
import sys, pyarrow.json as pj, pyarrow.parquet as pq
t = pj.read_json(sys.argv[1], read_options=pj.ReadOptions(block_size=64 << 20))
pq.write_table(t, sys.argv[2], row_group_size=1_000_000)
print(t.schema, file=sys.stderr)
"""

READ_ARROW = "import sys, pyarrow.parquet as pq; t = pq.read_table(sys.argv[1]); print(t.num_rows)"
READ_PANDAS = "import sys, pandas as pd; d = pd.read_parquet(sys.argv[1]); print(len(d))"

SPARK = """
import sys, time
from pyspark.sql import SparkSession
mode, cores, parquet, out = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
spark = (SparkSession.builder.master(f"local[{cores}]").config("spark.ui.enabled", "false")
         .config("spark.driver.memory", "6g").config("spark.sql.shuffle.partitions", "4")
         .getOrCreate())
df = spark.read.parquet(parquet)
start = time.monotonic()
if mode == "publish":
    import roost.spark
    roost.spark.publish(df, table="rows", key="id", repository=out, shards=4,
                        roost_load=sys.argv[5])
else:
    df.write.mode("overwrite").parquet(out)
print(f"job {time.monotonic() - start:.2f}", file=sys.stderr)
spark.stop()
"""


def timed(args: list[str], env: dict[str, str] | None = None) -> tuple[float, float, int, str]:
    """(wall s, CPU s, peak RSS KiB, stderr) of running `args`."""
    with tempfile.NamedTemporaryFile("r") as f:
        r = subprocess.run(["/usr/bin/time", "-o", f.name, "-f", "%e %U %S %M", *args],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        if r.returncode != 0:
            sys.exit(f"{' '.join(args[:4])} ... failed ({r.returncode}):\n{r.stderr[-3000:]}")
        wall, user, system, rss = f.read().split()[-4:]
    return float(wall), float(user) + float(system), int(rss), r.stderr


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--work", default="/tmp/roost-batch-bench")
    p.add_argument("--build", default=str(ROOT / "build" / "release"))
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--spark", action="store_true")
    p.add_argument("--skip-generate", action="store_true")
    a = p.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    load = str(Path(a.build) / "loader" / "roost-load")
    build = str(Path(a.python).parent / "roost-build")
    if not a.skip_generate:
        subprocess.run([sys.executable, str(HERE / "batch_inputs.py"), "--rows", str(a.rows),
                        str(work)], check=True)
        subprocess.run([a.python, "-c", PARQUET, str(work / "rows.jsonl"),
                        str(work / "rows.parquet")], check=True)
    out = str(work / "out.sst")
    runs: list[tuple[str, list[str]]] = [
        ("roost-load build, TSV", [load, "build", "-q", "-i", str(work / "rows.tsv"), "-o", out]),
        ("roost-load build, CSV", [load, "build", "-q", "--input-format", "csv",
                                   "--key-column", "id", "-i", str(work / "rows.csv"), "-o", out]),
        ("roost-load build, JSON Lines", [load, "build", "-q", "--input-format", "jsonl",
                                          "--key-field", "id", "-i", str(work / "rows.jsonl"),
                                          "-o", out]),
        ("roost-build, Parquet", [build, "-q", "--roost-load", load, "-i",
                                  str(work / "rows.parquet"), "--key-column", "id", "-o", out]),
        ("pyarrow read_table (Parquet, no build)",
         [a.python, "-c", READ_ARROW, str(work / "rows.parquet")]),
        ("pandas read_parquet (no build)", [a.python, "-c", READ_PANDAS,
                                           str(work / "rows.parquet")]),
    ]
    env = dict(os.environ, PYSPARK_PYTHON=a.python, PYSPARK_DRIVER_PYTHON=a.python)
    if a.spark:
        repo = work / "repo"
        for cores in ("1", "2"):
            runs.append((f"roost.spark.publish, local[{cores}], 4 shards",
                         [a.python, "-c", SPARK, "publish", cores, str(work / "rows.parquet"),
                          f"file://{repo}", load]))
            runs.append((f"Spark writing the DataFrame as Parquet, local[{cores}]",
                         [a.python, "-c", SPARK, "parquet", cores, str(work / "rows.parquet"),
                          str(work / "spark-out")]))
        runs.append(("roost-build, Parquet, one process, 4 shards into a repository",
                     [build, "-q", "--roost-load", load, "-i", str(work / "rows.parquet"),
                      "--key-column", "id", "--repository", f"file://{repo}", "--table",
                      "rows1", "--shards", "4"]))
    print(f"| what ({a.rows:,} rows) | wall s | rows/s (wall) | CPU s | rows/s (CPU) "
          "| peak RSS MiB | Spark job s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, args in runs:
        wall, cpu, rss, err = timed(args, env)
        job = next((line.split()[1] for line in err.splitlines() if line.startswith("job ")), "")
        print(f"| {name} | {wall:.1f} | {a.rows / wall:,.0f} | {cpu:.1f} | {a.rows / cpu:,.0f} "
              f"| {rss / 1024:.0f} | {job} |", flush=True)
    shutil.rmtree(work / "spark-out", ignore_errors=True)


if __name__ == "__main__":
    main()
