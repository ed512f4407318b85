#!/usr/bin/env bash
# Installs the package with its [feast] extra into a fresh venv of its own,
# offline, as a user does, from the wheelhouse that
# scripts/install-python-wheels.sh makes. A venv of its own because Feast
# 0.67 asks for pandas<3 (the [batch,spark] venv has pandas 3) and a newer
# protobuf than Debian's (the venv's shadows Debian's python3-protobuf; the
# check below runs roost's generated code on it). The roost.feast tests
# (test_feast.py) run in it.
# Usage: install_feast_test.sh PYTHON VENV PACKAGE_DIR WHEELS
#   PYTHON, VENV, PACKAGE_DIR  as install_test.sh's
#   WHEELS       the wheelhouse
set -euo pipefail
python=$1 venv=$2 package=$3 wheels=$4
if ! compgen -G "$wheels/feast-*.whl" >/dev/null; then
  echo "install_feast_test: no Feast wheel in $wheels; run scripts/install-python-wheels.sh" >&2
  exit 1
fi
rm -rf "$venv"
"$python" -m venv --system-site-packages "$venv"
copy="$(mktemp -d)"
trap 'rm -rf "$copy"' EXIT
cp -r "$package" "$copy/python"
rm -rf "$copy/python/build" "$copy/python"/src/*.egg-info
# The versions scripts/install-python-wheels.sh pins (the wheelhouse also
# holds the batch set's pandas 3, which Feast refuses); redis-py for
# bench/feast_bench.py (Feast's Redis online store).
"$venv/bin/python" -m pip install --quiet --no-index --no-build-isolation \
  --disable-pip-version-check --find-links "$wheels" "$copy/python[feast,tracing]" \
  feast==0.67.0 pandas==2.3.3 protobuf==7.36.2 redis==7.4.1
cd /
"$venv/bin/python" - <<'PY'
import feast, pandas, pyarrow
import roost.feast, roost.v1.lookup_pb2 as pb
assert pb.MultiGetRequest.FromString(pb.MultiGetRequest(table="t").SerializeToString()).table == "t"
print(f"roost.feast with Feast {feast.__version__}, pandas {pandas.__version__}, "
      f"pyarrow {pyarrow.__version__} installed: 1 passed, 0 failed")
PY
