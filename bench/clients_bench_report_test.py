"""bench/clients_bench_report.py on fixed lines: its table, row for row, the
ratios to the C++ roost client and to each language's Redis client, and the
lines and runs it refuses."""

import json

import pytest

import clients_bench_report as report


def row(language, client, system, workload, keys_per_s, qps, p50, p99, **extra):
    r = {"language": language, "client": client, "system": system, "workload": workload,
         "concurrency": 64 if workload == "get" else 8,
         "batch": 1 if workload == "get" else 100, "keys_per_s": keys_per_s, "qps": qps,
         "p50_us": p50, "p99_us": p99, "rpc_errors": 0, "misses": 0, "bad_values": 0,
         "server_cores": 0.5}
    r.update(extra)
    return r


# As clients_bench.sh writes them: by load, C++ then the other languages.
ROWS = [
    row("C++", "roost (C++)", "roost", "get", 200000, 200000, 300, 900),
    row("C++", "hiredis", "redis", "get", 100000, 100000, 600, 1500),
    row("Python", "roost (Python)", "roost", "get", 30000, 30000, 2000, 4000),
    row("Python", "redis-py", "redis", "get", 20000, 20000, 3000, 6000),
    row("Go", "go-redis", "redis", "get", 80000, 80000, 800, 2000),
    row("Go", "roost (Go)", "roost", "get", 100000, 100000, 600, 1800),
    row("Java", "roost (Java)", "roost", "get", 50000.4, 50000.4, 1200.6, 3000.2),
    row("C++", "roost (C++)", "roost", "multiget", 1000000, 10000, 800, 2000),
    row("C++", "hiredis", "redis", "multiget", 2000000, 20000, 400, 1000),
    row("Java", "roost (Java)", "roost", "multiget", 500000, 5000, 1600, 4000),
    row("Java", "Jedis", "redis", "multiget", 250000, 2500, 3200, 9000, server_cores=None),
]

TABLE = """\
| load | in flight | client | against | keys/s | calls/s | p50 µs | p99 µs | errors | server cores | server µs/key | keys/s ÷ roost C++ | keys/s ÷ its Redis client |
| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| get | 64 Gets | roost (C++) | roost | 200,000 | 200,000 | 300 | 900 | 0 | 0.50 | 2.50 | 1.00 | 2.00 |
| get | 64 Gets | hiredis | Redis | 100,000 | 100,000 | 600 | 1,500 | 0 | 0.50 | 5.00 |  |  |
| get | 64 Gets | roost (Python) | roost | 30,000 | 30,000 | 2,000 | 4,000 | 0 | 0.50 | 16.67 | 0.15 | 1.50 |
| get | 64 Gets | redis-py | Redis | 20,000 | 20,000 | 3,000 | 6,000 | 0 | 0.50 | 25.00 |  |  |
| get | 64 Gets | roost (Go) | roost | 100,000 | 100,000 | 600 | 1,800 | 0 | 0.50 | 5.00 | 0.50 | 1.25 |
| get | 64 Gets | go-redis | Redis | 80,000 | 80,000 | 800 | 2,000 | 0 | 0.50 | 6.25 |  |  |
| get | 64 Gets | roost (Java) | roost | 50,000 | 50,000 | 1,201 | 3,000 | 0 | 0.50 | 10.00 | 0.25 | — |
| multiget | 8 × 100 keys | roost (C++) | roost | 1,000,000 | 10,000 | 800 | 2,000 | 0 | 0.50 | 0.50 | 1.00 | 0.50 |
| multiget | 8 × 100 keys | hiredis | Redis | 2,000,000 | 20,000 | 400 | 1,000 | 0 | 0.50 | 0.25 |  |  |
| multiget | 8 × 100 keys | roost (Java) | roost | 500,000 | 5,000 | 1,600 | 4,000 | 0 | 0.50 | 1.00 | 0.50 | 2.00 |
| multiget | 8 × 100 keys | Jedis | Redis | 250,000 | 2,500 | 3,200 | 9,000 | 0 |  |  |  |  |"""


def write(tmp_path, rows, extra=""):
    path = tmp_path / "clients.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + extra)
    return str(path)


def test_table_and_ratios(tmp_path, capsys):
    assert report.main(["report", write(tmp_path, ROWS)]) == 0
    assert capsys.readouterr().out == TABLE + "\n"


def test_no_cpp_client_is_no_ratio(tmp_path, capsys):
    rows = [r for r in ROWS if r["client"] != "roost (C++)"]
    assert report.main(["report", write(tmp_path, rows)]) == 0
    out = capsys.readouterr().out
    assert "| roost (Go) | roost | 100,000 | 100,000 | 600 | 1,800 | 0 | 0.50 | 5.00 | — | 1.25 |" in out


def test_a_run_with_errors_fails(tmp_path, capsys):
    rows = ROWS[:2] + [dict(ROWS[2], bad_values=3)]
    assert report.main(["report", write(tmp_path, rows)]) == 1
    captured = capsys.readouterr()
    assert "| get | 64 Gets | roost (Python) | roost | 30,000 |" in captured.out
    assert "runs with errors: roost (Python) get" in captured.err


@pytest.mark.parametrize("extra, message", [
    ("not json\n", "line 12: not JSON"),
    ("[1, 2]\n", "line 12: not a JSON object"),
    ('{"language": "Go", "client": "x"}\n', "line 12: no system, workload, concurrency"),
])
def test_bad_lines_are_named(tmp_path, capsys, extra, message):
    assert report.main(["report", write(tmp_path, ROWS, extra)]) == 1
    assert message in capsys.readouterr().err


def test_no_runs(tmp_path, capsys):
    assert report.main(["report", write(tmp_path, [])]) == 1
    assert "no runs" in capsys.readouterr().err
