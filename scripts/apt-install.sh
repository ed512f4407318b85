#!/usr/bin/env bash
# Installs those of the Debian packages named that are not installed yet
# (apt-get, with sudo unless root); does nothing, and needs no network,
# when all are. Used by scripts/install-deps.sh and scripts/install-podman.sh.
# Usage: scripts/apt-install.sh PACKAGE...
set -euo pipefail
missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
[ ${#missing[@]} -ne 0 ] || exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "installing: ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
  "${missing[@]}" >/dev/null
