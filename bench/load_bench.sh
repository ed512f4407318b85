#!/usr/bin/env bash
# roost-load's build speed and memory (issue 4): builds N uniformly random
# 8-byte keys with 8-byte values, from unsorted input, as fixed-width binary
# records and as hex TSV, into cuckoo and block tables; a block build under
# --memory-limit 256M; and, for reference, RocksDB's SstFileWriter writing
# the same pairs pre-sorted (only the writer timed). Each run is measured with
# /usr/bin/time -v (wall seconds, CPU, peak RSS), its output checked
# (`roost-load verify`, `inspect`'s key count, `get` of known keys and of an
# absent one), and the figures printed as a table with the issue's targets
# (bench/load_bench_report.py).
#
# Usage: bench/load_bench.sh [--keys N | --quick] [--dir DIR] [--seed S]
#                            [--no-build] [--keep]
#   --keys N    keys to build (default 10000000)
#   --quick     100000 keys: a smoke test
#   --dir DIR   where the input and the tables go (default
#               $ROOST_LOAD_BENCH_DIR or /tmp/roost-load-bench); emptied
#               first, so it must be new, empty or made by this script
#   --seed S    generator seed (default 20261122); same N and S, same data
#   --no-build  use the binaries already in $ROOST_BUILD_DIR (default
#               build/release) instead of running scripts/build.sh
#   --keep      keep DIR afterwards (by default the tables and input, about
#               1.3 GB at 10M keys, are removed at the end)
# Exits non-zero when a build fails or an output fails its checks (a missed
# target is reported, not an error).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
keys=10000000
dir="${ROOST_LOAD_BENCH_DIR:-/tmp/roost-load-bench}"
seed=20261122
build=1
keep=0

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() {
  echo "load_bench: $*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case "$1" in
    --keys)
      [ $# -ge 2 ] || die "--keys needs a number"
      keys="$2"
      shift 2
      ;;
    --keys=*)
      keys="${1#--keys=}"
      shift
      ;;
    --quick)
      keys=100000
      shift
      ;;
    --dir)
      [ $# -ge 2 ] || die "--dir needs a directory"
      dir="$2"
      shift 2
      ;;
    --dir=*)
      dir="${1#--dir=}"
      shift
      ;;
    --seed)
      [ $# -ge 2 ] || die "--seed needs a number"
      seed="$2"
      shift 2
      ;;
    --no-build)
      build=0
      shift
      ;;
    --keep)
      keep=1
      shift
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done
[[ "$keys" =~ ^[1-9][0-9]*$ ]] || die "--keys must be a positive integer, not '$keys'"
[[ "$seed" =~ ^[0-9]+$ ]] || die "--seed must be a non-negative integer, not '$seed'"
[ -n "$dir" ] && [ "$dir" != "/" ] || die "refusing --dir '$dir'"

if [ ! -x /usr/bin/time ]; then
  cat >&2 <<'EOF'
load_bench: needs GNU time at /usr/bin/time (for peak RSS via `time -v`).
Install it with:   sudo apt-get install time
EOF
  exit 1
fi

# --- binaries ---------------------------------------------------------------
bin_dir="${ROOST_BUILD_DIR:-$repo/build/release}"
if [ "$build" = 1 ]; then
  echo "building roost-load, gen_records and sst_writer_bench (release)..." >&2
  bin_dir="$repo/$("$repo/scripts/build.sh" roost-load gen_records sst_writer_bench | tail -n 1)"
fi
roost_load="$bin_dir/loader/roost-load"
gen="$bin_dir/bench/gen_records"
sst_bench="$bin_dir/bench/sst_writer_bench"
for b in "$roost_load" "$gen" "$sst_bench"; do
  [ -x "$b" ] || die "missing $b (build it, or drop --no-build)"
done

# --- data -------------------------------------------------------------------
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)
marker=.roost-load-bench
if [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ] && [ ! -e "$dir/$marker" ]; then
  die "$dir is not empty and was not made by this script; give another --dir"
fi
rm -rf "$dir"
mkdir -p "$dir/spill"
touch "$dir/$marker"
if [ "$keep" = 0 ]; then
  trap 'rm -rf "$dir"' EXIT
