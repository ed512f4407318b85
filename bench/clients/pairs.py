#!/usr/bin/env python3
"""The pairs of bench/clients_bench.sh (bench/text_pairs.h defines them):
key i is i in decimal, zero-padded to 8 + i % 9 digits (8 to 16 bytes);
its value is the key and ':', repeated, cut at 100 bytes.

As a module: key(i) and value(key), for the Python load generators. As a
program, writes the first N pairs for the loaders:

  pairs.py N DIR    DIR/pairs.tsv (key<TAB>value lines, for roost-load build)
                    DIR/pairs.resp (SET commands in the Redis protocol, for
                    redis-cli --pipe)
  pairs.py --wrong N
                    on stdout, SETs of the first N keys to the value "wrong"
                    (bench/clients_bench.sh --smoke: the checks can fail)
"""

import os
import sys

VALUE_SIZE = 100
MAX_PAIRS = 100_000_000  # keys are distinct below this


def key(i: int) -> bytes:
    return str(i).zfill(8 + i % 9).encode()


def value(k: bytes) -> bytes:
    unit = k + b":"
    return (unit * (VALUE_SIZE // len(unit) + 1))[:VALUE_SIZE]


def resp_set(k: bytes, v: bytes) -> bytes:
    return b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v)


def write(n: int, directory: str) -> None:
    with open(os.path.join(directory, "pairs.tsv"), "wb") as tsv, open(
        os.path.join(directory, "pairs.resp"), "wb"
    ) as resp:
        tsv_lines, resp_lines = [], []
        for i in range(n):
            k = key(i)
            v = value(k)
            tsv_lines.append(b"%s\t%s\n" % (k, v))
            resp_lines.append(resp_set(k, v))
            if len(tsv_lines) == 65536:
                tsv.write(b"".join(tsv_lines))
                resp.write(b"".join(resp_lines))
                tsv_lines, resp_lines = [], []
        tsv.write(b"".join(tsv_lines))
        resp.write(b"".join(resp_lines))


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[1] == "--wrong" and argv[2].isdigit():
        sys.stdout.buffer.write(b"".join(resp_set(key(i), b"wrong") for i in range(int(argv[2]))))
        return 0
    if len(argv) != 3 or not argv[1].isdigit() or not 0 < int(argv[1]) <= MAX_PAIRS:
        print(f"usage: pairs.py N DIR (1 <= N <= {MAX_PAIRS}), or pairs.py --wrong N",
              file=sys.stderr)
        return 2
    write(int(argv[1]), argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
