#!/bin/sh
# ctest's conformance_java: builds the Java client and its conformance
# runner (mvn test-compile) in BUILD_DIR, then runs the conformance suite
# (tests/conformance/run_conformance.py) with that runner. The roost
# binaries come from ROOST_LOAD_BINARY, ROOST_SERVER_BINARY and
# ROOST_ADMIN_BINARY (CMakeLists.txt sets them to the build's).
#
# Usage: conformance.sh BUILD_DIR PYTHON3
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$1
python=$2
for tool in mvn java; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "conformance_java: FAILED: $tool is not on PATH. The Java client needs" \
         "Maven 3.8+ and a JDK 17+ (Debian: maven openjdk-17-jdk-headless," \
         "scripts/install-deps.sh)." >&2
    exit 1
  fi
done
mvn -B -q --no-transfer-progress -f "$here/pom.xml" "-Droost.java.build=$build" test-compile
classpath="$build/classes:$build/test-classes:$(cat "$build/test-classpath.txt")"
exec "$python" "$here/../../tests/conformance/run_conformance.py" --runner java -- \
  java -cp "$classpath" dev.roost.conformance.Runner
