#!/usr/bin/env bash
# Installs podman, which builds and runs roost's container image
# (deploy/image/, tests/deploy/image_test.sh), and the settings it needs on
# these machines. Run by scripts/install-deps.sh.
#
#   podman, runc   the engine and the OCI runtime it is set to use
#   mmdebstrap     makes the Debian 12 base image from Debian's packages
#                  where no container registry can be reached
#                  (deploy/image/build.sh)
#
# Root runs podman here (rootful), so the rootless helpers (uidmap,
# slirp4netns, fuse-overlayfs) are not needed; the overlay driver is the
# kernel's.
#
# /etc/containers/containers.conf gets, unless it already sets them:
#   [containers] default_ulimits  open files and processes of a container:
#       podman raises a container's open-file limit to 1048576 by default,
#       above what these machines let even root set (runc: "error setting
#       rlimit type 7: operation not permitted")
#   [engine] runtime = "runc"     the runtime installed here
#   [engine] cgroup_manager = "cgroupfs"   no systemd runs as init here
# Idempotent: does nothing (and needs no network) when all is in place.
set -euo pipefail

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"

"$(dirname "$0")/apt-install.sh" podman runc mmdebstrap

conf=/etc/containers/containers.conf
# set_if_missing SECTION KEY VALUE: adds `KEY = VALUE` to [SECTION] of
# $conf unless KEY is set there already (or anywhere: the keys are
# distinct).
set_if_missing() {
  local section=$1 key=$2 value=$3
  if [ -f "$conf" ] && grep -Eq "^[[:space:]]*${key}[[:space:]]*=" "$conf"; then
    return
  fi
  echo "install-podman: $conf: [$section] $key = $value" >&2
  local text=""
  [ -f "$conf" ] && text=$(cat "$conf")
  if grep -Eq "^[[:space:]]*\[$section\][[:space:]]*$" <<<"$text"; then
    text=$(awk -v s="[$section]" -v line="$key = $value" \
      '{ print } !done && $1 == s { print line; done = 1 }' <<<"$text")
  else
    [ -z "$text" ] || text+=$'\n\n'
    text+="[$section]"$'\n'"$key = $value"
  fi
  $sudo mkdir -p "$(dirname "$conf")"
  printf '%s\n' "$text" | $sudo tee "$conf.tmp" >/dev/null
  $sudo mv -f "$conf.tmp" "$conf"
}
set_if_missing containers default_ulimits '["nofile=20000:20000", "nproc=4096:4096"]'
set_if_missing engine runtime '"runc"'
set_if_missing engine cgroup_manager '"cgroupfs"'
