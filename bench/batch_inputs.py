#!/usr/bin/env python3
"""Writes the same N rows as CSV, JSON Lines and TSV, for timing
roost-load build on each input format (issue 32).

Usage: bench/batch_inputs.py [--rows N] [--seed S] OUT_DIR

Each row has 8 columns: id (the key: "u" and 9 digits), four floats, an
integer, a string, and a list of floats. The files, in OUT_DIR:

  rows.csv    a header, then the rows; the list is a quoted field holding a
              JSON array ("[1, 2, 3]"), the string quoted when it holds a
              comma. roost-load build --input-format csv --key-column id
  rows.jsonl  one object a line, the list a JSON array.
              roost-load build --input-format jsonl --key-field id
  rows.tsv    id<TAB>the JSON object roost-load makes of the CSV row (every
              column but id, each a JSON string, compact), so that all three
              build tables of the same keys, and the CSV and TSV ones of the
              same values. roost-load build

Stdlib only, deterministic for a seed. 1M rows are 104 MB of CSV, 171 MB
of JSON Lines and 161 MB of TSV (about 25 s of CPU to write).

Then, e.g.:
  /usr/bin/time -v build/release/loader/roost-load build -q \
      -i OUT/rows.csv --input-format csv -o /tmp/x.sst
"""

import argparse
import csv
import json
import os
import random
import sys

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta",
         "theta", "iota", "kappa", "lambda", "mu"]


def rows(n, seed):
    rng = random.Random(seed)
    for i in range(n):
        floats = [round(rng.uniform(-1000, 1000), 6) for _ in range(4)]
        words = rng.sample(WORDS, rng.randint(1, 4))
        name = ", ".join(words) if rng.random() < 0.3 else " ".join(words)
        items = [round(rng.random(), 4) for _ in range(rng.randint(0, 6))]
        yield f"u{i:09d}", floats, rng.randint(0, 10**6), name, items


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=32)
    parser.add_argument("out_dir")
    args = parser.parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    header = ["id", "f1", "f2", "f3", "f4", "count", "name", "items"]
    path = lambda name: os.path.join(args.out_dir, name)
    with open(path("rows.csv"), "w", newline="") as c, \
            open(path("rows.jsonl"), "w") as j, \
            open(path("rows.tsv"), "w") as t:
        writer = csv.writer(c, lineterminator="\n")
        writer.writerow(header)
        for key, floats, count, name, items in rows(args.rows, args.seed):
            items_text = json.dumps(items)
            fields = [repr(f) for f in floats] + [str(count), name, items_text]
            writer.writerow([key] + fields)
            j.write(json.dumps({"id": key, "f1": floats[0], "f2": floats[1],
                                "f3": floats[2], "f4": floats[3],
                                "count": count, "name": name,
                                "items": items}) + "\n")
            value = json.dumps(dict(zip(header[1:], fields)),
                               separators=(",", ":"), ensure_ascii=False)
            t.write(f"{key}\t{value}\n")
    for name in ("rows.csv", "rows.jsonl", "rows.tsv"):
        print(f"{path(name)}: {os.path.getsize(path(name))} bytes",
              file=sys.stderr)


if __name__ == "__main__":
    main()
