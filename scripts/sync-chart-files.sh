#!/usr/bin/env bash
# Copies into the Helm chart (deploy/helm/roost) the files it carries from
# elsewhere in the tree, each from its one source:
#   files/roost-rules.yml   deploy/prometheus/roost-rules.yml (prometheusRule)
#   files/roost.json        deploy/grafana/roost.json         (dashboard)
#   LICENSE                 LICENSE
# Real copies, not symlinks: Helm warns on every load of a chart with a
# symlink in it. Run it after changing a source; tests/deploy/helm_test.sh fails
# while a copy differs from its source (it runs --check).
# Usage: scripts/sync-chart-files.sh [--check]
#   --check  change nothing; exit 1 naming each copy that is not its
#            source's bytes
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
chart=$root/deploy/helm/roost

check=false
case "${1:-}" in
  "") ;;
  --check) check=true ;;
  *) echo "usage: $0 [--check]" >&2; exit 64 ;;
esac

# COPY (in the chart) SOURCE (from the root), one pair a line.
pairs=(
  "files/roost-rules.yml deploy/prometheus/roost-rules.yml"
  "files/roost.json deploy/grafana/roost.json"
  "LICENSE LICENSE"
)
stale=()
for pair in "${pairs[@]}"; do
  read -r copy source <<<"$pair"
  if [ ! -L "$chart/$copy" ] && cmp -s "$root/$source" "$chart/$copy"; then
    continue
  fi
  if $check; then
    stale+=("deploy/helm/roost/$copy")
    continue
  fi
  mkdir -p "$(dirname "$chart/$copy")"
  rm -f "$chart/$copy"
  cp "$root/$source" "$chart/$copy"
  echo "sync-chart-files: deploy/helm/roost/$copy <- $source" >&2
done
if [ ${#stale[@]} -ne 0 ]; then
  echo "sync-chart-files: not a copy of its source: ${stale[*]};" \
       "run scripts/sync-chart-files.sh" >&2
  exit 1
fi
