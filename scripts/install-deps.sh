#!/usr/bin/env bash
# Installs what roost needs, in two sets:
#
#   --build   the Debian packages that build the programs (roost-load,
#             roost-server, roost-get, roost-admin) with the tests and
#             benchmarks off (scripts/build.sh --no-tests): what
#             scripts/demo.sh needs, a few minutes on a fresh machine
#   (none)    everything: the build set, and what the tests, benchmarks
#             and deploy checks use (googletest, RocksDB, promtool,
#             the Python client's packages, ...), the MinIO server the
#             object-storage tests run against (scripts/install-minio.sh),
#             podman for the container image and its test
#             (scripts/install-podman.sh), the batch path's PyPI wheels
#             (scripts/install-python-wheels.sh), and the tools the Helm chart is
#             checked with (scripts/install-k8s-tools.sh), each built once
#             and cached: scripts/test.sh, .ci/run, bench/run.sh
#
# Idempotent: does nothing (and needs no network) when all are installed.
# Usage: scripts/install-deps.sh [--build]
set -euo pipefail

# The build set: a compiler and CMake's tools, and every library the
# programs link (CMakeLists.txt's find_package calls outside tests/,
# bench/ and fuzz/).
build=(
  build-essential cmake ninja-build pkg-config
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  libabsl-dev libsnappy-dev libzstd-dev prometheus-cpp-dev
  libxxhash-dev libcli11-dev libfmt-dev nlohmann-json3-dev libtomlplusplus-dev
  libssl-dev libcurl4-openssl-dev libpugixml-dev zlib1g-dev
  libsimdjson-dev
  # The revision in --version and roost_build_info.
  git
)

# The rest: what the tests, benchmarks, fuzzers and deploy checks use.
rest=(
  clang-format
  libgtest-dev libgmock-dev libbenchmark-dev librocksdb-dev time
  libcdb-dev redis-server libhiredis-dev gnuplot-nox python3
  openssl curl
  clang libclang-rt-14-dev
  # The Debian package and its test (cpack's dpkg-shlibdeps in dpkg-dev,
  # file); the systemd unit's check (systemd-analyze, in systemd).
  dpkg-dev file systemd
  # The compiler cache scripts/build.sh uses where installed; the container
  # image's compile (deploy/image/build.sh) reads the same cache, so it
  # costs seconds after a host build instead of minutes.
  ccache
  # Prometheus and promtool: the rules' unit tests and the live test of
  # deploy/prometheus and deploy/grafana (tests/deploy/prometheus_*).
  prometheus
  # The Python client (clients/python): its dependencies, an offline
  # `pip install` into a venv, its tests and its type check.
  python3-grpcio python3-protobuf python3-xxhash python3-pytest
  # roost.ClientMetrics (the Python client's [metrics] extra) in its tests.
  python3-prometheus-client
  # The wheel of scripts/build-artefacts.sh (python3 -m build).
  python3-build
  python3-venv python3-pip python3-setuptools python3-wheel mypy
  # The Helm chart's test (tests/deploy/helm_checks.py reads what helm renders).
  python3-yaml
  # PySpark's JVM for roost.spark's test (clients/python/tests/test_spark.py),
  # and the Java client's JDK and Maven (clients/java).
  openjdk-17-jre-headless openjdk-17-jdk-headless maven
)

case "${1:-}" in
  --build)
    exec "$(dirname "$0")/apt-install.sh" "${build[@]}" ;;
  "") ;;
  *) echo "usage: $0 [--build]" >&2; exit 64 ;;
esac

"$(dirname "$0")/apt-install.sh" "${build[@]}" "${rest[@]}"

# MinIO for tests/repository/object_store_*: a no-op once built (its path on
# stdout).
"$(dirname "$0")/install-minio.sh" >/dev/null
# The batch path's PyPI packages (pyarrow, pandas, PySpark) as a local
# wheelhouse, which the Python tests install from offline.
"$(dirname "$0")/install-python-wheels.sh" >/dev/null
# The Go client's protoc plugins and module dependencies (clients/go).
"$(dirname "$0")/install-client-tools.sh" >/dev/null
# podman, runc and mmdebstrap, and podman's settings, for deploy/image/.
"$(dirname "$0")/install-podman.sh"
# helm, kubeconform and Kubernetes' schemas for tests/deploy/helm_test.sh: a
# no-op once there (their paths on stdout).
"$(dirname "$0")/install-k8s-tools.sh" >/dev/null
