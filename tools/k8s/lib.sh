# shellcheck shell=bash disable=SC2034 # the names below are used by the scripts that source this
# Helpers shared by tools/k8s-local.sh, tools/k8s/build.sh and tools/k8s/smoke.sh (sourced, not run).
say() { echo "k8s: $*" >&2; }
die() { say "$*"; exit 1; }

now_ms() { echo $(($(date +%s%N) / 1000000)); }
seconds_since() { # start in ms → "1.23s"
  local ms=$(($(now_ms) - $1))
  printf '%d.%02ds' $((ms / 1000)) $((ms % 1000 / 10))
}
timed() { # name, command...: runs it and says how long it took
  local name=$1 start; start=$(now_ms); shift
  "$@"
  say "$name: $(seconds_since "$start")"
}

# Installs the Debian packages whose command is missing; arguments are command:package pairs.
apt_install() {
  local missing=() pair
  for pair in "$@"; do command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}"); done
  [ ${#missing[@]} -eq 0 ] && return
  say "installing ${missing[*]} with apt"
  compgen -G '/var/lib/apt/lists/*_Packages' >/dev/null || apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Versions and the names of the images build.sh writes; the pod specs and containerd's
# sandbox_image use these names, and imagePullPolicy Never, so nothing is ever pulled.
k8s_version=v1.32.13
coredns_version=v1.12.0
pause_image=gatehouse.local/k8s/pause:1
coredns_image=gatehouse.local/k8s/coredns:$coredns_version
smoke_image=gatehouse.local/k8s/smoke:1
