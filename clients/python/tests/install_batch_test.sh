#!/usr/bin/env bash
# Installs the package with its [batch] and [spark] extras (pyarrow, PySpark) into a fresh venv,
# offline, as a user does, from the wheelhouse that
# scripts/install-python-wheels.sh makes; then checks that the roost-build
# console script runs. The roost-build tests (test_build.py) run in it.
# Usage: install_batch_test.sh PYTHON VENV PACKAGE_DIR WHEELS
#   PYTHON, VENV, PACKAGE_DIR  as install_test.sh's
#   WHEELS       the wheelhouse (pyarrow and its numpy)
set -euo pipefail
python=$1 venv=$2 package=$3 wheels=$4
if ! compgen -G "$wheels/pyarrow-*.whl" >/dev/null; then
  echo "install_batch_test: no pyarrow wheel in $wheels; run scripts/install-python-wheels.sh" >&2
  exit 1
fi
rm -rf "$venv"
"$python" -m venv --system-site-packages "$venv"
copy="$(mktemp -d)"
trap 'rm -rf "$copy"' EXIT
cp -r "$package" "$copy/python"
rm -rf "$copy/python/build" "$copy/python"/src/*.egg-info
"$venv/bin/python" -m pip install --quiet --no-index --no-build-isolation \
  --disable-pip-version-check --find-links "$wheels" "$copy/python[batch,spark]"
cd /
"$venv/bin/roost-build" --help | grep -q -- "--key-column"
"$venv/bin/python" -c 'import pyarrow, roost.batch; print(f"roost-build with pyarrow {pyarrow.__version__} installed: 1 passed, 0 failed")'
