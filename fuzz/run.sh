#!/usr/bin/env bash
# Runs roost's libFuzzer targets. Usage:
#   fuzz/run.sh [--parallel N] SECONDS [TARGET...]
# Builds them (scripts/build.sh --fuzz, clang with ASan and UBSan), then for
# each TARGET (default: all eight):
#   1. replays every input in fuzz/regressions/TARGET/ (crashes found before,
#      each also a unit test): any failure fails the run;
#   2. fuzzes for SECONDS, starting from the committed seeds in
#      fuzz/corpus/TARGET/ and the corpus earlier runs grew in
#      build/fuzz/corpus/TARGET/ (new inputs go there, so that a long
#      campaign can be run in pieces);
# and prints a table of executions, CPU time, coverage and findings, also
# appended to build/fuzz/campaign.tsv (so that a campaign run in pieces can
# be added up). A crash, a leak, a timeout or an out-of-memory leaves its
# input in build/fuzz/artifacts/TARGET/ and makes the exit status 1.
# --parallel N runs N targets at once (default 1); each is one process.
# Example: fuzz/run.sh 30          # what .ci/run does
#          fuzz/run.sh --parallel 2 3600 request_fuzz differential_fuzz
set -euo pipefail
cd "$(dirname "$0")/.."

all=(cuckoo_table_fuzz block_table_fuzz manifest_fuzz record_reader_fuzz
     column_stream_fuzz request_fuzz differential_fuzz row_fuzz resp_fuzz)
parallel=1
if [ "${1:-}" = "--parallel" ]; then
  parallel=${2:?--parallel needs a number}
  shift 2
fi
if ! [[ "${1:-}" =~ ^[0-9]+$ ]]; then
  sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 64
fi
seconds=$1
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
for t in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $t "* ]] || { echo "no fuzz target named $t" >&2; exit 64; }
done

scripts/install-deps.sh
scripts/build.sh --fuzz >/dev/null
build=build/fuzz
logs=$build/logs
mkdir -p "$logs"
started=$logs/.started
touch "$started"

# Runs one target; its log is $logs/TARGET.log.
run_one() {
  local t=$1 bin=$build/fuzz/$1 log=$logs/$1.log
  local work=$build/corpus/$t artifacts=$build/artifacts/$t
  mkdir -p "$work" "$artifacts"
  : >"$log"
  rm -f "$logs/$t.time"
  local regressions=(fuzz/regressions/"$t"/*)
  if [ -e "${regressions[0]}" ]; then
    # With files as arguments libFuzzer runs each once; an input that once
    # timed out must fail as fast as it did then.
    if ! "$bin" -timeout=25 -artifact_prefix="$artifacts/" "${regressions[@]}" \
        >>"$log" 2>&1; then
      echo "regression input failed" >>"$log"
      return 1
    fi
  fi
  # -rss_limit_mb: the fixtures and gRPC's threads need room, but a leak or a
  # runaway allocation must still be caught. -timeout: one input, seconds.
  # -max_total_time is wall time; the CPU time it took goes to TARGET.time.
  /usr/bin/time -o "$logs/$t.time" -f '%U %S' \
    "$bin" -max_total_time="$seconds" -print_final_stats=1 -timeout=25 \
    -rss_limit_mb=3072 -max_len=8192 -artifact_prefix="$artifacts/" \
    "$work" "fuzz/corpus/$t" >>"$log" 2>&1
}

status=0
pids=()
names=()
# Waits for whichever running target ends first, so that its slot goes to
# the next target at once.
wait_one() {
  local ended rc=0 i
  wait -n -p ended "${pids[@]}" || rc=$?
  for i in "${!pids[@]}"; do
    [ "${pids[$i]}" = "$ended" ] || continue
    if [ $rc -ne 0 ]; then
      echo "FAILED: ${names[$i]} (log: $logs/${names[$i]}.log)" >&2
      status=1
    fi
    unset 'pids[i]' 'names[i]'
    pids=("${pids[@]}")
    names=("${names[@]}")
    return
  done
}
for t in "${targets[@]}"; do
  [ ${#pids[@]} -lt "$parallel" ] || wait_one
  echo "fuzzing $t for ${seconds}s" >&2
  run_one "$t" &
  pids+=($!)
  names+=("$t")
done
while [ ${#pids[@]} -gt 0 ]; do wait_one; done

# The summary: libFuzzer's final stats and its last status line.
ledger=$build/campaign.tsv
[ -s "$ledger" ] ||
  printf 'date\ttarget\tseconds\tcpu_seconds\texecutions\tcov\tft\tcorpus\tfindings\n' >"$ledger"
printf '%-20s %12s %10s %8s %8s %8s %8s  %s\n' target executions exec/s cpu-s cov ft corpus 'new findings'
for t in "${targets[@]}"; do
  log=$logs/$t.log
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  found=$(find "$build/artifacts/$t" -type f -newer "$started" | wc -l)
  cpu=$(awk '/^[0-9.]+ [0-9.]+$/ { printf "%.0f", $1 + $2 }' "$logs/$t.time" 2>/dev/null || true)
  printf '%-20s %12s %10s %8s %8s %8s %8s  %s\n' "$t" "${execs:-?}" "${rate:-?}" \
    "${cpu:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$found"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" \
    "$seconds" "${cpu:-?}" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" \
    "$found" >>"$ledger"
done
if [ $status -ne 0 ]; then
  echo "inputs that failed are in $build/artifacts/; reproduce one with" \
       "$build/fuzz/TARGET FILE" >&2
fi
exit $status
