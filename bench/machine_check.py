"""bench/run.sh's machine check: is this machine, now, one to take figures
of record on? Reads peers_bench's ceiling lines (JSON lines) and compares
the independent random 64-byte reads without huge pages (the row the
report's ceiling sentence uses) with a minimum in millions of reads/s.

    python3 bench/machine_check.py CEILING.jsonl MIN

Prints the figure; exits 0 when it is at least MIN, 1 when below, 2 when
the file holds no such line."""

import json
import sys

ROW = "independent 64-byte reads"


def independent_reads(lines):
    """The ceiling's independent reads per second (no huge pages), or None."""
    for line in lines:
        if not line.strip():
            continue
        row = json.loads(line)
        if row.get("system") == "ceiling" and row.get("config") == ROW:
            return float(row["ops_per_s"])
    return None


def verdict(reads_per_s, minimum_m):
    """(exit status, sentence) for a measured rate against MIN (millions)."""
    m = reads_per_s / 1e6
    if m < minimum_m:
        return 1, (f"machine check: {m:.1f} M independent 64-byte reads/s, below the "
                   f"minimum of {minimum_m:.10g} M: memory is running slow (another "
                   f"tenant, kdamond); ratios measured now would mislead")
    return 0, f"machine check: {m:.1f} M independent 64-byte reads/s (minimum {minimum_m:.10g} M)"


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        reads = independent_reads(f)
    if reads is None:
        print(f"machine check: no \"{ROW}\" line in {argv[1]}", file=sys.stderr)
        return 2
    status, sentence = verdict(reads, float(argv[2]))
    print(sentence, file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
