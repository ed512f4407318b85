#!/usr/bin/env bash
# scripts/build-artefacts.sh end to end: each artefact is built and then used
# as a team would: the wheel installed into a fresh venv and imported, the
# jar's classes read by javap, the Go module proxy's files holding the module,
# the Helm chart read back by helm, the .deb holding the programs and its
# copyright file. (The container image's push is image_test.sh's.)
# Usage: artefacts_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "artefacts_test: FAILED: $*" >&2; exit 1; }

"$src/scripts/build-artefacts.sh" "$build" "$tmp/out" >"$tmp/list" 2>"$tmp/log" ||
  { cat "$tmp/log" >&2; fail "scripts/build-artefacts.sh failed"; }
version=$(sed -nE 's/^project\(roost VERSION ([0-9.]+).*/\1/p' "$src/CMakeLists.txt")
out=$tmp/out

wheel=$out/roost_client-$version-py3-none-any.whl
[ -f "$wheel" ] || fail "no wheel: $(cat "$tmp/list")"
/usr/bin/python3 -m venv --system-site-packages "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --no-index --no-deps "$wheel" ||
  fail "the wheel does not install"
shard=$(cd "$tmp" && "$tmp/venv/bin/python" -c \
  'import roost; print(roost.partition_of(b"user1", 4), roost.__version__)')
[ "$shard" = "3 $version" ] || fail "the installed wheel says '$shard', not '3 $version'"

jar=$out/roost-client-$version.jar
[ -f "$jar" ] || fail "no jar"
javap -cp "$jar" dev.roost.RoostClient >/dev/null || fail "the jar lacks dev.roost.RoostClient"
javap -cp "$jar" dev.roost.v1.MultiGetRequest >/dev/null ||
  fail "the jar lacks the generated dev.roost.v1 classes"

proxy=$out/go-proxy/roost.dev/@v
grep -qx "v$version" "$proxy/list" || fail "the Go module proxy lists no v$version"
# (Listings are read whole before grep: `cmd | grep -q` under pipefail fails
# when grep stops reading first and cmd dies of SIGPIPE.)
zip_names=$(unzip -Z1 "$proxy/v$version.zip")
grep -qx "roost.dev@v$version/roost/client.go" <<<"$zip_names" ||
  fail "the Go module's zip lacks roost/client.go"

chart=$out/roost-$version.tgz
eval "$("$src/scripts/install-k8s-tools.sh" --check | grep '^ROOST_HELM=')"
chart_yaml=$("$ROOST_HELM" show chart "$chart")
grep -qx "version: $version" <<<"$chart_yaml" ||
  fail "helm show chart: no version $version"
"$ROOST_HELM" template roost "$chart" --set repository.uri=s3://tables/prod >/dev/null ||
  fail "helm template of the packaged chart failed"

deb=$out/roost_${version}_amd64.deb
[ -f "$deb" ] || fail "no .deb"
contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/roost-server ./usr/bin/roost-load ./usr/share/doc/roost/copyright; do
  grep -q " $f\$" <<<"$contents" || fail "the .deb lacks $f"
done
echo "artefacts_test: ok ($(ls "$out" | tr '\n' ' '))"
