#!/usr/bin/env bash
# A quick end-to-end check of the running local cluster, run by `tools/k8s-local.sh smoke`: a
# Deployment of 2 replicas (image: the static program in tools/k8s/smoke) with an HTTP readiness
# probe, its NodePort Service answered by each pod on 127.0.0.1, pod → Service by DNS name,
# `kubectl scale` to 3, then the namespace deleted. Fails on the first check that does not hold.
# Usage: tools/k8s/smoke.sh KUBECTL KUBECONFIG SMOKE-IMAGE.tar K8S-LOCAL-SCRIPT
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
[ $# -eq 4 ] || die "usage: $0 KUBECTL KUBECONFIG SMOKE-IMAGE.tar K8S-LOCAL-SCRIPT"
kubectl_bin=$1 kubeconfig=$2 archive=$3 k8s_local=$4
ns=k8s-smoke
k() { "$kubectl_bin" --kubeconfig "$kubeconfig" "$@"; }

# replicas: polls the NodePort on 127.0.0.1 until that many different pods have answered.
nodeport_answered_by() {
  local want=$1 port seen="" answer
  port=$(k -n "$ns" get service smoke -o 'jsonpath={.spec.ports[0].nodePort}')
  for _ in $(seq 1 150); do
    answer=$(curl -fsS --max-time 2 "http://127.0.0.1:$port/" 2>/dev/null) || { sleep 0.2; continue; }
    [[ " $seen " == *" $answer "* ]] || seen="$seen $answer"
    [ "$(wc -w <<<"$seen")" -ge "$want" ] && { say "127.0.0.1:$port answered by$seen"; return; }
  done
  die "127.0.0.1:$port answered only by:${seen:- nobody}"
}

dns_reaches_service() { # from one pod, by short and full name
  local pod name
  pod=$(k -n "$ns" get pods -l app=smoke -o 'jsonpath={.items[0].metadata.name}')
  for name in smoke smoke.$ns.svc.cluster.local; do
    k -n "$ns" exec "$pod" -- /smoke get "http://$name:8080/" >/dev/null || die "$pod could not reach http://$name:8080/"
  done
}

scale_to_3() {
  k -n "$ns" scale deployment/smoke --replicas=3 >/dev/null
  k -n "$ns" rollout status deployment/smoke --timeout=60s >/dev/null
  [ "$(k -n "$ns" get deployment smoke -o 'jsonpath={.status.readyReplicas}')" = 3 ] || die "not 3 ready replicas"
}

start=$(now_ms)
k delete namespace "$ns" --ignore-not-found --wait=true >/dev/null
timed "smoke image loaded" "$k8s_local" load-image "$archive"
sed "s#@SMOKE_IMAGE@#$smoke_image#" "$here/smoke/smoke.yaml.in" | k apply -f - >/dev/null
timed "2 replicas Ready (HTTP readiness probe)" k -n "$ns" rollout status deployment/smoke --timeout=60s >/dev/null
timed "NodePort answered by both pods" nodeport_answered_by 2
timed "pod → Service by DNS name" dns_reaches_service
timed "scaled to 3 Ready" scale_to_3
timed "NodePort answered by all 3 pods" nodeport_answered_by 3
timed "namespace deleted" k delete namespace "$ns" --wait=true --timeout=60s >/dev/null
say "smoke test passed in $(seconds_since "$start")"
