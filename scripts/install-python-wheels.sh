#!/usr/bin/env bash
# Fetches, once, the PyPI packages of the Python package's batch path
# (clients/python[batch]: pyarrow; pandas; PySpark for roost.spark) as
# wheels into a local wheelhouse, so that the tests install them offline
# into the venvs they make (`pip install --no-index --find-links DIR`):
#   ${ROOST_TOOLS_DIR:-$HOME/.cache/roost/tools}/wheels
# PySpark is published as a source archive: it is built into a wheel here,
# once. Debian 12 has none of these packages. The versions are pinned, so
# that every machine tests the same ones; the package itself asks only for
# minimum versions (clients/python/pyproject.toml).
# Idempotent: does nothing (and needs no network) when the wheelhouse is
# complete. Prints the wheelhouse's path as its last line of output.
# Usage: scripts/install-python-wheels.sh [--force]
set -euo pipefail

tools_dir=${ROOST_TOOLS_DIR:-$HOME/.cache/roost/tools}
wheels=$tools_dir/wheels
pins=(pyarrow==26.0.1 pandas==3.1.1 numpy==2.4.6 pyspark==4.1.1)
stamp="$wheels/.complete-$(printf '%s\n' "${pins[@]}" | md5sum | cut -c1-12)"

if [ "${1:-}" != "--force" ] && [ -e "$stamp" ]; then
  echo "$wheels"
  exit 0
fi

# Debian's python3: the tests' venvs are made from it (python3-pip,
# python3-wheel: scripts/install-deps.sh).
python=/usr/bin/python3
mkdir -p "$wheels"
rm -f "$wheels"/.complete-*
# Binary wheels only for the compiled ones, with their dependencies
# (python-dateutil, tzdata, six, ...).
"$python" -m pip download --quiet --disable-pip-version-check \
  --only-binary=:all: -d "$wheels" "${pins[@]:0:3}" >&2
# PySpark, with what it requires (py4j); its optional extras are the
# packages above.
"$python" -m pip wheel --quiet --disable-pip-version-check \
  -w "$wheels" "${pins[@]:3}" >&2
touch "$stamp"
echo "$wheels"
