#!/usr/bin/env bash
# Checks a Helm chart the way CI does: that the default values alone stop the install (the operator
# must choose the access checks), `helm lint --strict` and `helm template | kubeconform -strict`
# with every values file in the chart's ci/ folder (ServiceMonitors and the PrometheusRule are
# rendered, then skipped: no CRD schema offline), the helm-unittest suites in tests/, and the alert
# rules as ci/all-features-values.yaml renders them through `promtool check rules` and
# `promtool test rules` (tests/promtool/).
# Ends with one line `charts: N passed, N failed` (lint runs, unit tests and validated resources)
# and exits non-zero when anything failed. Usage: tools/chart-test.sh [chart-dir]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
chart=${1:-charts/gatehouse}
bin=$("$root/tools/chart-tools.sh" chart) || exit 1
schemas="$root/.cache/chart-tools/k8s-schemas"
k8s_version=$(sed 's#.*/##' "$schemas/.version").0
passed=0
failed=0

count() { # passed, failed
  passed=$((passed + $1))
  failed=$((failed + $2))
}

# On its defaults alone the chart stops the install until the operator makes the choices it asks
# for (templates/choices.yaml); every values file in ci/ makes them.
echo "== helm template on the defaults stops, naming the choices to make"
if refusal=$("$bin/helm" template gatehouse "$chart" 2>&1); then
  echo "the chart installs on its defaults: it must ask for the access checks, JWT issuer and audience"
  count 0 1
elif grep -q 'choose before installing' <<<"$refusal"; then
  count 1 0
else
  echo "$refusal"
  count 0 1
fi

value_sets=()
for file in "$chart"/ci/*-values.yaml; do [ -e "$file" ] && value_sets+=("$file"); done

for values in "${value_sets[@]}"; do
  label=$values
  args=(-f "$values")

  echo "== helm lint --strict ($label)"
  if "$bin/helm" lint --strict "$chart" "${args[@]}"; then count 1 0; else count 0 1; fi

  echo "== helm template | kubeconform -strict ($label)"
  rendered=$("$bin/helm" template gatehouse "$chart" "${args[@]}" --kube-version "$k8s_version" \
    --api-versions monitoring.coreos.com/v1/ServiceMonitor --api-versions monitoring.coreos.com/v1/PrometheusRule) ||
    { count 0 1; continue; }
  summary=$(printf '%s\n' "$rendered" | "$bin/kubeconform" -strict -summary -kubernetes-version "$k8s_version" \
    -schema-location "$schemas/{{ .NormalizedKubernetesVersion }}-local{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json" \
    -skip ServiceMonitor,PrometheusRule 2>&1)
  echo "$summary"
  valid=$(sed -n 's/.*Valid: \([0-9]*\).*/\1/p' <<<"$summary")
  bad=$(sed -n 's/.*Invalid: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2/p' <<<"$summary")
  if [ -z "$valid" ] || [ -z "$bad" ]; then count 0 1; else count "$valid" $((${bad% *} + ${bad#* })); fi
done

echo "== helm-unittest"
unittest=$("$bin/untt" --strict -f 'tests/*_test.yaml' "$chart" 2>&1)
status=$?
echo "$unittest"
tests_line=$(grep -E '^Tests:' <<<"$unittest")
unit_passed=$(sed -n 's/.* \([0-9]*\) passed.*/\1/p' <<<"$tests_line")
unit_failed=$(sed -n 's/.* \([0-9]*\) failed.*/\1/p' <<<"$tests_line")
count "${unit_passed:-0}" "${unit_failed:-0}"
# A crash or an error before any test ran still counts as a failure.
[ $status -ne 0 ] && [ "${unit_failed:-0}" -eq 0 ] && count 0 1

# The PrometheusRule's spec is a Prometheus rules file (groups:): the template ends with it, so it is
# everything after `spec:`, two spaces less indented. promtool checks the expressions and runs the
# unit tests, which say for each alert which series make it fire and which do not.
rules_values="$chart/ci/all-features-values.yaml"
promtool_tests="$chart/tests/promtool"
if [ -f "$rules_values" ] && [ -d "$promtool_tests" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  echo "== promtool check rules (PrometheusRule of $rules_values)"
  if "$bin/helm" template gatehouse "$chart" -f "$rules_values" \
    --api-versions monitoring.coreos.com/v1/PrometheusRule --show-only templates/prometheusrule.yaml |
    awk '/^spec:$/ {on = 1; next} /^---/ {on = 0} on {print substr($0, 3)}' >"$work/rules.yaml" &&
    [ -s "$work/rules.yaml" ] && promtool check rules "$work/rules.yaml"; then
    count 1 0
  else
    count 0 1
  fi
  for test in "$promtool_tests"/*.yaml; do
    echo "== promtool test rules ($test)"
    cp "$test" "$work/"
    if promtool test rules "$work/$(basename "$test")"; then count 1 0; else count 0 1; fi
  done
fi

echo "charts: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
