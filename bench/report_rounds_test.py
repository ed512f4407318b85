"""bench/report_common.py's rounds: lookup rows measured in several rounds
collapse to one row each (medians, errors added, the shortest check), and
ratios are taken round by round (median and range)."""

import json

import report_common as rc
import report_lookup


def row(system, rnd, ops, **extra):
    r = {"dataset": "uniform", "keys": 1000, "system": system, "config": "c",
         "op": "get", "batch": 1, "probe": "hit", "lookups": 100, "ops_per_s": ops,
         "ns_per_lookup": 1e9 / ops, "build_s": 1.0 + rnd, "round": rnd,
         "checked": 100, "errors": 0}
    r.update(extra)
    return r


def test_rounds_collapse_to_medians_and_keep_each_round():
    rows = [row("a", 1, 10.0), row("b", 1, 5.0), row("a", 2, 30.0),
            row("b", 2, 20.0), row("a", 3, 20.0), row("b", 3, 6.0)]
    a, b = rc.collapse_rounds(rows)
    assert (a["system"], a["ops_per_s"], a["build_s"]) == ("a", 20.0, 3.0)
    assert a["by_round"] == {1: 10.0, 2: 30.0, 3: 20.0}
    assert "round" not in a
    # Ratios of the rounds: 2, 1.5, 3.33: median 2, not 20/6 of the medians.
    assert rc.round_ratios(a, b) == [2.0, 1.5, 20.0 / 6.0]
    assert rc.fratio_rows(a, b) == "2.00× (1.50–3.33)"


def test_a_fault_in_any_round_shows_in_the_collapsed_row():
    a = rc.collapse_rounds([row("a", 1, 10.0), row("a", 2, 10.0, errors=3),
                            row("a", 3, 10.0, checked=7)])[0]
    assert (a["errors"], a["checked"]) == (3, 7)


def test_rows_without_rounds_pass_unchanged_and_ratio_as_before():
    plain = dict(row("a", 1, 10.0))
    del plain["round"]
    other = dict(plain, system="b", ops_per_s=4.0)
    assert rc.collapse_rounds([plain, other]) == [plain, other]
    assert rc.fratio_rows(plain, other) == "2.50×"
    assert rc.fratio_rows(plain, None) == "—"


def test_skipped_rows_collapse_to_one():
    skip = {"dataset": "variable", "keys": 1000, "system": "s", "config": "",
            "skipped": "fixed-size keys only"}
    rows = rc.collapse_rounds([dict(skip, round=1), dict(skip, round=2)])
    assert rows == [skip]


def test_the_report_gives_the_ceiling_ratio_of_every_round(tmp_path):
    ceiling = dict(row("ceiling", 0, 1.0), config="independent 64-byte reads",
                   op="read", probe="-")
    lines = []
    for rnd, (roost, peer, ceil) in enumerate([(12.0, 3.0, 20.0), (10.0, 2.0, 25.0),
                                               (11.0, 2.5, 18.0)], 1):
        lines += [row("roost cuckoo", rnd, roost, config="mmap"),
                  row("RocksDB CuckooTable", rnd, peer, config="default"),
                  dict(ceiling, round=rnd, ops_per_s=ceil)]
    (tmp_path / "lookup.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    res = rc.load_results(tmp_path)
    text = "\n".join(report_lookup.lookup_summary(res["lookup"], "uniform", 1000))
    # roost/ceiling by round: 0.6, 0.4, 0.611; roost/peer: 4, 5, 4.4.
    assert "run at 0.60× (0.40–0.61) the ceiling of independent 64-byte reads" in text
    assert "(4.40× (4.00–5.00) the peer's)" in text
