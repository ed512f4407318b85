#!/usr/bin/env bash
# The Helm chart deploy/helm/roost, offline (there is no cluster):
#   - helm lint --strict with each value set of deploy/helm/roost/ci/;
#   - helm template of each, and of the chart's own values, every object
#     checked by kubeconform -strict against the Kubernetes 1.29 and 1.31
#     schemas (the Prometheus operator's ServiceMonitor and PrometheusRule
#     are skipped: their schemas are CRDs of their own);
#   - what the objects must say (tests/deploy/helm_checks.py: one StatefulSet,
#     headless Service and PDB per shard, --shard I in shard I, probes,
#     TLS mounts and flags, huge pages, monitoring, NOTES.txt);
#   - the rendered command line parsed by the real roost-server, and the
#     roost-admin commands NOTES.txt gives by the real roost-admin;
#   - values the chart must refuse, refused, saying why.
# The tools come from scripts/install-k8s-tools.sh (built once, cached).
# Usage: tests/deploy/helm_test.sh ROOST_SERVER_BINARY ROOST_ADMIN_BINARY
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
server=$1
admin=$2
chart=$root/deploy/helm/roost
python=/usr/bin/python3   # Debian's, with python3-yaml
fail() { echo "helm_test: $*" >&2; exit 1; }

tools=$("$root/scripts/install-k8s-tools.sh" --check) ||
  fail "helm, kubeconform or the Kubernetes schemas are missing: run scripts/install-k8s-tools.sh (scripts/install-deps.sh does)"
eval "$tools"
"$python" -c 'import yaml' 2>/dev/null || fail "no python3-yaml for $python (scripts/install-deps.sh installs it)"
[ -x "$server" ] || fail "no roost-server at $server"
[ -x "$admin" ] || fail "no roost-admin at $admin"
# The chart carries copies of deploy/prometheus/roost-rules.yml,
# deploy/grafana/roost.json and LICENSE (scripts/sync-chart-files.sh makes
# them): real files, each its source's bytes.
"$root/scripts/sync-chart-files.sh" --check || fail "the chart's copied files are stale (above)"
links=$(find "$chart" -type l)
[ -z "$links" ] || fail "symlinks in the chart (Helm warns on every load): $links"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Helm keeps nothing of its own anywhere else.
export HELM_CACHE_HOME=$tmp/helm/cache HELM_CONFIG_HOME=$tmp/helm/config HELM_DATA_HOME=$tmp/helm/data
# Helm says nothing on stderr when all is well: a warning (a symlink
# followed, say) fails the case that printed it.
quiet() {  # CASE: fails when helm wrote anything to $tmp/err
  if [ -s "$tmp/err" ]; then cat "$tmp/err" >&2; fail "$1: helm wrote to stderr"; fi
}
kube=1.29.0

# NOTES.txt is rendered only by `helm install`, which wants a cluster: a
# copy of the chart (links followed) renders it into a ConfigMap of its own.
notes_chart=$tmp/notes-chart
cp -rL "$chart" "$notes_chart"
mv "$notes_chart/templates/NOTES.txt" "$notes_chart/notes.txt"
cat >"$notes_chart/templates/zz-notes.yaml" <<'EOF'
{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "notes"},
 "data": {"notes": {{ tpl (.Files.Get "notes.txt") . | toJson }}}}
EOF
render_notes() {  # CASE RELEASE HELM-ARGS...
  local case=$1 release=$2
  shift 2
  "$ROOST_HELM" template "$release" "$notes_chart" --kube-version $kube "$@" \
    --show-only templates/zz-notes.yaml >"$tmp/render/$case.notes" 2>"$tmp/err" ||
    { cat "$tmp/err" >&2; fail "$case: NOTES.txt does not render"; }
  quiet "$case: NOTES.txt"
}

