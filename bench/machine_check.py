"""bench/run.sh's machine check: is this machine, now, one to take figures
of record on? Reads peers_bench's ceiling lines (JSON lines, one data set's
or several) and compares each data set's independent random 64-byte reads
without huge pages (the row the report's ceiling sentences use) with a
minimum in millions of reads/s.

    python3 bench/machine_check.py CEILING.jsonl MIN

Prints each figure; exits 0 when every one is at least MIN, 1 when any is
below, 2 when the file holds no such line."""

import json
import sys

ROW = "independent 64-byte reads"


def independent_reads(lines):
    """{data set: the ceiling's independent reads per second (no huge
    pages)}, in the order the lines give them."""
    out = {}
    for line in lines:
        if not line.strip():
            continue
        row = json.loads(line)
        if row.get("system") == "ceiling" and row.get("config") == ROW:
            out[row.get("dataset", "")] = float(row["ops_per_s"])
    return out


def verdict(reads_per_s, minimum_m, dataset="uniform"):
    """(exit status, sentence) for one measured rate against MIN (millions)."""
    m = reads_per_s / 1e6
    where = f"at the {dataset} data set's size"
    if m < minimum_m:
        return 1, (f"machine check: {m:.1f} M independent 64-byte reads/s {where}, below "
                   f"the minimum of {minimum_m:.10g} M: memory is running slow (another "
                   f"tenant, kdamond); ratios measured now would mislead")
    return 0, (f"machine check: {m:.1f} M independent 64-byte reads/s {where} "
               f"(minimum {minimum_m:.10g} M)")


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        reads = independent_reads(f)
    if not reads:
        print(f"machine check: no \"{ROW}\" line in {argv[1]}", file=sys.stderr)
        return 2
    status = 0
    for dataset, rate in reads.items():
        s, sentence = verdict(rate, float(argv[2]), dataset)
        print(sentence, file=sys.stderr)
        status = max(status, s)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
