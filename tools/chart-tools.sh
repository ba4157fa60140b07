#!/usr/bin/env bash
# Installs what `make chart-test` and `make compose-check` need, once, under .cache/chart-tools/:
# - helm and helm-unittest (`untt`), both built from the tools module tools/helm-unittest, which pins
#   their versions. helm-unittest's go.mod has a replace, so `go install …@version` refuses it; building
#   helm from the same module compiles the Kubernetes packages both link once instead of twice (half
#   the cold build). helm gets the version and Kubernetes-version ldflags a release build sets.
# - kubeconform (go install), and the strict JSON schemas of one Kubernetes version from the PyPI
#   package kubernetes-validate, in .cache/chart-tools/k8s-schemas/.
# - Debian's docker-compose, for `docker-compose config -q` (validation needs no engine).
# - promtool (Debian's prometheus package), which checks and unit-tests the chart's alert rules.
# - The Prometheus operator's ServiceMonitor CRD (`servicemonitor-crd`, prints the file), from the
#   operator's Go module, so the cluster test can create the chart's ServiceMonitors for real.
# Binaries, the Go module cache and the Go build cache all live in .cache/, so a fresh machine builds
# once and later runs only compare version stamps. Usage: tools/chart-tools.sh [all|chart|compose|servicemonitor-crd];
# prints the bin directory.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache="$root/.cache/chart-tools"
bin="$cache/bin"
kubeconform_version=v0.7.0
prometheus_operator_version=v0.80.1
schemas_version=1.37.0
# The Kubernetes minor version helm reports as its default capabilities (client-go in helm v3.21.4).
k8s_major=1
k8s_minor=36

log() { echo "chart-tools: $*" >&2; }

export GOBIN="$bin" GOMODCACHE="$cache/go/mod" GOCACHE="$cache/go/build" GOPATH="$cache/go/path"
export GOTOOLCHAIN=local GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0
command -v go >/dev/null || PATH="/usr/local/go/bin:$PATH"
mkdir -p "$bin"

# A stamp file per tool and version: the binary is rebuilt only when its pinned version changes.
fresh() { [ -x "$bin/$1" ] && [ "$(cat "$bin/.$1.version" 2>/dev/null)" = "$2" ]; }
stamp() { echo "$2" >"$bin/.$1.version"; }
timed() { # name, command...: runs it and logs how long it took
  local name=$1 start=$SECONDS; shift
  "$@"
  log "$name ready in $((SECONDS - start))s"
}

tools_module="$root/tools/helm-unittest"
module_version() { go -C "$tools_module" list -m -f '{{.Version}}' "$1"; }

install_helm() {
  local pkg=helm.sh/helm/v3 version=$1
  go -C "$tools_module" build -trimpath -o "$bin/helm" -ldflags "-s -w -X $pkg/internal/version.version=$version \
    -X $pkg/pkg/chartutil.k8sVersionMajor=$k8s_major -X $pkg/pkg/chartutil.k8sVersionMinor=$k8s_minor \
    -X $pkg/pkg/lint/rules.k8sVersionMajor=$k8s_major -X $pkg/pkg/lint/rules.k8sVersionMinor=$k8s_minor" \
    "$pkg/cmd/helm"
}

install_unittest() {
  local version=$1
  go -C "$tools_module" build -trimpath -o "$bin/untt" \
    -ldflags "-s -w -X github.com/helm-unittest/helm-unittest/internal/build.version=${version#v}" \
    github.com/helm-unittest/helm-unittest/cmd/helm-unittest
}

install_kubeconform() {
  go install -trimpath -ldflags "-s -w" "github.com/yannh/kubeconform/cmd/kubeconform@$kubeconform_version"
}

# The strict schemas of one Kubernetes version from the package, made loadable by kubeconform: they
# refer to "/api/_definitions.json" under an https $id (the package resolves that itself); without
# the $id and with a relative ref, kubeconform finds _definitions.json beside each file. The rest of
# the package (every other version, ~100 MB) is not kept.
install_schemas() {
  local pkg="$cache/kubernetes-validate-pkg" out="$cache/k8s-schemas"
  rm -rf "$pkg" "$out"
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --no-compile \
    --target "$pkg" "kubernetes-validate==$schemas_version"
  python3 - "$pkg/kubernetes_validate/kubernetes-json-schema/v$k8s_major.$k8s_minor.0-local-strict" \
    "$out/v$k8s_major.$k8s_minor.0-local-strict" <<'PY'
import json, os, sys
source, target = sys.argv[1], sys.argv[2]
os.makedirs(target)
for name in os.listdir(source):
    with open(os.path.join(source, name)) as f:
        schema = json.load(f)
    schema.pop('$id', None)
    text = json.dumps(schema).replace('"/api/_definitions.json#', '"_definitions.json#')
    with open(os.path.join(target, name), 'w') as f:
        f.write(text)
PY
  rm -rf "$pkg"
}

install_compose() {
  command -v docker-compose >/dev/null && return
  log "installing docker-compose with apt"
  if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v lock)" ]; then apt-get update -qq; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker-compose >/dev/null
}

install_promtool() {
  log "installing promtool (Debian's prometheus) with apt"
  [ -n "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v lock)" ] || apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
}

install_chart_tools() {
  local helm_version untt_version schemas_stamp
  helm_version=$(module_version helm.sh/helm/v3)
  untt_version=$(module_version github.com/helm-unittest/helm-unittest)
  fresh helm "$helm_version" || { timed helm install_helm "$helm_version" && stamp helm "$helm_version"; }
  fresh untt "$untt_version" ||
    { timed helm-unittest install_unittest "$untt_version" && stamp untt "$untt_version"; }
  command -v promtool >/dev/null || timed promtool install_promtool
  fresh kubeconform "$kubeconform_version" ||
    { timed kubeconform install_kubeconform && stamp kubeconform "$kubeconform_version"; }
  schemas_stamp="$schemas_version/$k8s_major.$k8s_minor"
  [ "$(cat "$cache/k8s-schemas/.version" 2>/dev/null)" = "$schemas_stamp" ] ||
    { timed kubernetes-validate install_schemas && echo "$schemas_stamp" >"$cache/k8s-schemas/.version"; }
}

# The CRD as the operator's release ships it: a file of its Go module (the proxy serves the module).
servicemonitor_crd() {
  local module=github.com/prometheus-operator/prometheus-operator
  local dir; dir=$(go mod download -json "$module@$prometheus_operator_version" |
    sed -n 's/.*"Dir": "\(.*\)",/\1/p')
  [ -n "$dir" ] || { log "could not download $module@$prometheus_operator_version"; exit 1; }
  echo "$dir/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml"
}

case "${1:-all}" in
  servicemonitor-crd) servicemonitor_crd; exit 0 ;;
  chart) install_chart_tools ;;
  compose) install_compose ;;
  all) install_chart_tools && install_compose ;;
  *) log "usage: $0 [all|chart|compose|servicemonitor-crd]"; exit 2 ;;
esac
echo "$bin"
