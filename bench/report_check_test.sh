#!/usr/bin/env bash
# Shows that `report.py --check` can fail: given the results of a passing
# smoke run, it must accept them as they are, and reject each of these
# damaged copies: a lookup row with an error, a row checked short, a system
# missing, a network row with a wrong value, roost's open-loop rows
# missing, an open-loop row with a failed request, a build row missing.
#
# Usage: bench/report_check_test.sh RESULTS_DIR
set -euo pipefail
report="$(dirname "$0")/report.py"
src="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$report" "$src" --check >/dev/null || {
  echo "FAIL: the smoke run's own results do not pass --check" >&2
  exit 1
}
# damaged NAME FILE SED-SCRIPT: a copy of the results with FILE edited must
# fail --check.
failed=0
damaged() {
  local name="$1" file="$2" script="$3"
  rm -rf "$tmp/r" && cp -r "$src" "$tmp/r"
  sed -i "$script" "$tmp/r/$file"
  if cmp -s "$src/$file" "$tmp/r/$file"; then
    echo "FAIL: $name: the edit changed nothing" >&2
    failed=1
  elif "$report" "$tmp/r" --check >/dev/null 2>&1; then
    echo "FAIL: $name: --check accepted it" >&2
    failed=1
  else
    echo "ok: $name rejected"
  fi
}
damaged "a lookup error" lookup.jsonl '0,/"errors":0/ s//"errors":1/'
damaged "a short check" lookup.jsonl '0,/"checked":[0-9]*/ s//"checked":1/'
damaged "tinycdb missing" lookup.jsonl '/"system":"tinycdb"/d'
damaged "a wrong Redis value" network.jsonl '/"system":"Redis"/ s/"bad_values":0/"bad_values":3/'
damaged "roost's open-loop rows missing" openloop.jsonl '/"system":"roost","table_keys"/d'
damaged "a failed open-loop request" openloop.jsonl '0,/"rpc_errors":0/ s//"rpc_errors":2/'
damaged "a build row missing" build.jsonl '/RocksDB SstFileWriter/d'
exit "$failed"
