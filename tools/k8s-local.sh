#!/usr/bin/env bash
# A real single-node Kubernetes v1.32.13 on this machine, for the chart tests: etcd, kube-apiserver,
# controller-manager, scheduler, containerd + runc, kubelet, kube-proxy (iptables), a CNI bridge and
# CoreDNS as a pod. Nothing is pulled: the Kubernetes binaries, CoreDNS and the pause program are
# built from Go modules and C source by tools/k8s/build.sh (cached in .cache/k8s/bin, keyed by
# version), and images are imported into containerd.
# Usage: tools/k8s-local.sh up|down|status|env|smoke       tools/k8s-local.sh load-image ARCHIVE.tar...
#   up          builds or reuses the binaries, starts everything, waits for the node and CoreDNS
#               to be Ready; says so when the cluster runs already.
#   down        stops everything by recorded PID and removes what the run created: pod sandboxes,
#               mounts, the bridge, pod network namespaces, KUBE-*/CNI-* iptables chains, kubepods
#               cgroups, the run folder; restores the sysctls. Keeps the binaries and the logs.
#   load-image  imports docker-archive tarballs (podman save --format docker-archive) into
#               containerd's k8s.io namespace; a localhost/NAME:TAG image is also tagged
#               docker.io/library/NAME:TAG, the name a pod spec's plain NAME:TAG is looked up as.
#   env         prints the exports that give a shell kubectl and the cluster (eval "$(… env)").
#   smoke       a quick end-to-end check of a running cluster (Deployment, probe, NodePort, DNS, scale).
# Runs as root. Installs with apt when missing: etcd-server containerd runc containernetworking-plugins
# iptables conntrack ebtables ethtool socat (and gcc for the pause program). Needs Go >= 1.23.
# Ports, all on 127.0.0.1: K8S_API_PORT (6443), K8S_ETCD_PORT (2379), K8S_ETCD_PEER_PORT (2380); also
# the fixed component ports 10248 (kubelet healthz), 10249/10256 (kube-proxy), 10257
# (controller-manager), 10259 (scheduler). The kubelet serves on the bridge address 10.244.0.1:10250.
# Networks: bridge gh-cni0 with pods in 10.244.0.0/24 (gateway 10.244.0.1 is the node IP, and where
# pods reach the apiserver through a socat forwarder); Services in 10.96.0.0/16, DNS at 10.96.0.10.
# Sysctls set while it runs and restored by down: net.ipv4.ip_forward=1 and
# net.bridge.bridge-nf-call-iptables=1 (by this script), net.ipv4.conf.all.route_localnet=1
# (kube-proxy, for NodePorts on 127.0.0.1), vm.overcommit_memory, vm.panic_on_oom, kernel.panic,
# kernel.panic_on_oops, kernel.keys.root_maxkeys/root_maxbytes (kubelet).
# State lives in .cache/k8s/run (removed by down), logs in .cache/k8s/logs (kept).
# Times on 2 vCPU: the first build ~10 min (Kubernetes 8, CoreDNS 2; 6 GB of Go caches in
# .cache/k8s/go, 520 MB of binaries in .cache/k8s/bin); later `up` 10-15 s to CoreDNS Ready; `down`
# 3-5 s. The daemons use about 720 MiB RSS. More in tools/k8s/README.md.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
here="$root/tools/k8s"
# Resolved: mounts are listed by their real path, and .cache may be a symbolic link.
mkdir -p "$root/.cache/k8s"
cache=$(cd -P "$root/.cache/k8s" && pwd)
bin="$cache/bin"
run="$cache/run"
pki="$run/pki"
conf="$run/config"
logs="$cache/logs"
# shellcheck source-path=SCRIPTDIR source=k8s/lib.sh
. "$here/lib.sh"