mkdir -p "$tmp/render"
cases=()
for values in "$chart"/ci/*-values.yaml; do
  case=$(basename "$values" -values.yaml)
  cases+=("$case")
  out=$("$ROOST_HELM" lint --strict "$chart" -f "$values" 2>&1) ||
    { echo "$out" >&2; fail "$case: helm lint --strict failed"; }
  if echo "$out" | grep -q '\[WARNING\]\|\[ERROR\]\|symbolic link'; then
    echo "$out" >&2
    fail "$case: helm lint has warnings"
  fi
  "$ROOST_HELM" template roost "$chart" --kube-version $kube -f "$values" \
    >"$tmp/render/$case.yaml" 2>"$tmp/err" ||
    { cat "$tmp/err" >&2; fail "$case: helm template failed"; }
  quiet "$case: helm template"
  render_notes "$case" roost -f "$values"
done
# The chart's own values, but for the one required, under the longest
# release name Helm allows: names must be cut to fit.
long=a-release-name-of-the-53-characters-helm-allows-xxxxx
"$ROOST_HELM" template $long "$chart" --kube-version $kube \
  --set repository.uri=s3://tables/prod >"$tmp/render/defaults.yaml" 2>"$tmp/err" ||
  { cat "$tmp/err" >&2; fail "defaults: helm template failed"; }
quiet "defaults: helm template"
render_notes defaults $long --set repository.uri=s3://tables/prod
"$ROOST_HELM" lint --strict "$chart" --set repository.uri=s3://tables/prod >"$tmp/err" 2>&1 ||
  { cat "$tmp/err" >&2; fail "defaults: helm lint --strict failed"; }
cases+=(defaults)

# As a new user runs it: no --kube-version (Helm's default Kubernetes
# version, which the chart's kubeVersion must accept), nothing on stderr.
"$ROOST_HELM" template roost "$chart" --set repository.uri=s3://tables/prod \
  >"$tmp/plain.yaml" 2>"$tmp/err" ||
  { cat "$tmp/err" >&2; fail "helm template without --kube-version failed"; }
quiet "helm template without --kube-version"

# The packaged chart: its license, and the copied files in it as files.
"$ROOST_HELM" package "$chart" -d "$tmp/package" >/dev/null 2>"$tmp/err" ||
  { cat "$tmp/err" >&2; fail "helm package failed"; }
quiet "helm package"
chart_yaml=$("$ROOST_HELM" show chart "$tmp"/package/roost-*.tgz)
grep -qx '  artifacthub.io/license: Apache-2.0' <<<"$chart_yaml" ||
  fail "Chart.yaml has no artifacthub.io/license annotation"
packaged=$(tar -tzvf "$tmp"/package/roost-*.tgz)
for f in LICENSE files/roost-rules.yml files/roost.json; do
  grep -Eq "^-.* roost/$f\$" <<<"$packaged" || fail "the packaged chart has no file roost/$f: $packaged"
done

# The README's first block as written: every kubectl command works in the
# namespace the release goes to, and its `helm install` renders (as
# `helm template`; --create-namespace needs a cluster).
readme_commands=$(awk '/^```sh$/ { f = 1; next } /^```$/ { if (f) exit } f' "$chart/README.md" |
  sed -e ':a' -e '/\\$/N; s/\\\n//; ta')
install=$(grep '^helm install ' <<<"$readme_commands") || fail "README.md: no helm install in its first block"
[[ $install =~ \ (-n|--namespace)\ ([a-z0-9-]+) ]] || fail "README.md: helm install names no namespace: $install"
namespace=${BASH_REMATCH[2]}
while read -r line; do
  case "$line" in
    "kubectl create namespace $namespace") ;;
    kubectl\ *)
      [[ " $line " =~ \ (-n|--namespace)\ $namespace\  ]] ||
        fail "README.md: not in namespace $namespace, where the release goes: $line" ;;
    helm\ install\ *) ;;
    *) fail "README.md: unexpected command in the install block: $line" ;;
  esac
done <<<"$readme_commands"
eval "set -- ${install#helm install }"
args=()
for arg in "$@"; do [ "$arg" = --create-namespace ] || args+=("$arg"); done
(cd "$root" && "$ROOST_HELM" template "${args[@]}") >"$tmp/readme.yaml" 2>"$tmp/err" ||
  { cat "$tmp/err" >&2; fail "README.md's helm install does not render: $install"; }
quiet "README.md's helm install"

# Every object against the Kubernetes API's own schemas, strictly (no
# field the API does not know).
for case in "${cases[@]}"; do
  for version in 1.29.0 1.31.0; do
    out=$("$ROOST_KUBECONFORM" -strict -summary -kubernetes-version "$version" \
      -schema-location "$ROOST_K8S_SCHEMAS/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json" \
      -skip ServiceMonitor,PrometheusRule "$tmp/render/$case.yaml" 2>&1) ||
      { echo "$out" >&2; fail "$case: kubeconform against Kubernetes $version"; }
    [[ $out =~ Valid:\ ([0-9]+),\ Invalid:\ 0,\ Errors:\ 0 ]] && [ "${BASH_REMATCH[1]}" -ge 3 ] ||
      fail "$case: kubeconform against Kubernetes $version: $out"
  done
done

"$python" "$root/tests/deploy/helm_checks.py" "$root/deploy" "$tmp/render" || fail "the rendered objects are wrong (above)"

# The command line each value set gives the server parses: roost-server
# gets past its options and stops at the data directory, before it opens
# or binds anything (exit 64 would be a bad flag or value).
for case in "${cases[@]}"; do
  mapfile -t args < <("$python" "$root/tests/deploy/helm_checks.py" --args "$tmp/render/$case.yaml")
  [ ${#args[@]} -gt 5 ] || fail "$case: no command line: ${args[*]}"
  args=("${args[@]//\$(ROOST_REPOSITORY)/s3://tables/prod}")
  args=("${args[@]/#--data-dir=*/--data-dir=$tmp/no-such-dir}")
  set +e
  out=$("$server" "${args[@]}" 2>&1)
  rc=$?
  set -e
  [ $rc -eq 1 ] && [[ $out == *"$tmp/no-such-dir does not exist"* ]] ||
    fail "$case: roost-server ${args[*]}: exit $rc: $out"
