#!/usr/bin/env bash
# Builds roost's container image (deploy/image/Containerfile) from this
# source tree, with podman (or docker).
# Usage: deploy/image/build.sh [--tag NAME]... [--refresh-base] [--no-ccache]
#                              [-- BUILD-ARGS...]
#   --tag NAME      tag the image NAME (repeatable); default roost:VERSION
#                   and roost:latest
#   --refresh-base  make the local Debian 12 base again (see below)
#   --no-ccache     compile without the host's ccache directory
#   BUILD-ARGS      passed on to `podman build`
#
# The base image (build arg BASE_IMAGE; $ROOST_BASE_IMAGE picks one) is
# docker.io/library/debian:bookworm-slim when it is present or can be
# pulled. Where no container registry answers, it is made here from
# Debian's packages instead: `mmdebstrap --variant=minbase bookworm`
# (without documentation, manual pages and translations, as -slim is),
# imported as localhost/roost-debian:bookworm. The tar is kept in
# ${XDG_CACHE_HOME:-~/.cache}/roost/image/, and the image in the engine's
# store, so only the first run makes it (some 15 to 50 s).
#
# With podman, the host's ccache directory is mounted into the compile
# (`--volume`), so a host that has built the same source (scripts/build.sh)
# or an earlier image gets cache hits instead of a compile of minutes.
# docker build cannot mount it: its compile is a cold one.
#
# Environment: ROOST_CONTAINER_ENGINE (podman or docker; default podman
# where installed), ROOST_BASE_IMAGE, ROOST_IMAGE_SOURCE (the
# org.opencontainers.image.source label; default the git remote `origin`).
# Prints the image's ID as its last line (stdout; the rest goes to stderr).
set -euo pipefail
cd "$(dirname "$0")/../.."

tags=()
refresh_base=false
use_ccache=true
while [ $# -gt 0 ]; do
  case $1 in
    --tag) tags+=("$2"); shift 2 ;;
    --refresh-base) refresh_base=true; shift ;;
    --no-ccache) use_ccache=false; shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument $1 (see --help)" >&2; exit 64 ;;
  esac
done

engine=${ROOST_CONTAINER_ENGINE:-}
if [ -z "$engine" ]; then
  if command -v podman >/dev/null; then engine=podman; else engine=docker; fi
fi
command -v "$engine" >/dev/null ||
  { echo "build.sh: no $engine (scripts/install-podman.sh installs podman)" >&2; exit 69; }

version=$(sed -nE 's/^project\(roost VERSION ([0-9.]+).*/\1/p' CMakeLists.txt)
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
source_url=${ROOST_IMAGE_SOURCE-$(git remote get-url origin 2>/dev/null || true)}
[ ${#tags[@]} -gt 0 ] || tags=("roost:$version" roost:latest)

have_image() { "$engine" image inspect "$1" >/dev/null 2>&1; }

slim=docker.io/library/debian:bookworm-slim
local_base=localhost/roost-debian:bookworm
cache=${XDG_CACHE_HOME:-$HOME/.cache}/roost/image
base=${ROOST_BASE_IMAGE:-}
if [ -z "$base" ] && ! $refresh_base; then
  if have_image "$slim"; then
    base=$slim
  elif have_image "$local_base"; then
    base=$local_base
  elif timeout 120 "$engine" pull -q "$slim" >/dev/null 2>&1; then
    base=$slim
  fi
fi
if [ -z "$base" ]; then
  base=$local_base
  tar=$cache/debian-bookworm-minbase.tar
  if $refresh_base || [ ! -s "$tar" ]; then
    command -v mmdebstrap >/dev/null ||
      { echo "build.sh: no registry answers and no mmdebstrap (scripts/install-podman.sh)" >&2; exit 69; }
    mkdir -p "$cache"
    echo "build.sh: making the Debian 12 base with mmdebstrap" >&2
    # Written beside and renamed, so an interrupted run leaves no tar
    # that looks complete.
    mmdebstrap --quiet --format=tar --variant=minbase \
      --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
      --dpkgopt='path-exclude=/usr/share/man/*' \
      --dpkgopt='path-exclude=/usr/share/info/*' \
      --dpkgopt='path-exclude=/usr/share/doc/*' \
      --dpkgopt='path-include=/usr/share/doc/*/copyright' \
      --dpkgopt='path-exclude=/usr/share/locale/*' \
      --dpkgopt='path-include=/usr/share/locale/locale.alias' \
      bookworm "$tar.tmp" >"$cache/mmdebstrap.log" 2>&1 ||
      { cat "$cache/mmdebstrap.log" >&2; exit 1; }
    mv -f "$tar.tmp" "$tar"
  fi
  if $refresh_base || ! have_image "$local_base"; then
    "$engine" import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'CMD ["/bin/bash"]' "$tar" "$local_base" >/dev/null
  fi
fi

args=(-f deploy/image/Containerfile --network host
      --build-arg "BASE_IMAGE=$base" --build-arg "VERSION=$version"
      --build-arg "REVISION=$revision" --build-arg "SOURCE=$source_url"
      --build-arg "JOBS=$(nproc)")
for t in "${tags[@]}"; do args+=(--tag "$t"); done
if $use_ccache && [ "$engine" = podman ] && command -v ccache >/dev/null; then
  ccache_dir=$(ccache --get-config cache_dir)
  mkdir -p "$ccache_dir"
  args+=(--volume "$ccache_dir:/ccache"
         --build-arg "CCACHE_MAXSIZE=$(ccache --get-config max_size)")
  for v in LANG LC_ALL LC_CTYPE LC_MESSAGES; do
    args+=(--build-arg "$v=${!v:-}")
  done
fi

# The ID from the build itself: the tags may be moved by another build
# meanwhile.
iidfile=$(mktemp)
trap 'rm -f "$iidfile"' EXIT
echo "build.sh: $engine build from $base: ${tags[*]}" >&2
start=$(date +%s)
"$engine" build "${args[@]}" --iidfile "$iidfile" "$@" . >&2
id=$(cat "$iidfile")
echo "build.sh: built in $(($(date +%s) - start)) s;" \
     "$("$engine" image inspect --format '{{.Size}}' "$id" |
        awk '{printf "%.1f MB", $1 / 1e6}')" >&2
echo "$id"
