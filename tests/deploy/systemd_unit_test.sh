#!/usr/bin/env bash
# deploy/systemd/roost-server.service, as `cmake --install` installs it (its
# ExecStart must name a binary that exists), through `systemd-analyze
# verify`; any warning fails too (an unknown or misspelt key is only a
# warning to systemd, and is silently ignored when the unit runs).
# Usage: tests/deploy/systemd_unit_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
if ! command -v systemd-analyze >/dev/null; then
  echo "systemd_unit_test: SKIPPED: no systemd-analyze (Debian's systemd package; scripts/install-deps.sh installs it)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
unit=$tmp/prefix/lib/systemd/system/roost-server.service
set +e
out=$(cd "$tmp" && SYSTEMD_LOG_COLOR=0 systemd-analyze verify "$unit" 2>&1)
rc=$?
set -e
if [ $rc -ne 0 ] || [ -n "$out" ]; then
  echo "systemd_unit_test: systemd-analyze verify exited $rc:" >&2
  echo "$out" >&2
  exit 1
fi
# The settings the unit exists for, each present once.
for key in ProtectSystem=strict ReadWritePaths=/var/lib/roost NoNewPrivileges=yes \
           PrivateTmp=yes ProtectHome=yes LimitMEMLOCK=infinity Restart=on-failure \
           KillSignal=SIGTERM User=roost; do
  [ "$(grep -cx "$key" "$unit")" = 1 ] || { echo "systemd_unit_test: no $key" >&2; exit 1; }
done
grep -qx 'LimitNOFILE=[0-9]*' "$unit" || { echo "systemd_unit_test: no LimitNOFILE" >&2; exit 1; }
# Stopping outlasts the example config's drain and shutdown.
stop=$(sed -n 's/^TimeoutStopSec=//p' "$unit")
drain=$(sed -n 's/^drain-period = //p' "$tmp/prefix/share/roost/server.toml")
grace=$(sed -n 's/^shutdown-timeout = //p' "$tmp/prefix/share/roost/server.toml")
[ "$stop" -gt $((drain + grace)) ] ||
  { echo "systemd_unit_test: TimeoutStopSec=$stop is not over $drain + $grace" >&2; exit 1; }
echo "systemd_unit_test: ok"
