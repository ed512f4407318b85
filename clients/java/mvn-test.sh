#!/bin/sh
# ctest's java_client: the Java client's JUnit tests (src/test), through
# Maven, against the roost-load and roost-server that ROOST_LOAD_BINARY and
# ROOST_SERVER_BINARY name (CMakeLists.txt sets them to the build's).
#
# Usage: mvn-test.sh BUILD_DIR
#   BUILD_DIR: where Maven builds (target/ of this folder when run by hand).
# Maven's local repository is its default (~/.m2/repository): a fresh
# machine downloads the plugins and jars once (about 50 s), later runs
# find them there.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v mvn >/dev/null 2>&1; then
  echo "java_client: FAILED: mvn is not on PATH. The Java client's tests need" \
       "Maven 3.8+ and a JDK 17+ (Debian: maven openjdk-17-jdk-headless," \
       "scripts/install-deps.sh)." >&2
  exit 1
fi
if ! command -v java >/dev/null 2>&1; then
  echo "java_client: FAILED: java is not on PATH (a JDK 17+ is needed)." >&2
  exit 1
fi
exec mvn -B --no-transfer-progress -f "$here/pom.xml" "-Droost.java.build=$1" test
