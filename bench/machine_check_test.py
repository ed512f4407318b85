"""bench/machine_check.py: the ceiling rows it reads and the verdict."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import machine_check  # noqa: E402


def line(dataset, config, ops):
    return json.dumps({"dataset": dataset, "keys": 10, "system": "ceiling",
                       "config": config, "op": "read", "ops_per_s": ops})


# The figures of a run whose variable set's array read 4x slower than the
# uniform set's (2026-11-30, the check and round 1 of a run begun 01:07 UTC).
LINES = [line("uniform", "independent 64-byte reads", 44.4e6),
         line("uniform", "dependent 64-byte reads", 6.6e6),
         line("uniform", "independent 64-byte reads, huge pages", 56e6),
         line("variable", "independent 64-byte reads", 11.2e6),
         line("variable", "independent 64-byte reads, huge pages", 21e6)]


def test_reads_each_data_sets_independent_row_without_huge_pages():
    assert machine_check.independent_reads(LINES) == {"uniform": 44.4e6, "variable": 11.2e6}
    assert machine_check.independent_reads(LINES[1:3]) == {}
    assert machine_check.independent_reads(["", LINES[0]]) == {"uniform": 44.4e6}


def test_refuses_below_the_minimum_and_says_both_figures():
    status, sentence = machine_check.verdict(11.2e6, 40, "variable")
    assert status == 1
    assert "11.2 M" in sentence and "variable data set" in sentence
    assert "minimum of 40 M" in sentence
    status, sentence = machine_check.verdict(52.5e6, 40)
    assert status == 0 and "52.5 M" in sentence


def test_main_fails_when_any_data_set_is_below(tmp_path, capsys):
    f = tmp_path / "c.jsonl"
    f.write_text("\n".join(LINES) + "\n")
    assert machine_check.main(["x", str(f), "10"]) == 0
    assert machine_check.main(["x", str(f), "40"]) == 1
    err = capsys.readouterr().err
    assert "44.4 M" in err and "11.2 M" in err
    f.write_text("\n".join(LINES[:3]) + "\n")
    assert machine_check.main(["x", str(f), "40"]) == 0
    f.write_text(LINES[1] + "\n")
    assert machine_check.main(["x", str(f), "40"]) == 2
    assert machine_check.main(["x"]) == 2
