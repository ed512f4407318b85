#!/usr/bin/env bash
# Installs the Debian packages roost builds, tests and benchmarks with, the
# MinIO server the object-storage tests run against
# (scripts/install-minio.sh), podman for the container image and its test
# (scripts/install-podman.sh), and the tools the Helm chart is checked with
# (scripts/install-k8s-tools.sh), each built once and cached.
# Idempotent: does nothing (and needs no network) when all are installed.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config clang-format
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  libabsl-dev libsnappy-dev libzstd-dev prometheus-cpp-dev
  libxxhash-dev libcli11-dev libfmt-dev nlohmann-json3-dev libtomlplusplus-dev
  libgtest-dev libgmock-dev libbenchmark-dev librocksdb-dev time zlib1g-dev
  libcdb-dev redis-server libhiredis-dev gnuplot-nox python3
  libssl-dev openssl curl libcurl4-openssl-dev libpugixml-dev
  clang libclang-rt-14-dev
  # The revision in --version and roost_build_info (git); the Debian package
  # and its test (cpack's dpkg-shlibdeps in dpkg-dev, file); the systemd
  # unit's check (systemd-analyze, in systemd).
  git dpkg-dev file systemd
  # The compiler cache scripts/build.sh uses where installed; the container
  # image's compile (deploy/image/build.sh) reads the same cache, so it
  # costs seconds after a host build instead of minutes.
  ccache
  # Prometheus and promtool: the rules' unit tests and the live test of
  # deploy/prometheus and deploy/grafana (tests/prometheus_*).
  prometheus
  # The Python client (clients/python): its dependencies, an offline
  # `pip install` into a venv, its tests and its type check.
  python3-grpcio python3-protobuf python3-xxhash python3-pytest
  python3-venv python3-pip python3-setuptools python3-wheel mypy
  # The Helm chart's test (tests/helm_checks.py reads what helm renders).
  python3-yaml
)

"$(dirname "$0")/apt-install.sh" "${packages[@]}"

# MinIO for tests/object_store_*: a no-op once built (its path on stdout).
"$(dirname "$0")/install-minio.sh" >/dev/null
# podman, runc and mmdebstrap, and podman's settings, for deploy/image/.
"$(dirname "$0")/install-podman.sh"
# helm, kubeconform and Kubernetes' schemas for tests/helm_test.sh: a no-op
# once there (their paths on stdout).
"$(dirname "$0")/install-k8s-tools.sh" >/dev/null