K8S_API_PORT=${K8S_API_PORT:-6443}
K8S_ETCD_PORT=${K8S_ETCD_PORT:-2379}
K8S_ETCD_PEER_PORT=${K8S_ETCD_PEER_PORT:-2380}
node=gatehouse
bridge=gh-cni0
pod_subnet=10.244.0.0/24
gateway=10.244.0.1
service_cidr=10.96.0.0/16
api_service_ip=10.96.0.1
dns_ip=10.96.0.10
api_url="https://127.0.0.1:$K8S_API_PORT"
sock="$run/containerd/containerd.sock"
# Pods reach each other, Services and this host, never another machine: what a chart under test
# sends elsewhere is refused at once instead of leaving the machine.
isolation_rule=(-s "$pod_subnet" ! -o "$bridge" -m comment --comment "gatehouse k8s-local: pods stay on this machine" -j REJECT)
components=(etcd kube-apiserver apiserver-proxy kube-controller-manager kube-scheduler containerd kubelet kube-proxy)
# What the kubelet and kube-proxy change, besides what this script sets; saved at up, restored at down.
sysctls=(net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables net.ipv4.conf.all.route_localnet
  vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys
  kernel.keys.root_maxbytes)

# Folders outside .cache/k8s that the components create (paths built into them): removed by down
# unless they existed before up.
host_dirs=(/var/lib/kubelet /var/log/containers /var/lib/cni /run/containerd /run/netns)

kubectl() { "$bin/kubectl" --kubeconfig "$pki/admin.kubeconfig" "$@"; }
ctr() { command ctr --address "$sock" -n k8s.io "$@"; }

# ---- processes: one PID file and one log per component ----
pid_of() { cat "$run/pids/$1" 2>/dev/null || true; }
# A process that exited but is not reaped yet (PID 1 here reaps orphans late) counts as gone.
alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
running() { alive "$(pid_of "$1")"; }

spawn() { # name, command...: runs in a session of its own, so it outlives the shell that started it
  local name=$1; shift
  setsid nohup "$@" >>"$logs/$name.log" 2>&1 </dev/null &
  echo $! >"$run/pids/$name"
}

wait_ready() { # name, seconds, check...: polls check until it succeeds; fails if name died meanwhile
  local name=$1 seconds=$2; shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    running "$name" || die "$name exited during start-up; see $logs/$name.log"
    [ $SECONDS -lt $deadline ] || die "$name not ready after ${seconds}s; see $logs/$name.log"
    sleep 0.2
  done
}

stop() { # name: SIGTERM to its process group (socat's forks too), SIGKILL after 15 s
  local pid start; pid=$(pid_of "$1") start=$(now_ms)
  if alive "$pid"; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
    for _ in $(seq 1 150); do alive "$pid" || break; sleep 0.1; done
    if alive "$pid"; then say "$1 did not stop; killing it"; kill -KILL -- "-$pid" 2>/dev/null || true; fi
    say "$1 stopped: $(seconds_since "$start")"
  fi
  rm -f "$run/pids/$1"
}

# ---- up ----
require_root() { [ "$(id -u)" = 0 ] || die "needs root (network, mounts, cgroups)"; }

ensure_packages() {
  apt_install etcd:etcd-server containerd:containerd runc:runc /usr/lib/cni/bridge:containernetworking-plugins \
    iptables:iptables conntrack:conntrack ebtables:ebtables ethtool:ethtool socat:socat curl:curl \
    openssl:openssl ip:iproute2
}

check_ports_free() {
  local port
  for port in "$K8S_API_PORT" "$K8S_ETCD_PORT" "$K8S_ETCD_PEER_PORT" 10248 10249 10250 10256 10257 10259; do
    ! ss -Hltn "sport = :$port" | grep -q . || die "port $port is in use; set K8S_API_PORT/K8S_ETCD_PORT/K8S_ETCD_PEER_PORT or free it"
  done
}

render() { # template, output: fills in the @NAME@ placeholders
  sed -e "s#@RUN@#$run#g" -e "s#@PKI@#$pki#g" -e "s#@NODE@#$node#g" -e "s#@NODE_IP@#$gateway#g" \
    -e "s#@BRIDGE@#$bridge#g" -e "s#@POD_SUBNET@#$pod_subnet#g" -e "s#@GATEWAY@#$gateway#g" \
    -e "s#@DNS_IP@#$dns_ip#g" -e "s#@PAUSE_IMAGE@#$pause_image#g" -e "s#@COREDNS_IMAGE@#$coredns_image#g" \
    -e "s#@SMOKE_IMAGE@#$smoke_image#g" "$1" >"$2"
}

