#!/usr/bin/env bash
# scripts/cluster-demo.sh as a user runs it, on this build's programs and a
# small table: MinIO, the bucket, 3 shards x 2 replicas, roost-admin wait,
# roost-get --cluster reading every key asked from the right version
# (before and after a replica is killed, and after a second version), and
# nothing left running or listening when it exits, by itself or on Ctrl-C
# (SIGINT to its process group, as a terminal sends it).
# Usage: tests/deploy/cluster_demo_test.sh BUILD_DIR   (MinIO: $ROOST_MINIO)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
fail() { echo "cluster_demo_test: $*" >&2; exit 1; }

# Nothing listens on any address of the layout, nor on MinIO's endpoint.
all_stopped() {  # DIR OUTPUT
  local a
  for a in $(grep -o '127\.0\.0\.1:[0-9]*' "$1/cluster.json") \
           $(sed -n 's|^   http://\(127\.0\.0\.1:[0-9]*\) .*|\1|p' "$2"); do
    if (exec 3<>"/dev/tcp/${a%:*}/${a#*:}") 2>/dev/null; then
      fail "still listening on $a after the script exited"
    fi
  done
}

# The whole run, ending by itself.
out=$tmp/run.out
"$root/scripts/cluster-demo.sh" --build-dir "$build" --dir "$tmp/run" --keys 3000 \
  >"$out" 2>&1 || { cat "$out" >&2; fail "exited $?"; }
for v in 1 2; do
  grep -qx "users: v00000$v served by all 6 replicas of 3 shards" "$out" ||
    { cat "$out" >&2; fail "roost-admin wait did not see v00000$v everywhere"; }
done
# Version 1 read twice (the second time with a replica of shard 0
# killed), version 2 once: every key, from the version that answered.
for i in 0 1 2 3 4 5; do
  for v in 1 2; do
    want=$((v == 1 ? 2 : 1))
    got=$(grep -cx "user:00000$i	{\"id\":$i,\"version\":$v}" "$out" || true)
    [ "$got" -eq "$want" ] || { cat "$out" >&2; fail "user:00000$i of version $v read $got times, not $want"; }
  done
done
[ "$(grep -cx 'roost-get: "user:none": not found' "$out")" -eq 3 ] || { cat "$out" >&2; fail "user:none"; }
[ "$(grep -c '^roost-get: version v000001$' "$out")" -eq 2 ] &&
  [ "$(grep -c '^roost-get: version v000002$' "$out")" -eq 1 ] ||
  { cat "$out" >&2; fail "the versions that answered"; }
all_stopped "$tmp/run" "$out"

# --hold, stopped by Ctrl-C: the script and its servers get SIGINT.
out=$tmp/hold.out
set -m  # the script in a process group of its own, as a terminal's job
"$root/scripts/cluster-demo.sh" --build-dir "$build" --dir "$tmp/hold" --keys 100 --hold \
  >"$out" 2>&1 &
pid=$!
set +m
for _ in $(seq 600); do
  grep -q '^== The cluster runs until Ctrl-C' "$out" && break
  kill -0 "$pid" 2>/dev/null || { cat "$out" >&2; fail "--hold exited by itself"; }
  sleep 0.1
done
grep -q '^== The cluster runs until Ctrl-C' "$out" || { cat "$out" >&2; fail "--hold never got ready"; }
kill -INT -- "-$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 130 ] || { cat "$out" >&2; fail "on Ctrl-C it exited $rc, not 130"; }
all_stopped "$tmp/hold" "$out"
echo "cluster_demo_test: 2 passed, 0 failed"
