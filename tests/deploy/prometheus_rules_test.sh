#!/usr/bin/env bash
# deploy/prometheus/roost-rules.yml: promtool's check, its unit tests
# (deploy/prometheus/tests/*_test.yml), and what promtool cannot see: that
# every alert's runbook_url names a section of docs/operations/alerts.md, that
# the unit tests show every alert both firing and not firing, and that they
# check the value of every recording rule.
# Usage: tests/deploy/prometheus_rules_test.sh SOURCE_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
rules=$src/deploy/prometheus/roost-rules.yml
tests=$src/deploy/prometheus/tests
fail() { echo "prometheus_rules_test: $*" >&2; exit 1; }

promtool=$(command -v promtool) ||
  fail "promtool not found: install Debian's prometheus (scripts/install-deps.sh)"
"$promtool" check rules "$rules" "$tests/data_age_overrides.yml"
(cd "$tests" && "$promtool" test rules ./*_test.yml)

# Every alert has a runbook_url, docs/operations/alerts.md#ANCHOR, and ANCHOR is
# the GitHub anchor of one of its headings (lower case, punctuation
# dropped, spaces as dashes).
alerts=$(sed -n 's/^ *- alert: *\([A-Za-z]*\) *$/\1/p' "$rules")
[ -n "$alerts" ] || fail "no alerts in $rules"
anchors=$(grep '^#' "$src/docs/operations/alerts.md" | sed 's/^#* *//' |
  tr 'A-Z' 'a-z' | sed 's/[^a-z0-9 _-]//g; s/ /-/g')
urls=$(sed -n 's/^ *runbook_url: *"\(.*\)" *$/\1/p' "$rules")
[ "$(wc -l <<<"$urls")" -eq "$(wc -l <<<"$alerts")" ] ||
  fail "$(wc -l <<<"$alerts") alerts but $(wc -l <<<"$urls") runbook_urls"
for alert in $alerts; do
  anchor=$(tr 'A-Z' 'a-z' <<<"$alert")
  grep -qx " *runbook_url: \"docs/operations/alerts.md#$anchor\"" "$rules" ||
    fail "$alert: no runbook_url \"docs/operations/alerts.md#$anchor\""
  grep -qx "$anchor" <<<"$anchors" ||
    fail "$alert: docs/operations/alerts.md has no section \"### $alert\""
done

# Each alert is expected firing (a non-empty exp_alerts) and not firing
# (exp_alerts: []) at some eval_time of the unit tests.
for alert in $alerts; do
  seen=$(awk -v a="$alert" '
    $1 == "alertname:" { current = $2 }
    $1 == "exp_alerts:" && current == a { print ($2 == "[]" ? "quiet" : "fires") }
  ' "$tests"/*_test.yml | sort -u | tr '\n' ' ')
  [ "$seen" = "fires quiet " ] ||
    fail "$alert: the unit tests expect it only as: ${seen:-nothing}"
done

# Every recording rule's value is checked in recording_test.yml.
for record in $(sed -n 's/^ *- record: *\([^ ]*\) *$/\1/p' "$rules" | sort -u); do
  grep -q "expr: .*$record" "$tests/recording_test.yml" ||
    fail "recording_test.yml checks no value of $record"
done
echo "prometheus_rules_test: $(wc -w <<<"$alerts") alerts and their runbooks, recording rules: ok"
