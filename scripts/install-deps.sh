#!/usr/bin/env bash
# Installs the Debian packages roost builds, tests and benchmarks with.
# Idempotent: does nothing (and needs no network) when all are installed.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config clang-format
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  libabsl-dev libsnappy-dev libzstd-dev prometheus-cpp-dev
  libxxhash-dev libcli11-dev libfmt-dev nlohmann-json3-dev libtomlplusplus-dev
  libgtest-dev libgmock-dev libbenchmark-dev librocksdb-dev time zlib1g-dev
  libcdb-dev redis-server libhiredis-dev gnuplot-nox python3
  libssl-dev openssl curl
  clang libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "installing: ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
  "${missing[@]}" >/dev/null