# The chains, network namespaces and cgroups that exist before the run: down removes only newer ones.
record_host_state() {
  local sysctl
  for sysctl in "${sysctls[@]}"; do
    [ -e "/proc/sys/${sysctl//.//}" ] && echo "$sysctl=$(sysctl -n "$sysctl")"
  done >"$run/sysctls.before"
  iptables_chains >"$run/chains.before"
  ls /run/netns 2>/dev/null >"$run/netns.before" || true
  local dir
  for dir in "${host_dirs[@]}"; do [ ! -e "$dir" ] || echo "$dir"; done >"$run/host-dirs.before"
}

# A bridge left by a cluster whose processes are gone (a killed run, a machine whose checkout was
# removed without down) is removed; one whose cluster still runs is another checkout's, left alone.
clear_stale_bridge() {
  ip link show "$bridge" >/dev/null 2>&1 || return 0
  ! pgrep -x 'kubelet|kube-apiserver' >/dev/null ||
    die "bridge $bridge exists and a cluster runs: another checkout's? (its tools/k8s-local.sh down)"
  say "removing bridge $bridge left by a cluster that no longer runs"
  ip link delete "$bridge"
  while iptables -D FORWARD "${isolation_rule[@]}" 2>/dev/null; do :; done
}

prepare() {
  local name
  mkdir -p "$run/pids" "$conf" "$logs" "$cache/client"
  for name in "${components[@]}"; do : >"$logs/$name.log"; done
  ln -sf ../bin/kubectl "$cache/client/kubectl"
  record_host_state
  sysctl -qw net.ipv4.ip_forward=1
  [ ! -e /proc/sys/net/bridge/bridge-nf-call-iptables ] || sysctl -qw net.bridge.bridge-nf-call-iptables=1
  # The bridge exists before the kubelet so its address can be the node IP (the kubelet refuses
  # loopback); the CNI bridge plugin adopts it.
  clear_stale_bridge
  ip link add "$bridge" type bridge
  ip addr add "$gateway/${pod_subnet#*/}" dev "$bridge"
  ip link set "$bridge" up
  iptables -I FORWARD 1 "${isolation_rule[@]}"
  "$here/pki.sh" "$pki" "$node" "$gateway" "$api_url" "$api_service_ip"
  mkdir -p "$run/cni/net.d" "$run/pod-logs" "$run/volume-plugins"
  render "$here/containerd.toml.in" "$conf/containerd.toml"
  render "$here/cni.conflist.in" "$run/cni/net.d/10-gatehouse.conflist"
  render "$here/kubelet.yaml.in" "$conf/kubelet.yaml"
  echo "volumePluginDir: $run/volume-plugins" >>"$conf/kubelet.yaml"
  render "$here/kube-proxy.yaml.in" "$conf/kube-proxy.yaml"
  render "$here/coredns.yaml.in" "$conf/coredns.yaml"
  : >"$run/resolv.conf"
}

