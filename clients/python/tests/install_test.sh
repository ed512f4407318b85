#!/usr/bin/env bash
# Installs the package the way a user does, into a fresh venv, offline, and
# imports it from there: `pip install ./clients/python` must work as it is.
# Usage: install_test.sh PYTHON VENV PACKAGE_DIR
#   PYTHON       Debian's python3 (its python3-grpcio, -protobuf, -xxhash
#                and setuptools are what the venv sees: --system-site-packages)
#   VENV         made anew; the Python tests then run with VENV/bin/python
#   PACKAGE_DIR  clients/python
# The package is copied first, so that pip's in-tree build leaves nothing
# in the checkout and nothing outside the package folder can be relied on.
set -euo pipefail
python=$1 venv=$2 package=$3
rm -rf "$venv"
"$python" -m venv --system-site-packages "$venv"
copy="$(mktemp -d)"
trap 'rm -rf "$copy"' EXIT
cp -r "$package" "$copy/python"
rm -rf "$copy/python/build" "$copy/python"/src/*.egg-info
files() { (cd "$copy/python" && find . -type f | sed 's|^\./||' | LC_ALL=C sort); }
files >"$copy/before"
# --no-index: no package index is asked (the dependencies are Debian's);
# --no-build-isolation: Debian's setuptools builds it.
"$venv/bin/python" -m pip install --quiet --no-index --no-build-isolation \
  --disable-pip-version-check "$copy/python"
# What the in-tree build left in the package folder (build/, the
# egg-info) is what `pip install ./clients/python` leaves in a checkout:
# the checkout's .gitignore must ignore every file of it. Checked where
# the package sits in a git checkout (not in a source archive).
root=$(cd "$package/../.." && pwd)
if [ "$(git -C "$root" rev-parse --show-toplevel 2>/dev/null)" = "$root" ]; then
  left=$(files | LC_ALL=C comm -13 "$copy/before" -)
  [ -n "$left" ] || { echo "install_test: pip left nothing in the package folder?" >&2; exit 1; }
  # check-ignore exits 1 when it ignores none of them.
  kept=$(sed 's|^|clients/python/|' <<<"$left" |
    { git -C "$root" check-ignore --no-index --stdin -v -n || [ $? -eq 1 ]; } |
    sed -n 's/^::\t//p')
  if [ -n "$kept" ]; then
    echo "install_test: pip install leaves files in the checkout that git does not ignore:" >&2
    echo "$kept" >&2
    exit 1
  fi
fi
cd /
"$venv/bin/python" - "$venv" <<'PY'
import os, sys
from importlib.metadata import metadata
import roost, roost.v1.lookup_pb2, roost.v1.lookup_pb2_grpc
venv = os.path.realpath(sys.argv[1])
where = os.path.realpath(roost.__file__)
assert where.startswith(venv + os.sep), f"roost imported from {where}, not the venv {venv}"
here = os.path.dirname(where)
for name in ("py.typed", "v1/lookup_pb2.pyi"):
    assert os.path.exists(os.path.join(here, name)), f"{name} was not installed"
assert roost.partition_of(b"user1", 4) == 3
meta = metadata("roost-client")
assert meta["License"] == "Apache-2.0", f"License: {meta['License']}"
assert "License :: OSI Approved :: Apache Software License" in meta.get_all("Classifier", []), \
    meta.get_all("Classifier")
client = roost.Client(shards=[["127.0.0.1:1"]])
client.close()
# Without the [batch] extra, roost-build says what it needs (unless this
# Python has pyarrow anyway).
import subprocess
try:
    import pyarrow  # noqa: F401
except ImportError:
    r = subprocess.run([os.path.join(venv, "bin", "roost-build")], capture_output=True, text=True)
    assert r.returncode == 69 and "[batch] extra" in r.stderr, (r.returncode, r.stderr)
print(f"roost {roost.__version__} installed in {venv}: 1 passed, 0 failed")
PY
