#!/usr/bin/env bash
# Installs what tests/deploy/helm_test.sh checks the Helm chart
# (deploy/helm/roost) with, offline, into
# ${ROOST_TOOLS_DIR:-$HOME/.cache/roost/tools}/k8s/:
#   helm-VERSION-kKUBE/helm           go install helm.sh/helm/v3/cmd/helm,
#     with the version and the default Kubernetes version (KUBE) that
#     helm's own Makefile builds in: a plain `go install` leaves helm at
#     Kubernetes 1.20, whose `helm template` (no --kube-version) refuses
#     any chart that needs a newer Kubernetes, as deploy/helm/roost does
#   kubeconform-VERSION/kubeconform   go install github.com/yannh/kubeconform/cmd/kubeconform
#   schemas-VERSION/vK-standalone[-strict]/KIND-GROUP-VERSION.json
#     Kubernetes' JSON schemas for each Kubernetes version K below, from the
#     PyPI package kubernetes-validate (pip download; nothing installed),
#     made standalone: kubernetes-validate's schemas point at a shared
#     _definitions.json by an https://kubernetes.io/ $id, which kubeconform
#     would try to download; here each kind's file carries the definitions
#     it needs under $defs, in the layout kubeconform's -schema-location
#     template expects:
#       SCHEMAS/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json
# Each tool is built once and kept, as scripts/install-minio.sh does; the
# versions are in the directory names, so changing one below installs it
# anew (and removes the other versions). The first run takes a minute or
# two of two cores (Go modules and compiles, mostly helm's); later runs
# find everything there.
# Idempotent: does nothing (and needs no network) when all are there.
# Prints, as its last lines, KEY=PATH for ROOST_HELM, ROOST_KUBECONFORM and
# ROOST_K8S_SCHEMAS (the directory the template above starts from).
# Usage: scripts/install-k8s-tools.sh [--check|--force]
#   --check  print the lines if everything is installed, else exit 1 saying
#            what is missing; never builds or downloads
#   --force  build and download everything again
set -euo pipefail

helm_version=v3.22.0
# The Kubernetes version of helm's client-go (k8s.io/client-go v0.37.0 in
# helm v3.22.0's go.mod: 1.37), its default for --kube-version as helm's
# Makefile computes it.
helm_kube_version=1.37
kubeconform_version=v0.8.0
kubernetes_validate_version=1.37.0
kubernetes_versions=(1.29.0 1.31.0)   # the Kubernetes versions the chart is checked against

tools_dir=${ROOST_TOOLS_DIR:-$HOME/.cache/roost/tools}
k8s_dir=$tools_dir/k8s
helm=$k8s_dir/helm-$helm_version-k$helm_kube_version/helm
kubeconform=$k8s_dir/kubeconform-$kubeconform_version/kubeconform
schemas=$k8s_dir/schemas-$kubernetes_validate_version

schemas_complete() {
  local v
  for v in "${kubernetes_versions[@]}"; do
    [ -f "$schemas/v$v-standalone-strict/statefulset-apps-v1.json" ] || return 1
  done
}
report() {
  echo "ROOST_HELM=$helm"
  echo "ROOST_KUBECONFORM=$kubeconform"
  echo "ROOST_K8S_SCHEMAS=$schemas"
}

mode=${1:-}
case "$mode" in
  ""|--check|--force) ;;
  *) echo "usage: $0 [--check|--force]" >&2; exit 64 ;;
esac
if [ "$mode" != --force ] && [ -x "$helm" ] && [ -x "$kubeconform" ] && schemas_complete; then
  report
  exit 0
fi
if [ "$mode" = --check ]; then
  missing=()
  [ -x "$helm" ] || missing+=("$helm")
  [ -x "$kubeconform" ] || missing+=("$kubeconform")
  schemas_complete || missing+=("$schemas")
  echo "install-k8s-tools: not installed: ${missing[*]}; run scripts/install-k8s-tools.sh" >&2
  exit 1
fi

# The same Go as scripts/install-minio.sh (scripts/find-go.sh).
go=$("$(dirname "$0")/find-go.sh" || true)
if [ -z "$go" ]; then
  echo "install-k8s-tools: building helm and kubeconform needs Go 1.21 or newer" \
       "(on PATH or at /usr/local/go/bin/go); install it from https://go.dev/dl/" >&2
  exit 1
fi
python=/usr/bin/python3   # Debian's, with pip (python3-pip); not a pyenv shim

