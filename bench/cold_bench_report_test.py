"""bench/cold_bench_report.py on fixed runs: each run's ratio to the better
RocksDB run of its distribution and operation, roost's best run of each
table against it, and exit 1 when a run answered wrong."""

import json

import cold_bench_report as cbr


def run(system, dist, op, ops, p99, advice="random", cache=0, errors=0):
    return {"system": system, "advice": advice if system != "rocksdb" else "-",
            "dist": dist, "op": op, "batch": 1 if op == "get" else 100, "threads": 4,
            "keys": 1000, "table_bytes": 1 << 20, "lookups": 2000, "seconds": 1.0,
            "ops_per_s": ops, "p50_us": 5.0, "p99_us": p99, "max_us": 900.0,
            "errors": errors, "major_faults": 1000, "read_bytes": 4096 * 1000,
            "block_cache": cache}


RUNS = [run("roost-cuckoo", "zipf", "get", 300.0, 50.0),
        run("roost-cuckoo", "zipf", "get", 200.0, 80.0, advice="normal"),
        run("roost-block", "zipf", "get", 150.0, 120.0),
        run("roost-block", "zipf", "get", 140.0, 130.0, advice="requests"),
        run("rocksdb", "zipf", "get", 100.0, 200.0, cache=8 << 20),
        run("rocksdb", "zipf", "get", 120.0, 400.0, cache=16 << 20)]


def test_ratios_are_to_the_better_rocksdb_run():
    text = "\n".join(cbr.report(RUNS, 32, 128))
    assert "roost's cuckoo table 128 MiB, the memory limit 32 MiB (4.0×)" in text
    assert "| zipf | get | roost cuckoo, MADV_RANDOM | 300 | 5.0 | 50 | 0.500 | 2.00 | 2.50× |" in text
    assert "| zipf | get | roost cuckoo, read-around | 200 | 5.0 | 80 | 0.500 | 2.00 | 1.67× |" in text
    assert ("zipf get: roost cuckoo, MADV_RANDOM 2.50× the lookups/s of RocksDB "
            "block-based, block cache 16 MiB, p99 50 vs 400 µs (0.12×).") in text
    assert "zipf get: roost block, MADV_RANDOM 1.25× the lookups/s" in text
    assert "| roost block, MADV_RANDOM, page requests | 140 |" in text


def test_a_wrong_answer_fails_the_report(tmp_path, capsys):
    path = tmp_path / "cold.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RUNS))
    assert cbr.main([str(path)]) == 0
    bad = RUNS[:-1] + [dict(RUNS[-1], errors=3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in bad))
    assert cbr.main([str(path)]) == 1
    assert "3 wrong answers" in capsys.readouterr().err