fi
echo "generating $keys pairs (seed $seed) in $dir..." >&2
gen_start=$EPOCHREALTIME
"$gen" "$keys" "$seed" "$dir"
gen_seconds=$(awk -v a="$gen_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
echo "  $(du -h "$dir/records.bin" | cut -f1) binary, $(du -h "$dir/records.tsv" | cut -f1) TSV in ${gen_seconds} s" >&2

# --- checks -----------------------------------------------------------------
# `get` takes raw bytes from argv and prints KEY<TAB>VALUE raw, so the probes
# are pairs without zero bytes (see gen_records.cc); outputs compare in hex.
hex_to_arg() { printf '%b' "$(echo "$1" | sed 's/../\\x&/g')"; }
to_hex() { od -An -v -tx1 | tr -d ' \n'; }

# Checks the table FILE: verify, inspect's key count, the probes. Prints
# "ok" or what failed.
check_table() {
  local file="$1" problems=() n kind khex vhex out rc
  if ! "$roost_load" verify "$file" >/dev/null 2>"$dir/check.err"; then
    problems+=("verify: $(head -c 200 "$dir/check.err")")
  fi
  n=$("$roost_load" inspect "$file" 2>/dev/null | awk '$1 == "keys" { print $2 }')
  [ "$n" = "$keys" ] || problems+=("inspect says ${n:-?} keys")
  while read -r kind khex vhex; do
    rc=0
    out=$("$roost_load" get "$file" "$(hex_to_arg "$khex")" 2>/dev/null | to_hex) || rc=$?
    if [ "$kind" = hit ]; then
      [ "$rc" = 0 ] && [ "$out" = "${khex}09${vhex}0a" ] || problems+=("get $khex")
    else
      [ "$rc" = 1 ] && [ -z "$out" ] || problems+=("get of absent $khex")
    fi
  done <"$dir/probes.txt"
  if [ ${#problems[@]} -eq 0 ]; then echo ok; else
    local IFS=';'
    echo "FAILED: ${problems[*]}"
  fi
}

# --- runs -------------------------------------------------------------------
# run NAME INPUT_FILE OUTPUT_FILE COMMAND...: runs COMMAND under
# /usr/bin/time -v (into $dir/NAME.time), checks its output, and appends
# "NAME START END OUTPUT_BYTES CHECK" to $dir/runs for
# bench/load_bench_report.py.
: >"$dir/runs"
run() {
  local name="$1" input="$2" output="$3"
  shift 3
  rm -f "$output"
  cat "$input" >/dev/null # the input comes from the page cache in every run
  sync
  echo "running $name..." >&2
  local start=$EPOCHREALTIME rc=0
  /usr/bin/time -v -o "$dir/$name.time" "$@" >"$dir/$name.out" 2>"$dir/$name.err" || rc=$?
  local end=$EPOCHREALTIME
  if [ "$rc" != 0 ]; then
    cat "$dir/$name.err" >&2
    die "$name failed (exit $rc)"
  fi
  local check=ok # sst_writer_bench checks its own file
  [ "$name" = sst-writer ] || check=$(check_table "$output")
  echo "$name $start $end $(stat -c %s "$output") $check" >>"$dir/runs"
}

fixed=(--input-format fixed --key-size 8 --value-size 8)
hex=(--key-encoding hex --value-encoding hex)
bin="$dir/records.bin"
tsv="$dir/records.tsv"

run cuckoo-bin "$bin" "$dir/cuckoo-bin.sst" \
  "$roost_load" build -q -i "$bin" "${fixed[@]}" --format cuckoo -o "$dir/cuckoo-bin.sst"
run cuckoo-tsv "$tsv" "$dir/cuckoo-tsv.sst" \
  "$roost_load" build -q -i "$tsv" "${hex[@]}" --format cuckoo -o "$dir/cuckoo-tsv.sst"
run block-bin "$bin" "$dir/block-bin.sst" \
  "$roost_load" build -q -i "$bin" "${fixed[@]}" --format block -o "$dir/block-bin.sst" \
  --temp-dir "$dir/spill"
run block-tsv "$tsv" "$dir/block-tsv.sst" \
  "$roost_load" build -q -i "$tsv" "${hex[@]}" --format block -o "$dir/block-tsv.sst" \
  --temp-dir "$dir/spill"
run block-bin-256M "$bin" "$dir/block-bin-256M.sst" \
  "$roost_load" build -q -i "$bin" "${fixed[@]}" --format block -o "$dir/block-bin-256M.sst" \
  --memory-limit 256M --temp-dir "$dir/spill"
run sst-writer "$bin" "$dir/rocksdb.sst" \
  "$sst_bench" "$bin" "$dir/rocksdb.sst"

# --- report -----------------------------------------------------------------
# The table, the cross-checks (the same pairs give the same table whatever
# the input form or the sort's memory) and the targets; exits 1 when an
# output failed its checks.
"$repo/bench/load_bench_report.py" "$dir" --keys "$keys" --load-at-start "$load_at_start"