mkdir -p "$k8s_dir"
# Everything is made in a scratch directory and moved into place whole, so
# that an interrupted run never leaves something that looks installed.
scratch=$(mktemp -d "$k8s_dir/.build.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# Builds the Go command PACKAGE@VERSION into DEST (a directory of its own),
# unless it is there; LDFLAGS as go's -ldflags.
build() {
  local dest=$1 package=$2 ldflags=${3:-}
  local name=${package%@*}
  name=${name##*/}
  if [ "$mode" != --force ] && [ -x "$dest/$name" ]; then return 0; fi
  echo "install-k8s-tools: building $package with $("$go" version)" >&2
  local start=$SECONDS
  # nice: the machine may be shared, and this is never urgent.
  GOBIN=$scratch/bin CGO_ENABLED=0 nice -n 10 "$go" install -ldflags "$ldflags" "$package"
  mkdir "$scratch/$name"
  mv "$scratch/bin/$name" "$scratch/$name/"
  rm -rf "$dest"
  mv -T "$scratch/$name" "$dest"
  echo "install-k8s-tools: built $name in $((SECONDS - start)) s" >&2
}
helm_ldflags="-X helm.sh/helm/v3/internal/version.version=$helm_version"
for pkg in pkg/chartutil pkg/lint/rules; do
  helm_ldflags+=" -X helm.sh/helm/v3/$pkg.k8sVersionMajor=${helm_kube_version%.*}"
  helm_ldflags+=" -X helm.sh/helm/v3/$pkg.k8sVersionMinor=${helm_kube_version#*.}"
done
build "${helm%/*}" "helm.sh/helm/v3/cmd/helm@$helm_version" "$helm_ldflags"
build "${kubeconform%/*}" "github.com/yannh/kubeconform/cmd/kubeconform@$kubeconform_version"

if [ "$mode" = --force ] || ! schemas_complete; then
  echo "install-k8s-tools: Kubernetes schemas from kubernetes-validate $kubernetes_validate_version" >&2
  "$python" -m pip download --quiet --no-deps --only-binary=:all: \
    -d "$scratch/wheel" "kubernetes-validate==$kubernetes_validate_version" >&2
  "$python" - "$scratch"/wheel/kubernetes_validate-*.whl "$scratch/schemas" \
    "${kubernetes_versions[@]}" <<'EOF'
# Each resource kind's schema (a file whose "kind" is an enum) written with
# the definitions it reaches, transitively, under $defs; references into
# /api/_definitions.json become local ones and the https $id goes.
import json, os, re, sys, zipfile

wheel, out, versions = sys.argv[1], sys.argv[2], sys.argv[3:]
ref = re.compile(r'^(?:/api/_definitions\.json)?#/\$defs/(.+)$')
root = 'kubernetes_validate/kubernetes-json-schema'

def rewrite(node, reached):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == '$ref' and isinstance(value, str):
                match = ref.match(value)
                if not match:
                    sys.exit(f'unexpected $ref {value}')
                node[key] = '#/$defs/' + match.group(1)
                reached.append(match.group(1))
            else:
                rewrite(value, reached)
    elif isinstance(node, list):
        for value in node:
            rewrite(value, reached)

with zipfile.ZipFile(wheel) as z:
    names = z.namelist()
    for version in versions:
        for strict in ('', '-strict'):
            source = f'{root}/v{version}-local{strict}/'
            target = os.path.join(out, f'v{version}-standalone{strict}')
            os.makedirs(target)
            definitions = json.loads(z.read(source + '_definitions.json'))['$defs']
            written = 0
            for name in names:
                if not name.startswith(source) or not name.endswith('.json'):
                    continue
                base = name[len(source):]
                if base.startswith('_') or base == 'all.json' or '/' in base:
                    continue
                schema = json.loads(z.read(name))
                if 'enum' not in schema.get('properties', {}).get('kind', {}):
                    continue  # not a resource kind
                schema.pop('$id', None)
                reached, defs = [], {}
                rewrite(schema, reached)
                while reached:
                    key = reached.pop()
                    if key in defs:
                        continue
                    defs[key] = definitions[key]
                    more = []
                    rewrite(defs[key], more)
                    reached += more
                schema['$defs'] = defs
                with open(os.path.join(target, base), 'w') as f:
                    json.dump(schema, f, separators=(',', ':'))
                written += 1
            if written < 50:
                sys.exit(f'only {written} kinds in {source}')
EOF
  rm -rf "$schemas"
  mv -T "$scratch/schemas" "$schemas"
fi

# Other versions of the tools, from before a version above changed.
for old in "$k8s_dir"/helm-* "$k8s_dir"/kubeconform-* "$k8s_dir"/schemas-*; do
  case "$old" in
    "${helm%/*}"|"${kubeconform%/*}"|"$schemas") ;;
    *) if [ -e "$old" ]; then rm -rf "$old"; fi ;;
  esac
done
report
