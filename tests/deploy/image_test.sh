#!/usr/bin/env bash
# The container image (deploy/image/), as production runs it: built by
# deploy/image/build.sh; a 2-shard table published by this build's
# roost-load into a MinIO on a loopback port; two roost-server containers
# (shards 0 and 1; read-only root, /tmp a tmpfs, the data directory a
# volume) pulling it; then, from the host, roost-get over the cluster and
# the Python client read every key back, gRPC health says SERVING, /metrics
# names the build, and `podman stop` drains each server to exit 0 within
# its stop timeout. Also: the image's size (at most 150 MB), labels, and
# that the server runs as its non-root uid.
# Skipped (exit 77) only where podman is not installed or cannot run.
# Usage: tests/deploy/image_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "image_test: $*" >&2; exit 1; }

if ! command -v podman >/dev/null || ! podman info >/dev/null 2>&1; then
  echo "image_test: SKIPPED: podman is missing or does not run (scripts/install-podman.sh)"
  exit 77
fi

tmp=$(mktemp -d)
containers=()
minio_pid=
cleanup() {
  for c in "${containers[@]}"; do podman rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
  # MinIO writes into $tmp until it has exited: wait for it before the rm
  # (an rm racing its shutdown once failed the test after "ok").
  if [ -n "$minio_pid" ]; then
    kill "$minio_pid" 2>/dev/null || true
    wait "$minio_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# Tagged for the next run's layer cache, used by ID: another build (of
# another checkout) may move the tag meanwhile.
start=$(date +%s)
if ! image=$("$src/deploy/image/build.sh" --tag localhost/roost:image-test \
             2>"$tmp/build.log" | tail -n 1) || [ -z "$image" ]; then
  tail -n 60 "$tmp/build.log" >&2
  fail "deploy/image/build.sh failed"
fi
build_seconds=$(($(date +%s) - start))

# Size, labels, user.
size=$(podman image inspect --format '{{.Size}}' "$image")
mb=$((size / 1000000))
[ "$mb" -le 150 ] || fail "the image is $mb MB, over 150 MB"
label() { podman image inspect --format "{{index .Labels \"org.opencontainers.image.$1\"}}" "$image"; }
version=$("$build/server/roost-server" --version | cut -d' ' -f2)
[ "$(label version)" = "$version" ] || fail "label version: $(label version), not $version"
revision=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo unknown)
[ "$(label revision)" = "$revision" ] || fail "label revision: $(label revision), not $revision"
user=$(podman image inspect --format '{{.Config.User}}' "$image")
[ "$user" = 10001:10001 ] || fail "the image's user is '$user', not 10001:10001"
out=$(podman run --rm --network none "$image" --version)
[ "$out" = "roost-server $version (revision $revision)" ] ||
  fail "roost-server --version in the image: $out"

# Pushable: deploy/README.md's `podman push` of a tag, here to an OCI
# archive (no registry is reachable here), which must hold the image.
podman tag "$image" "localhost/roost:push-test"
podman push --quiet "localhost/roost:push-test" "oci-archive:$tmp/roost-oci.tar" ||
  fail "podman push to an OCI archive failed"
oci_names=$(tar -tf "$tmp/roost-oci.tar")
grep -qx index.json <<<"$oci_names" ||
  fail "the pushed OCI archive has no index.json"
podman rmi --force localhost/roost:push-test >/dev/null

free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# MinIO on loopback, and its bucket.
minio=$("$src/scripts/install-minio.sh" | tail -n 1)
minio_port=$(free_port)
export AWS_ACCESS_KEY_ID=roostimagetest AWS_SECRET_ACCESS_KEY=roostimagetestsecret
export AWS_ENDPOINT_URL=http://127.0.0.1:$minio_port AWS_REGION=us-east-1
MINIO_ROOT_USER=$AWS_ACCESS_KEY_ID MINIO_ROOT_PASSWORD=$AWS_SECRET_ACCESS_KEY \
  MINIO_BROWSER=off MINIO_UPDATE=off HOME=$tmp \
  "$minio" server --quiet --address "127.0.0.1:$minio_port" \
  --console-address "127.0.0.1:$(free_port)" "$tmp/minio" >"$tmp/minio.log" 2>&1 &
