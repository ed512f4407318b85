#!/usr/bin/env bash
# Builds what a team installs roost's clients and server from, into OUT:
#   roost_client-VERSION-py3-none-any.whl  the Python client (python3 -m build)
#   roost-client-VERSION.jar         the Java client (mvn package)
#   go-proxy/roost.dev/@v/...        the Go module as a module proxy's files
#                                    (GOPROXY=file://OUT/go-proxy go get roost.dev@vVERSION)
#   roost-VERSION.tgz                the Helm chart (helm package; push it to an
#                                    OCI registry with helm push ... oci://HOST/PATH)
#   roost_VERSION_amd64.deb          the server, tools and unit (cpack -G DEB
#                                    over BUILD_DIR, which must be built)
# The container image is deploy/image/build.sh's (tagged, then podman push;
# deploy/README.md). VERSION is the CMake project's. Offline once
# scripts/install-deps.sh has run (Maven's ~/.m2 aside: its first run
# downloads the plugins).
# Usage: scripts/build-artefacts.sh BUILD_DIR OUT
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR OUT" >&2
  exit 64
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "$1" && pwd)"
mkdir -p "$2"
out="$(cd "$2" && pwd)"
version=$(sed -nE 's/^project\(roost VERSION ([0-9.]+).*/\1/p' "$root/CMakeLists.txt")
step() { echo "build-artefacts: $*" >&2; }

step "wheel"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A copy, so that setuptools' build/ and egg-info stay out of the checkout.
cp -r "$root/clients/python" "$work/python"
/usr/bin/python3 -m build --no-isolation --wheel --outdir "$out" "$work/python" \
  >"$work/wheel.log" 2>&1 || { cat "$work/wheel.log" >&2; exit 1; }

step "jar"
mvn -q -B --no-transfer-progress -f "$root/clients/java/pom.xml" \
  "-Droost.java.build=$work/java" -Dstyle.color=never -DskipTests package
cp "$work/java/roost-client-$version.jar" "$out/"

step "Go module"
"$root/clients/go/package.sh" "v$version" "$out/go-proxy" >/dev/null

step "Helm chart"
eval "$("$root/scripts/install-k8s-tools.sh" --check | grep '^ROOST_HELM=')"
"$ROOST_HELM" package "$root/deploy/helm/roost" --version "$version" \
  --destination "$out" >/dev/null

step ".deb"
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/deb" >"$work/deb.log" 2>&1 ||
  { cat "$work/deb.log" >&2; exit 1; }
cp "$work"/deb/*.deb "$out/"

ls -1 "$out"