https_ok() { curl -fsS --max-time 2 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" "$1"; }

start_etcd() {
  local client="http://127.0.0.1:$K8S_ETCD_PORT" peer="http://127.0.0.1:$K8S_ETCD_PEER_PORT"
  spawn etcd etcd --name "$node" --data-dir "$run/etcd" --listen-client-urls "$client" \
    --advertise-client-urls "$client" --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" \
    --initial-cluster "$node=$peer" --initial-cluster-state new --logger zap --log-outputs stderr --log-level warn
  wait_ready etcd 30 etcd_healthy
}
etcd_healthy() { curl -fsS --max-time 2 "http://127.0.0.1:$K8S_ETCD_PORT/health" | grep -q '"health":"true"'; }

start_apiserver() {
  spawn kube-apiserver "$bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$K8S_ETCD_PORT" \
    --bind-address 127.0.0.1 --secure-port "$K8S_API_PORT" --advertise-address "$gateway" \
    --service-cluster-ip-range "$service_cidr" --allow-privileged=true \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --client-ca-file "$pki/ca.crt" --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$pki/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority "$pki/ca.crt" --kubelet-preferred-address-types InternalIP \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$pki/service-account.pub" \
    --service-account-signing-key-file "$pki/service-account.key" --profiling=false
  wait_ready kube-apiserver 90 https_ok "$api_url/readyz"
  # Pods reach the apiserver (Service 10.96.0.1 → the advertised gateway address) through this
  # forwarder, so the apiserver itself listens on 127.0.0.1 only.
  spawn apiserver-proxy socat "TCP-LISTEN:$K8S_API_PORT,bind=$gateway,reuseaddr,fork" "TCP:127.0.0.1:$K8S_API_PORT"
  wait_ready apiserver-proxy 10 https_ok "https://$gateway:$K8S_API_PORT/readyz"
}

start_controllers() {
  spawn kube-controller-manager "$bin/kube-controller-manager" --kubeconfig "$pki/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$pki/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$pki/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --use-service-account-credentials=true \
    --service-account-private-key-file "$pki/service-account.key" --root-ca-file "$pki/ca.crt" \
    --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
    --service-cluster-ip-range "$service_cidr" --cluster-cidr "$pod_subnet" --allocate-node-cidrs=false \
    --flex-volume-plugin-dir "$run/volume-plugins" --profiling=false
  spawn kube-scheduler "$bin/kube-scheduler" --kubeconfig "$pki/scheduler.kubeconfig" \
    --authentication-kubeconfig "$pki/scheduler.kubeconfig" --authorization-kubeconfig "$pki/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --profiling=false
  wait_ready kube-controller-manager 60 curl -fsSk --max-time 2 https://127.0.0.1:10257/healthz
  wait_ready kube-scheduler 60 curl -fsSk --max-time 2 https://127.0.0.1:10259/healthz
}

start_containerd() {
  spawn containerd containerd --config "$conf/containerd.toml"
  wait_ready containerd 30 ctr version
  # The pause image must be there before the first pod: containerd would try to pull it.
  import_images "$cache/images/pause.tar" "$cache/images/coredns.tar" >/dev/null
}

start_node() {
  spawn kubelet "$bin/kubelet" --config "$conf/kubelet.yaml" --kubeconfig "$pki/kubelet.kubeconfig" \
    --root-dir "$run/kubelet" --hostname-override "$node" --node-ip "$gateway"
  spawn kube-proxy "$bin/kube-proxy" --config "$conf/kube-proxy.yaml"
  wait_ready kubelet 60 node_ready
  wait_ready kube-proxy 30 curl -fsS --max-time 2 http://127.0.0.1:10256/healthz
}
node_ready() {
  [ "$(kubectl get node "$node" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

start_coredns() {
  kubectl apply -f "$conf/coredns.yaml" >/dev/null
  kubectl -n kube-system rollout status deployment/coredns --timeout=120s >/dev/null ||
    die "CoreDNS not ready; see kubectl -n kube-system describe pods, and $logs/kubelet.log"
}

all_running() { local name; for name in "${components[@]}"; do running "$name" || return 1; done; }
any_running() { local name; for name in "${components[@]}"; do running "$name" && return 0; done; return 1; }

up() {
  require_root
  if all_running; then say "already running (kubectl: eval \"\$($0 env)\")"; return; fi
  if any_running || [ -d "$run" ]; then say "cleaning up what an earlier run left"; down; fi
  local start; start=$(now_ms)
  timed "packages" ensure_packages
  timed "binaries and images (tools/k8s/build.sh)" "$here/build.sh" >/dev/null
  check_ports_free
  timed "PKI, configuration, bridge" prepare
  timed "etcd" start_etcd
  timed "kube-apiserver" start_apiserver
  timed "controller-manager, scheduler" start_controllers
  timed "containerd (pause and CoreDNS images imported)" start_containerd
  timed "kubelet, kube-proxy, node Ready" start_node
  timed "CoreDNS Ready" start_coredns
  say "cluster ready in $(seconds_since "$start"); kubectl: eval \"\$($0 env)\""
}

# ---- images ----
# archive...: imports into containerd's k8s.io namespace; prints the names it imported.
import_images() {
  local archive name
  for archive in "$@"; do
    [ -f "$archive" ] || die "no such archive: $archive"
    ctr images import "$archive" >/dev/null
    for name in $(archive_names "$archive"); do
      echo "$name"
      # podman names local images localhost/NAME:TAG; a pod spec's NAME:TAG means docker.io/library/NAME:TAG.
      if [[ $name == localhost/* ]]; then
        local alias=${name#localhost/}
        [[ $alias == */* ]] || alias="library/$alias"
        ctr images tag --force "$name" "docker.io/$alias" >/dev/null
        echo "docker.io/$alias"
      fi
    done
  done
}

archive_names() { # the normalized names a docker-archive's manifest.json tags its image with
  local tag
  for tag in $(tar -xOf "$1" manifest.json | grep -o '"RepoTags":\[[^]]*\]' | grep -o '"[^"]*"' | tr -d '"' |
    grep -v '^RepoTags$'); do
    case $tag in
      */*) [[ ${tag%%/*} == *[.:]* || ${tag%%/*} == localhost ]] && echo "$tag" || echo "docker.io/$tag" ;;
      *) echo "docker.io/library/$tag" ;;
    esac
  done
}

load_image() {
  require_root
  [ $# -gt 0 ] || die "usage: $0 load-image ARCHIVE.tar..."
  running containerd || die "the cluster is not running (tools/k8s-local.sh up)"
  local start name; start=$(now_ms)
  for name in $(import_images "$@"); do say "loaded $name"; done
  say "load-image: $(seconds_since "$start")"
}

# ---- down ----
iptables_chains() { # "command table chain" for every KUBE-*/CNI-* chain, IPv4 and IPv6
  local ipt table
  for ipt in iptables ip6tables; do
    for table in filter nat mangle raw; do
      $ipt-save -t "$table" 2>/dev/null | sed -n "s/^:\(\(KUBE\|CNI\)-[^ ]*\) .*/$ipt $table \1/p"
    done
  done
}

remove_chains() { # the KUBE-*/CNI-* chains that did not exist before up: jumps to them, then them
  local ipt table chain line
  comm -13 <(sort "$run/chains.before" 2>/dev/null) <(iptables_chains | sort) >"$run/chains.ours"
  [ -s "$run/chains.ours" ] || return 0
  for ipt in iptables ip6tables; do
    for table in filter nat mangle raw; do
      local ours; ours=$(sed -n "s/^$ipt $table //p" "$run/chains.ours")
      [ -n "$ours" ] || continue
      { $ipt-save -t "$table" | grep '^-A ' || true; } | while read -r line; do
        for chain in $ours; do
          if [[ " $line " == *" -j $chain "* && $line != "-A $chain "* ]]; then
            eval "$ipt -t $table -D ${line#-A }" 2>/dev/null || true
          fi
        done
      done
      for chain in $ours; do $ipt -t "$table" -F "$chain" 2>/dev/null || true; done
      for chain in $ours; do $ipt -t "$table" -X "$chain" 2>/dev/null || true; done
    done
  done
}

# Container shims outlive containerd; they carry its socket path in their arguments.
kill_shims() {
  local pid
  for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $sock" || true); do kill -KILL "$pid" 2>/dev/null || true; done
}

remove_cgroups() { # the kubepods hierarchy the kubelet made, after killing anything left in it
  local dir
  for dir in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
    [ -d "$dir" ] || continue
    local pid
    while read -r pid; do kill -KILL "$pid" 2>/dev/null || true; done < <(find "$dir" -name cgroup.procs -exec cat {} +)
    find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
}

unmount_run() { # every mount under the run folder, deepest first
  local point
  { awk '{print $5}' /proc/self/mountinfo | grep -F "$run/" || true; } | awk '{print length, $0}' | sort -rn |
    cut -d' ' -f2- | while read -r point; do
      umount "$point" 2>/dev/null || umount -l "$point" 2>/dev/null || true
    done
  # The kubelet bind-mounts its root folder onto itself.
  while awk '{print $5}' /proc/self/mountinfo | grep -qxF "$run/kubelet"; do umount "$run/kubelet" || break; done
}

remove_netns() { # pod network namespaces (containerd names them cni-*) this run made
  local path
  for path in /run/netns/cni-*; do
    [ -e "$path" ] || continue
    grep -qxF "${path#/run/netns/}" "$run/netns.before" 2>/dev/null && continue
    umount "$path" 2>/dev/null || true
    rm -f "$path"
  done
}

restore_sysctls() {
  local pair
  [ -f "$run/sysctls.before" ] || return 0
  while read -r pair; do
    # podman turns forwarding on without turning it off: while other containers' network namespaces
    # exist, switching it off would cut them off.
    if [ "$pair" = net.ipv4.ip_forward=0 ] && [ -n "$(ls -A /run/netns 2>/dev/null)" ]; then
      say "leaving net.ipv4.ip_forward=1: other containers' network namespaces exist (/run/netns)"
      continue
    fi
    sysctl -qw "$pair" || say "could not restore $pair"
  done <"$run/sysctls.before"
}

# What the kubelet, libcni and the shims write outside the run folder: the folders the run created go
# entirely; in folders that were there before, only this run's files.
remove_host_leftovers() {
  local dir link id
  for link in /var/log/containers/*; do
    [ -L "$link" ] && [[ $(readlink "$link") == "$run/"* ]] && rm -f "$link"
  done
  for link in /var/lib/cni/results/gatehouse-k8s-*-eth0; do
    [ -e "$link" ] || continue
    id=${link#/var/lib/cni/results/gatehouse-k8s-}
    rm -f "$link" "/var/lib/cni/results/cni-loopback-${id%-eth0}-lo"
  done
  for dir in "${host_dirs[@]}"; do
    grep -qxF "$dir" "$run/host-dirs.before" 2>/dev/null && continue
    if [ "$dir" = /run/netns ]; then rmdir "$dir" 2>/dev/null || true; else rm -rf "$dir"; fi
  done
}

down() {
  require_root
  local start; start=$(now_ms)
  [ -d "$run" ] || { say "not running"; return; }
  stop kubelet
  if running containerd; then
    timed "pod sandboxes removed" timeout 90 "$bin/cri-clean" "unix://$sock" >/dev/null || say "cri-clean failed"
  fi
  stop containerd
  kill_shims
  local name
  for name in kube-proxy kube-scheduler kube-controller-manager apiserver-proxy kube-apiserver etcd; do stop "$name"; done
  remove_cgroups
  unmount_run
  remove_netns
  ! ip link show "$bridge" >/dev/null 2>&1 || ip link delete "$bridge"
  while iptables -D FORWARD "${isolation_rule[@]}" 2>/dev/null; do :; done
  remove_chains
  restore_sysctls
  remove_host_leftovers
  rm -rf "$run"
  say "down in $(seconds_since "$start")"
}

# ---- status, env, smoke ----
status() {
  local name
  for name in "${components[@]}"; do
    if running "$name"; then echo "$name: running (pid $(pid_of "$name"))"; else echo "$name: stopped"; fi
  done
  if running kube-apiserver; then kubectl get nodes -o wide 2>/dev/null || true; fi
}

print_env() {
  echo "export KUBECONFIG=$pki/admin.kubeconfig"
  echo "export PATH=$cache/client:\$PATH"
}

smoke() {
  running kube-apiserver || die "the cluster is not running (tools/k8s-local.sh up)"
  "$here/smoke.sh" "$bin/kubectl" "$pki/admin.kubeconfig" "$cache/images/smoke.tar" "$0"
}

cmd=${1:-status}; shift || true
case "$cmd" in
  up) up ;;
  down) down ;;
  status) status ;;
  env) print_env ;;
  load-image) load_image "$@" ;;
  smoke) smoke ;;
  *) die "usage: $0 up|down|status|env|smoke|load-image ARCHIVE.tar..." ;;
esac
