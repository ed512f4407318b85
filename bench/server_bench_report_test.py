"""bench/server_bench_report.py on fixed runs: its table and targets, row
for row as server_bench.sh's awk printed them, and its reading of ghz."""

import json

import server_bench_report as report

# label, method, batch, qps, keys/s, p50, p99, server µs/key, client CPU s
RUNS = [("noop", "get", 1, 90000.5, 90000.5, 600.2, 1500.7, 12.345, 1.5),
        ("roost", "get", 1, 81000.4, 81000.4, 700.1, 1700.2, 14.5, 1.4),
        ("roost+metrics", "get", 1, 80000, 80000, 710, 1710, None, 1.45),
        ("noop", "multiget", 10, 50000, 500000, 900, 2000, 2.5, 1.2),
        ("roost", "multiget", 10, 45000, 450000, 950, 2100, 2.8, 1.25),
        ("noop", "multiget", 1000, 3000, 3000000, 20000, 40000, 0.21, 1.0),
        ("roost", "multiget", 1000, 2900, 2900000, 21000, 41000, 0.305, 1.1),
        ("roost+metrics", "multiget", 1000, 2800, 2800000, 21500, 42000, 0.31, 1.12)]

# The header is padded by bytes: each µ takes two.
TABLE = """\
| server        | method   | batch |        QPS |       keys/s |   p50 µs |   p99 µs | server µs/key | client CPU s | keys/s / no-op |
| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| noop          | get      |     1 |      90000 |       0.090M |     600.2 |    1500.7 |         12.345 |         1.50 |              1 |
| roost         | get      |     1 |      81000 |       0.081M |     700.1 |    1700.2 |         14.500 |         1.40 |          0.900 |
| roost+metrics | get      |     1 |      80000 |       0.080M |     710.0 |    1710.0 |          0.000 |         1.45 |          0.889 |
| noop          | multiget |    10 |      50000 |       0.500M |     900.0 |    2000.0 |          2.500 |         1.20 |              1 |
| roost         | multiget |    10 |      45000 |       0.450M |     950.0 |    2100.0 |          2.800 |         1.25 |          0.900 |
| noop          | multiget |  1000 |       3000 |       3.000M |   20000.0 |   40000.0 |          0.210 |         1.00 |              1 |
| roost         | multiget |  1000 |       2900 |       2.900M |   21000.0 |   41000.0 |          0.305 |         1.10 |          0.967 |
| roost+metrics | multiget |  1000 |       2800 |       2.800M |   21500.0 |   42000.0 |          0.310 |         1.12 |          0.933 |"""

TARGETS = """\
target: unary Get >= 90% of the no-op ceiling: 81000 against 90000 QPS = 90.0%, NOT met
target: MultiGet of 1000 >= 3M keys/s: 2.90M keys/s, NOT met
target: server CPU <= 0.3 µs per key at batch 1000: 0.305 µs, NOT met
metrics endpoint scraped / off, Get QPS: 0.988; MultiGet 1000 keys/s: 0.966"""

# ghz's default summary (its printer's template), for a run of -c 64.
GHZ = "\n".join([
    "",
    "Summary:",
    "  Count:\t52000",
    "  Total:\t2.00 s",
    "  Slowest:\t30.10 ms",
    "  Fastest:\t0.21 ms",
    "  Average:\t2.40 ms",
    "  Requests/sec:\t25990.12",
    "",
    "Response time histogram:",
    "  0.210 [1]\t|",
    "  3.200 [50000]\t|\u220e\u220e\u220e",
    "",
    "Latency distribution:",
    "  10 % in 1.10 ms ",
    "  50 % in 2.31 ms ",
    "  99 % in 6.75 ms ",
    "",
    "Status code distribution:",
    "  [OK]            51950 responses   ",
    "  [Canceled]      40 responses   ",
    "  [Unavailable]   10 responses   ",
    "",
    "Error distribution:",
    "  [40]   rpc error: code = Canceled desc = grpc: the client connection is closing   ",
    "  [10]   rpc error: code = Unavailable desc = grpc: the client connection is closing   ",
    ""])


def results_text():
    lines = []
    for label, method, batch, qps, kps, p50, p99, cpu, client in RUNS:
        lines.append(label + " " + json.dumps({
            "method": method, "batch": batch, "channels": 4, "concurrency": 64,
            "qps": qps, "keys_per_s": kps, "p50_us": p50, "p99_us": p99,
            "errors": 0, "server_cpu_us_per_key": cpu, "client_cpu_s": client}))
    return "\n".join(lines) + "\n"


