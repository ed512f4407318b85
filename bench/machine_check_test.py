"""bench/machine_check.py: the ceiling row it reads and the verdict."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import machine_check  # noqa: E402


def line(config, ops):
    return json.dumps({"dataset": "uniform", "keys": 10, "system": "ceiling",
                       "config": config, "op": "read", "ops_per_s": ops})


LINES = [line("independent 64-byte reads", 52.5e6),
         line("dependent 64-byte reads", 5.3e6),
         line("independent 64-byte reads, huge pages", 90e6)]


def test_reads_the_independent_row_without_huge_pages():
    assert machine_check.independent_reads(LINES) == 52.5e6
    assert machine_check.independent_reads(LINES[1:]) is None
    assert machine_check.independent_reads(["", LINES[0]]) == 52.5e6


def test_refuses_below_the_minimum_and_says_both_figures():
    status, sentence = machine_check.verdict(15.9e6, 40)
    assert status == 1
    assert "15.9 M" in sentence and "minimum of 40 M" in sentence
    status, sentence = machine_check.verdict(52.5e6, 40)
    assert status == 0 and "52.5 M" in sentence


def test_main_exit_statuses(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text("\n".join(LINES) + "\n")
    assert machine_check.main(["x", str(f), "40"]) == 0
    assert machine_check.main(["x", str(f), "60"]) == 1
    f.write_text(LINES[1] + "\n")
    assert machine_check.main(["x", str(f), "40"]) == 2
    assert machine_check.main(["x"]) == 2