minio_pid=$!
bucket_status=
for _ in $(seq 100); do
  bucket_status=$(curl -s -o /dev/null -w '%{http_code}' -X PUT \
    --aws-sigv4 aws:amz:us-east-1:s3 --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$AWS_ENDPOINT_URL/tables" || true)
  [ "$bucket_status" = 200 ] && break
  sleep 0.2
done
[ "$bucket_status" = 200 ] || { tail "$tmp/minio.log" >&2; fail "no MinIO bucket: HTTP $bucket_status"; }

# 3000 keys, hex-encoded both ways: roost-load's input, roost-get's expected
# output and check_cluster.py's expected file at once.
keys=3000
/usr/bin/python3 - "$tmp/input.tsv" "$keys" <<'EOF'
import hashlib, sys
with open(sys.argv[1], "w") as f:
    for i in range(int(sys.argv[2])):
        key = b"user:%06d" % i
        value = b"value of %d: " % i + hashlib.sha256(key).digest()[: i % 32]
        f.write(f"{key.hex()}\t{value.hex()}\n")
EOF
repository=s3://tables/prod
"$build/loader/roost-load" build --quiet -i "$tmp/input.tsv" --key-encoding hex \
  --value-encoding hex --shards 2 --repository "$repository" --table users ||
  fail "roost-load build --repository failed"

# The two servers, each with a data directory of its own (made for the
# image's uid), pulling their shard.
declare -a lookup metrics
stops=
layout='{"shards": ['
for shard in 0 1; do
  lookup[shard]=$(free_port)
  metrics[shard]=$(free_port)
  mkdir "$tmp/data$shard"
  chown 10001:10001 "$tmp/data$shard"
  name=roost-image-test-$$-$shard
  containers+=("$name")
  podman run -d --name "$name" --network host --read-only --tmpfs /tmp \
    --volume "$tmp/data$shard:/var/lib/roost" \
    --env AWS_ACCESS_KEY_ID --env AWS_SECRET_ACCESS_KEY --env AWS_ENDPOINT_URL \
    --env AWS_REGION "$image" \
    --repository "$repository" --shard "$shard" --repository-poll 0.5 \
    --listen "127.0.0.1:${lookup[shard]}" --metrics-listen "127.0.0.1:${metrics[shard]}" \
    --admin-listen "127.0.0.1:$(free_port)" >/dev/null ||
    fail "podman run of shard $shard failed"
  layout+="$([ "$shard" = 0 ] || echo ,)[\"127.0.0.1:${lookup[shard]}\"]"
done
layout+=']}'
echo "$layout" >"$tmp/cluster.json"
logs() { for c in "${containers[@]}"; do echo "== $c"; podman logs "$c" 2>&1 | tail -n 30; done; }

# gRPC health, straight from grpc.health.v1 (an empty HealthCheckRequest
# asks about the server; the answer 08 01 is status SERVING): every
# server SERVING within 60 s.
/usr/bin/python3 - "${lookup[@]}" <<'EOF' || { logs >&2; fail "health is not SERVING"; }
import sys, time
import grpc
for port in sys.argv[1:]:
    check = grpc.insecure_channel(f"127.0.0.1:{port}").unary_unary(
        "/grpc.health.v1.Health/Check")
    deadline = time.monotonic() + 60
    while True:
        try:
            answer = check(b"", timeout=2)
        except grpc.RpcError as e:
            answer = e.code()
        if answer == b"\x08\x01":
            break
        if time.monotonic() > deadline:
            sys.exit(f"127.0.0.1:{port}: health {answer!r}")
        time.sleep(0.2)
print("health SERVING:", " ".join(sys.argv[1:]))
EOF
"$build/client/roost-admin" wait --cluster "$tmp/cluster.json" --table users \
  --for-version v000001 --timeout 60 || { logs >&2; fail "roost-admin wait"; }

# roost-get over the cluster: every key, its value as published.
cut -f1 "$tmp/input.tsv" | xargs "$build/client/roost-get" --cluster "$tmp/cluster.json" \
  --key-encoding hex --value-encoding hex users >"$tmp/roost-get.out" ||
  fail "roost-get --cluster exited $?"
cmp -s "$tmp/roost-get.out" "$tmp/input.tsv" ||
  fail "roost-get answered $(wc -l <"$tmp/roost-get.out") lines, not the input's $keys"
# The Python client, synchronous and asyncio.
out=$(PYTHONPATH="$src/clients/python/src" /usr/bin/python3 \
  "$src/clients/python/tests/check_cluster.py" "$tmp/cluster.json" users \
  "$tmp/input.tsv" v000001 2>&1) || fail "the Python client: $out"
[ "$out" = "checked $keys keys" ] || fail "the Python client: $out"
# The tools inside the image run too.
# (Output taken whole before it is matched: grep -q stops reading at the
# first match, and under pipefail the writer's SIGPIPE would fail the test.)
out=$(podman exec "${containers[0]}" roost-get --addr "127.0.0.1:${lookup[0]}" --list)
[[ $out == "users	cuckoo	v000001	"* ]] || fail "roost-get --list in the container: $out"

# /metrics names the build.
curl -sf "http://127.0.0.1:${metrics[0]}/metrics" >"$tmp/metrics" || fail "no /metrics"
grep -q "^roost_build_info{.*revision=\"$revision\".*} 1" "$tmp/metrics" ||
  fail "/metrics: $(grep roost_build_info "$tmp/metrics" || echo no roost_build_info)"

# The container's PID 1 is roost-server itself (exec form: no shell in
# between to swallow SIGTERM), not root; the root file system cannot be
# written, even by root, and /tmp can.
for c in "${containers[@]}"; do
  pid=$(podman inspect --format '{{.State.Pid}}' "$c")
  comm=$(cat "/proc/$pid/comm")
  [ "$comm" = roost-server ] || fail "$c: the container's first process is $comm"
  uid=$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")
  [ "$uid" = 10001 ] || fail "$c runs as uid $uid"
  out=$(podman exec --user 0 "$c" touch /usr/x 2>&1) &&
    fail "$c: the root file system is writable"
  [[ $out == *"Read-only file system"* ]] || fail "$c: touch /usr/x as root: $out"
  out=$(podman exec "$c" sh -c 'echo x > /tmp/x && cat /tmp/x' 2>&1)
  [ "$out" = x ] || fail "$c: /tmp is not writable: $out"
done

# podman stop: SIGTERM, the drain (drain-period 4 s + shutdown-timeout 3 s
# in the image's server.toml), exit 0 before podman's 10 s run out.
for c in "${containers[@]}"; do
  start_ms=$(date +%s%3N)
  podman stop "$c" >/dev/null
  stop_ms=$(($(date +%s%3N) - start_ms))
  code=$(podman inspect --format '{{.State.ExitCode}}' "$c")
  [ "$code" = 0 ] || { logs >&2; fail "$c exited $code after podman stop (${stop_ms} ms)"; }
  [ "$stop_ms" -lt 10000 ] || fail "$c took ${stop_ms} ms to stop"
  out=$(podman logs "$c" 2>&1)
  [[ $out == *"draining (SIGTERM)"*"stopped"* ]] || { logs >&2; fail "$c did not drain"; }
  stops+=" ${stop_ms}ms"
done

id=${image#sha256:}
echo "image_test: ok (image ${id:0:12}, $mb MB, built in ${build_seconds} s;" \
     "$keys keys over 2 shards read back; stopped in$stops)"
