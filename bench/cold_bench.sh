#!/usr/bin/env bash
# Lookups in tables larger than the memory allowed (issue 35, item 5):
# roost's cuckoo and block tables and RocksDB's block-based table (its block
# cache inside the same limit), each about 4x a memory limit, the process
# that looks keys up held to that limit by a memory cgroup (cgroup v2
# memory.max, or v1 memory.limit_in_bytes), which charges the page cache
# its reads bring in to it too. Keys uniform and scrambled Zipfian (θ
# 0.99), Get and MultiGet(100), from 4 threads (bench/cold_bench.cc). roost's
# mapped tables run with MADV_RANDOM (one page read a fault), with it and
# each MultiGet's page requests first (MADV_WILLNEED, as roost-server asks
# for a table mostly not resident), and with the kernel's default
# read-around; the block table once more with its index and filter read
# through the mapping (--mapped-index) rather than from its copies in
# memory; RocksDB with its block cache at a quarter
# and at half of the limit. Prints one JSON line a run and the table of
# bench/cold_bench_report.py (roost against the better RocksDB run).
#
# Usage: bench/cold_bench.sh [--keys N] [--limit MIB] [--seconds S]
#            [--warmup S] [--threads T] [--out FILE] [--smoke] [--no-build]
#   --keys N     pairs of the suite's variable data set (default 4000000,
#                about 600 MB a table)
#   --limit MIB  the memory limit (default 128)
#   --seconds S  measured seconds a run (default 10), after --warmup S (5)
#   --threads T  lookup threads (default 4)
#   --out FILE   the JSON lines (default: WORK/cold.jsonl, printed)
#   --smoke      20,000 keys, a 64 MiB limit, short runs: checks it runs
#                (without root it runs unlimited, and says so)
#   --no-build   use $ROOST_BUILD_DIR (default build/release) as it is
# Needs root or a delegated cgroup (it makes one under its own).
# Example: bench/cold_bench.sh --out /tmp/cold.jsonl
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

keys=4000000 limit_mib=128 seconds=10 warmup=5 threads=4 out="" build=1 smoke=0
while [ $# -gt 0 ]; do
  case "$1" in
    --keys) keys=$2; shift 2 ;;
    --limit) limit_mib=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --smoke) keys=20000 limit_mib=64 seconds=0.3 warmup=0.2 smoke=1; shift ;;
    --no-build) build=0; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "cold_bench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
die() { echo "cold_bench.sh: $*" >&2; exit 1; }

bin_dir="${ROOST_BUILD_DIR:-$repo/build/release}"
[ "$build" = 0 ] || scripts/build.sh cold_bench >/dev/null
bench="$bin_dir/bench/cold_bench"
[ -x "$bench" ] || die "$bench is not built"

work=$(mktemp -d /tmp/roost-cold.XXXXXX)
out=${out:-$work/cold.jsonl}
: >"$out"
limit=$((limit_mib << 20))

# The memory cgroup: v2 where the unified hierarchy has the memory
# controller, else v1's memory hierarchy; made under this shell's own.
if [ -f /sys/fs/cgroup/cgroup.controllers ] &&
  grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
  parent=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
  limit_file=memory.max
else
  parent=/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)
  limit_file=memory.limit_in_bytes
fi
cgroup="$parent/roost-cold-$$"
cleanup() {
  [ -z "$cgroup" ] || rmdir "$cgroup" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
if ! mkdir "$cgroup" 2>/dev/null; then
  why="cannot make a memory cgroup under $parent (root or a delegated cgroup is needed)"
  [ "$smoke" = 1 ] || die "$why"
  echo "cold_bench.sh: $why: this smoke run goes without a limit" >&2
  cgroup=""
fi
[ -z "$cgroup" ] || echo "$limit" >"$cgroup/$limit_file" ||
  die "cannot set $cgroup/$limit_file"

echo "cold_bench.sh: building the tables of $keys pairs in $work..." >&2
"$bench" build --dir "$work/tables" --keys "$keys"
table_mib=$(($(stat -c %s "$work/tables/roost-cuckoo.sst") >> 20))
echo "cold_bench.sh: roost's cuckoo table is $table_mib MiB; the limit $limit_mib MiB" >&2

# measure ARGS...: one run of cold_bench inside the cgroup.
measure() {
  sh -c '[ -z "$1" ] || echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cgroup" \
    "$bench" run --dir "$work/tables" --keys "$keys" --threads "$threads" \
    --seconds "$seconds" --warmup "$warmup" "$@" | tee -a "$out"
}
for dist in uniform zipf; do
  for op in get multiget; do
    advices="random normal"
    [ "$op" = get ] || advices="requests random normal"
    for advice in $advices; do
      measure --system roost-cuckoo --dist "$dist" --op "$op" --advice "$advice"
      measure --system roost-block --dist "$dist" --op "$op" --advice "$advice"
    done
    # The block table as before its index and filter were copied to memory.
    measure --system roost-block --dist "$dist" --op "$op" --advice random --mapped-index
    for share in 4 2; do
      measure --system rocksdb --dist "$dist" --op "$op" \
        --block-cache $((limit / share))
    done
  done
done
python3 bench/cold_bench_report.py "$out" --limit-mib "$limit_mib" \
  --table-mib "$table_mib"