done

# The roost-admin commands NOTES.txt gives are roost-admin's: each gets past
# its arguments (an address only to a command that calls its service) and
# fails only for want of a server (exit 2; 64 is bad usage): the pod's
# addresses become port 1, where none listens, its TLS files a file that is
# there, and TABLE a table.
touch "$tmp/pem"
commands=0
for case in "${cases[@]}"; do
  while read -r line; do
    read -r -a words < <(sed -e 's/.*roost-admin //' -e 's/ \[VERSION\]//' \
      -e 's/TABLE/t/' -e 's/127\.0\.0\.1:[0-9]*/127.0.0.1:1/g' \
      -e "s|/etc/roost/[^ ]*|$tmp/pem|g" <<<"$line")
    set +e
    out=$("$admin" "${words[@]}" --timeout=1 2>&1)
    rc=$?
    set -e
    [ $rc -eq 2 ] || fail "$case: NOTES.txt's roost-admin ${words[*]}: exit $rc: $out"
    commands=$((commands + 1))
  done < <("$python" -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["data"]["notes"])' \
             "$tmp/render/$case.notes" | grep -E '^ +(kubectl .* -- )?roost-admin ')
done
[ $commands -ge 3 ] || fail "NOTES.txt gives $commands roost-admin commands"

# Values the chart must refuse, and the words that say why.
refused() {  # WHAT-IT-SAYS HELM-ARGS...
  local says=$1
  shift
  set +e
  out=$("$ROOST_HELM" template roost "$chart" --kube-version $kube "$@" 2>&1)
  rc=$?
  set -e
  [ $rc -ne 0 ] || fail "helm template $* was accepted"
  [[ $out == *"$says"* ]] || fail "helm template $*: refused without saying \"$says\": $out"
}
uri=(--set repository.uri=s3://tables/prod)
refused "at '/shards': minimum" "${uri[@]}" --set shards=0
refused "at '/shards': maximum" "${uri[@]}" --set shards=1025
refused "at '/shards': got string" "${uri[@]}" --set-string shards=3
refused "at '/replicas': minimum" "${uri[@]}" --set replicas=0
refused "at '/server/loadMode'" "${uri[@]}" --set server.loadMode=hugepages
refused "missing property 'limits'" "${uri[@]}" --set server.loadMode=huge-pages
refused "missing property 'memory'" "${uri[@]}" --set server.loadMode=huge-pages --set resources.limits.cpu=2
refused "at '/ports/grpc'" "${uri[@]}" --set ports.grpc=70000
refused "additional properties 'shard' not allowed" "${uri[@]}" --set shard=3
refused "additional properties 'loadmode' not allowed" "${uri[@]}" --set server.loadmode=mmap
refused "at '/repository/uri'" --set repository.uri=http://tables/prod
refused "at '/podAntiAffinity'" "${uri[@]}" --set podAntiAffinity=always
refused "at '/image/digest'" "${uri[@]}" --set image.digest=latest
refused "at '/persistence/size'" "${uri[@]}" --set persistence.size=lots
refused "repository.uri is required" --set shards=2
refused "accessKeyId and secretAccessKey go together" "${uri[@]}" --set repository.credentials.accessKeyId=AKIA
refused "tls.enabled needs tls.secretName" "${uri[@]}" --set tls.enabled=true
refused "/tls/probe/serverName" "${uri[@]}" --set tls.enabled=true --set tls.secretName=tls \
  --set tls.probe.serverName=
refused "tls.clientCA (mutual TLS) needs tls.enabled" "${uri[@]}" --set tls.clientCA.secretName=ca
refused "admin.remote needs mutual TLS" "${uri[@]}" --set admin.remote=true
refused "terminationGracePeriodSeconds (15) must be more than" "${uri[@]}" --set terminationGracePeriodSeconds=15
refused "serviceMonitor.enabled needs metrics.enabled" "${uri[@]}" --set serviceMonitor.enabled=true --set metrics.enabled=false
# helm lint refuses them too.
if out=$("$ROOST_HELM" lint --strict "$chart" "${uri[@]}" --set shards=0 2>&1); then
  fail "helm lint --set shards=0 passed: $out"
fi
[[ $out == *"at '/shards': minimum"* ]] || fail "helm lint --set shards=0 said: $out"

echo "helm_test: ok: ${#cases[@]} value sets rendered, linted and checked against Kubernetes 1.29 and 1.31"
