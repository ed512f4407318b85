#!/usr/bin/env bash
# Fetches, once, the PyPI packages of the Python package's batch path
# (clients/python[batch]: pyarrow; pandas; PySpark for roost.spark) and of
# its Feast online store (clients/python[feast]) as wheels into a local
# wheelhouse, so that the tests install them offline into the venvs they
# make (`pip install --no-index --find-links DIR`):
#   ${ROOST_TOOLS_DIR:-$HOME/.cache/roost/tools}/wheels
# PySpark is published as a source archive: it is built into a wheel here,
# once. Debian 12 has none of these packages. The versions are pinned, so
# that every machine tests the same ones; the package itself asks only for
# minimum versions (clients/python/pyproject.toml).
# Feast has a pin set of its own, for a venv of its own: Feast 0.67 asks for
# pandas<3 (the batch set's pandas is 3.1) and protobuf>=4.24 (Debian 12's
# python3-protobuf is 4.21, so the Feast venv has PyPI's, which shadows it;
# roost's generated code runs on it). The two sets share pyarrow and numpy.
# redis (redis-py) is for Feast's Redis online store, which
# bench/feast_bench.py measures roost's against.
# Each set has its own stamp, so a machine whose wheelhouse has the batch
# set fetches only the Feast set (66 wheels, about 130 MB: 8 to 12 s on a
# fresh pip cache here; python_feast_install, a venv and the install into
# it, 20 to 36 s on a loaded 2-core machine).
# Idempotent: does nothing (and needs no network) when the wheelhouse is
# complete. Prints the wheelhouse's path as its last line of output.
# Usage: scripts/install-python-wheels.sh [--force]
set -euo pipefail

tools_dir=${ROOST_TOOLS_DIR:-$HOME/.cache/roost/tools}
wheels=$tools_dir/wheels
pins=(pyarrow==26.0.1 pandas==3.1.1 numpy==2.4.6 pyspark==4.1.1)
# clients/python/tests/install_feast_test.sh installs exactly these.
feast_pins=(feast==0.67.0 pandas==2.3.3 protobuf==7.36.2 pyarrow==26.0.1 numpy==2.4.6 redis==7.4.1)
stamp_of() { echo "$wheels/.complete-$1-$(printf '%s\n' "${@:2}" | md5sum | cut -c1-12)"; }
# The batch set's stamp keeps its old name (no "batch-" in it), so that
# machines that have it do not fetch it again.
stamp="$wheels/.complete-$(printf '%s\n' "${pins[@]}" | md5sum | cut -c1-12)"
feast_stamp=$(stamp_of feast "${feast_pins[@]}")
force=0
[ "${1:-}" = "--force" ] && force=1

# Debian's python3: the tests' venvs are made from it (python3-pip,
# python3-wheel: scripts/install-deps.sh).
python=/usr/bin/python3
mkdir -p "$wheels"

if [ "$force" = 1 ] || [ ! -e "$stamp" ]; then
  rm -f "$wheels"/.complete-????????????
  # Binary wheels only for the compiled ones, with their dependencies
  # (python-dateutil, tzdata, six, ...).
  "$python" -m pip download --quiet --disable-pip-version-check \
    --only-binary=:all: -d "$wheels" "${pins[@]:0:3}" >&2
  # PySpark, with what it requires (py4j); its optional extras are the
  # packages above.
  "$python" -m pip wheel --quiet --disable-pip-version-check \
    -w "$wheels" "${pins[@]:3}" >&2
  touch "$stamp"
fi

if [ "$force" = 1 ] || [ ! -e "$feast_stamp" ]; then
  rm -f "$wheels"/.complete-feast-*
  # Feast and everything it requires (dask, SQLAlchemy, FastAPI, ...), all
  # published as wheels.
  "$python" -m pip download --quiet --disable-pip-version-check \
    --only-binary=:all: -d "$wheels" "${feast_pins[@]}" >&2
  touch "$feast_stamp"
fi
echo "$wheels"