def test_table_and_targets_as_awk_printed_them(tmp_path):
    (tmp_path / "results").write_text(results_text())
    rows = report.read_results(tmp_path / "results")
    assert "\n".join(report.table(rows)) == TABLE
    assert "\n".join(report.targets(rows)) == TARGETS


def test_targets_met_and_missing_rows(tmp_path):
    (tmp_path / "results").write_text(results_text())
    rows = report.read_results(tmp_path / "results")
    for r in rows:
        if r["label"] == "roost":
            r["qps"] *= 1.2
            r["keys_per_s"] *= 1.2
            r["server_cpu_us_per_key"] = 0.25
    lines = report.targets(rows)
    assert lines[0].endswith("= 108.0%, met")
    assert lines[1] == "target: MultiGet of 1000 >= 3M keys/s: 3.48M keys/s, met"
    assert lines[2] == "target: server CPU <= 0.3 µs per key at batch 1000: 0.250 µs, met"
    # No roost run at batch 1000: neither of its targets, nor the ratio.
    rows = [r for r in rows if r["batch"] != 1000]
    assert report.targets(rows) == [
        "target: unary Get >= 90% of the no-op ceiling: 97200 against 90000 QPS = "
        "108.0%, met",
        "metrics endpoint scraped / off, Get QPS: 0.823"]


def test_notes():
    assert report.notes(20000, 41, "1.50 0.20 0.10")[4:] == [
        "(41 roost_ samples in a scrape afterwards).",
        "(the targets below are set for 10,000,000 keys; a smaller table fits in cache)",
        "(load average 1.50 0.20 0.10 at the start: other work may have competed for "
        "the cores)"]
    assert len(report.notes(10000000, 0, "0.50 0.20 0.10")) == 5


def test_ghz_row():
    assert report.ghz_row("roost", GHZ, 0, 64) == {
        "name": "roost", "qps": "25990.12", "p50": "2.31 ms", "p99": "6.75 ms",
        "ok": "51950", "cut": 50}
    # A failed run, more cut off than in flight, or an error of the server's.
    assert report.ghz_row("roost", GHZ, 1, 64) is None
    assert report.ghz_row("roost", GHZ, 0, 49) is None
    assert report.ghz_row("roost", GHZ.replace(
        "the client connection is closing   \n  [10]",
        "table not found\n  [10]"), 0, 64) is None
    assert report.ghz_row("roost", "Error: connection refused\n", 0, 64) is None


def test_ghz_lines():
    rows = [report.ghz_row("noop", GHZ, 0, 64),
            report.ghz_row("roost", GHZ.replace("25990.12", "20792.10"), 0, 64)]
    assert report.ghz_lines("v0.120.0", rows, "64", "4", "2") == [
        "ghz v0.120.0, Get of one fixed key, -c 64 --connections 4 -z 2s:",
        "  noop: 25990.12 QPS, p50 2.31 ms, p99 6.75 ms (51950 OK, 50 cut off at the end)",
        "  roost: 20792.10 QPS, p50 2.31 ms, p99 6.75 ms (51950 OK, 50 cut off at the end)",
        "  roost / no-op: 0.800"]
    assert report.ghz_lines("", [], "64", "4", "2") == [
        "ghz: skipped (not on PATH nor in ~/go/bin)"]


def test_report_reads_the_directory(tmp_path, capsys):
    (tmp_path / "results").write_text(results_text())
    (tmp_path / "metrics.txt").write_text("# HELP roost_x\nroost_a 1\nroost_b 2\nother 3\n")
    assert report.main(["report", str(tmp_path), "--keys", "20000", "--channels", "4",
                        "--concurrency", "64", "--warmup", "0.2", "--duration", "0.5",
                        "--load-at-start", "0.1 0.1 0.1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("\nroost-server under load: 20000 keys (cuckoo, 8-byte keys, "
                          "8-byte values), server_load with 4 channels, 64 RPCs in "
                          "flight, 0.2 s warm-up + 0.5 s per run, ")
    assert TABLE in out and TARGETS in out
    assert "(2 roost_ samples in a scrape afterwards)." in out
    assert out.endswith("\nghz: skipped (not on PATH nor in ~/go/bin)\n")
