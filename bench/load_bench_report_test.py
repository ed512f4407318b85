"""bench/load_bench_report.py on a fixed directory of runs: its table and
targets, row for row as load_bench.sh's awk printed them, and its exit
status when a check or a cross-check fails."""

import load_bench_report as report

KEYS = 100000
# name, wall s, user s, sys s, peak RSS KiB, output bytes
RUNS = [("cuckoo-bin", 0.05, 0.03, 0.01, 20480, 2097152),
        ("cuckoo-tsv", 0.08, 0.06, 0.01, 22528, 2097152),
        ("block-bin", 0.125, 0.10, 0.02, 30720, 1800000),
        ("block-tsv", 0.155, 0.13, 0.02, 31744, 1800000),
        ("block-bin-256M", 0.131, 0.11, 0.02, 29000, 1800000),
        ("sst-writer", 0.7, 0.5, 0.1, 40960, 1900000)]
SST_LINE = ("keys=100000 seconds=0.040 keys_per_second=2500000 file_size=1900000 "
            "rss_before_open_kib=5120 vm_hwm_kib=40960")

TABLE = """\
| run                                  |   wall s |     keys/s |    CPU s |  CPU% |  peak RSS |    output |  RSS/out | check |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |
| cuckoo, binary input                 |     0.05 |      2.00M |     0.04 |   80% |    20 MiB |     2 MiB |    10.00 | ok |
| cuckoo, hex TSV input                |     0.08 |      1.25M |     0.07 |   87% |    22 MiB |     2 MiB |    11.00 | ok |
| block, binary input                  |     0.12 |      0.80M |     0.12 |   96% |    30 MiB |     2 MiB |    17.48 | ok |
| block, hex TSV input                 |     0.15 |      0.65M |     0.15 |   97% |    31 MiB |     2 MiB |    18.06 | ok |
| block, binary, --memory-limit 256M   |     0.13 |      0.76M |     0.13 |   99% |    28 MiB |     2 MiB |    16.50 | ok |
| RocksDB SstFileWriter, pre-sorted *  |     0.04 |      2.50M |          |       |    40 MiB |     2 MiB |    22.08 | ok |"""

TARGETS = """\
target: cuckoo from binary input >= 2M keys/s end to end: 2.00M keys/s, met
target: block from unsorted binary input >= 1M keys/s incl. the sort: 0.80M keys/s, NOT met
target: block-bin peak RSS <= --memory-limit 1024 MiB + 64 MiB: 30 MiB, met
target: block-tsv peak RSS <= --memory-limit 1024 MiB + 64 MiB: 31 MiB, met
target: block-bin-256M peak RSS <= --memory-limit 256 MiB + 64 MiB: 28 MiB, met
target: cuckoo-bin peak RSS <= 1.5x table size (3 MiB): 20 MiB = 10.00x, NOT met
target: cuckoo-tsv peak RSS <= 1.5x table size (3 MiB): 22 MiB = 11.00x, NOT met
reference: SstFileWriter (pre-sorted, writer only) 0.04 s; roost-load block from unsorted binary 0.12 s (3.12x), cuckoo from binary 0.05 s (1.25x)"""


def write_runs(d, checks=None, tables=None):
    """The files load_bench.sh leaves in DIR for these runs."""
    t = 1700000000.0
    lines = []
    for name, wall, user, sys_s, rss, size in RUNS:
        check = (checks or {}).get(name, "ok")
        lines.append(f"{name} {t:.6f} {t + wall:.6f} {size} {check}")
        t += wall + 1
        (d / f"{name}.time").write_text(
            f'\tCommand being timed: "roost-load build"\n'
            f"\tUser time (seconds): {user}\n\tSystem time (seconds): {sys_s}\n"
            f"\tPercent of CPU this job got: 80%\n"
            f"\tMaximum resident set size (kbytes): {rss}\n\tExit status: 0\n")
    (d / "runs").write_text("\n".join(lines) + "\n")
    (d / "sst-writer.out").write_text(SST_LINE + "\n")
    for name, content in (tables or {"cuckoo-bin": b"c", "cuckoo-tsv": b"c",
                                     "block-bin": b"b", "block-tsv": b"b",
                                     "block-bin-256M": b"b"}).items():
        (d / f"{name}.sst").write_bytes(content)


def test_table_and_targets_as_awk_printed_them(tmp_path):
    write_runs(tmp_path)
    runs, sst_line = report.read_runs(tmp_path)
    assert sst_line == SST_LINE
    assert "\n".join(report.table(runs, KEYS)) == TABLE
    assert "\n".join(report.targets(runs, KEYS)) == TARGETS


def test_notes():
    cross = ["cuckoo-tsv vs cuckoo-bin: identical", "block-tsv vs block-bin: DIFFERENT"]
    assert report.notes(KEYS, SST_LINE, cross, "2.10 1.00 0.50") == [
        "* SstFileWriter: wall s is the writer alone (Open, Put x N, Finish), the",
        "  pairs read and sorted beforehand; its peak RSS is the whole process's,",
        "  including the 2 MiB of pairs it holds (RSS before Open:",
        "  5 MiB). Output: " + SST_LINE,
        "cross-checks: cuckoo-tsv vs cuckoo-bin: identical; block-tsv vs block-bin: DIFFERENT",
        "(the targets below are set for 10,000,000 keys; at other sizes fixed costs shift them)",
        "(load average 2.10 1.00 0.50 at the start: another job may have competed for the cores)"]
    # At the targets' size, on a quiet machine: neither remark.
    assert len(report.notes(10000000, SST_LINE, cross, "0.20 0.10 0.00")) == 5


def test_report_passes_when_every_check_does(tmp_path, capsys):
    write_runs(tmp_path)
    assert report.main([str(tmp_path), "--keys", str(KEYS), "--load-at-start", "0.1 0 0"]) == 0
    out = capsys.readouterr().out
    assert TABLE in out and TARGETS in out
    assert "cross-checks: cuckoo-tsv vs cuckoo-bin: identical; block-tsv vs block-bin: " \
           "identical; block-bin-256M vs block-bin: identical" in out


def test_report_fails_on_a_failed_check(tmp_path, capsys):
    write_runs(tmp_path, checks={"block-tsv": "FAILED: inspect says 99 keys"})
    assert report.main([str(tmp_path), "--keys", str(KEYS)]) == 1
    captured = capsys.readouterr()
    assert "| FAILED: inspect says 99 keys |" in captured.out
    assert "load_bench: some output failed its checks" in captured.err


def test_report_fails_when_tables_differ(tmp_path, capsys):
    write_runs(tmp_path, tables={"cuckoo-bin": b"c", "cuckoo-tsv": b"C", "block-bin": b"b",
                                 "block-tsv": b"b"})  # and block-bin-256M missing
    assert report.main([str(tmp_path), "--keys", str(KEYS)]) == 1
    out = capsys.readouterr().out
    assert ("cross-checks: cuckoo-tsv vs cuckoo-bin: DIFFERENT; block-tsv vs block-bin: "
            "identical; block-bin-256M vs block-bin: DIFFERENT") in out


def test_time_v_and_key_value():
    assert report.time_v("\tUser time (seconds): 1.25\n\tSystem time (seconds): 0.5\n"
                         "\tMaximum resident set size (kbytes): 4096\n") == (1.25, 0.5, 4096)
    assert report.key_value(SST_LINE, "seconds") == 0.040
    assert report.key_value(SST_LINE, "rss_before_open_kib") == 5120
    assert report.key_value("keys=1", "seconds") is None
