#!/usr/bin/env bash
# Installs the peer hubs the push-hub benchmark runs side by side with Gatehouse, idempotently:
#   Nchan and Pushpin (Debian packages libnginx-mod-nchan, pushpin; wrk for the HTTP benchmarks)
#   and Centrifugo v6 (built once from the Go module proxy into .cache/centrifugo/bin).
# Usage: tools/bench-peers.sh [install|path]   path: prints the Centrifugo binary (installs it first)
# Needs Go (PATH or /usr/local/go/bin). CENTRIFUGO_VERSION overrides the module version (v6.9.1).
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache="$root/.cache/centrifugo"
version=${CENTRIFUGO_VERSION:-v6.9.1}
bin="$cache/bin/centrifugo"

say() { echo "bench-peers: $*" >&2; }
die() { say "$*"; exit 1; }

apt_peers() {
  local missing=()
  [ -f /usr/lib/nginx/modules/ngx_nchan_module.so ] || missing+=(libnginx-mod-nchan)
  command -v pushpin >/dev/null || missing+=(pushpin)
  command -v wrk >/dev/null || missing+=(wrk)
  [ ${#missing[@]} -eq 0 ] && return
  local start=$SECONDS
  say "installing ${missing[*]} with apt"
  if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v lock)" ]; then apt-get update -qq; fi
  # policy-rc.d or not, the packages' own services are not wanted: the benchmark starts its own.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  say "apt done in $((SECONDS - start))s"
}

centrifugo() {
  # `go install` leaves the release version unset unless given by -ldflags, as upstream's CI does.
  if [ -x "$bin" ] && "$bin" version 2>/dev/null | grep -q "v${version#v} "; then return; fi
  local go; go=$(command -v go || echo /usr/local/go/bin/go)
  [ -x "$go" ] || die "Go is needed to build Centrifugo (not found on PATH or at /usr/local/go/bin)"
  local start=$SECONDS
  say "building centrifugo $version (a few minutes on 2 CPUs)"
  mkdir -p "$cache/bin"
  GOBIN="$cache/bin" GOPATH="$cache/gopath" GOCACHE="$cache/gocache" GOFLAGS=-modcacherw \
    nice "$go" install -ldflags "-X github.com/centrifugal/centrifugo/v6/internal/build.Version=${version#v}" \
    "github.com/centrifugal/centrifugo/v6@$version"
  say "centrifugo built in $((SECONDS - start))s"
}

case "${1:-install}" in
  install) apt_peers; centrifugo ;;
  path) centrifugo; echo "$bin" ;;
  *) die "usage: tools/bench-peers.sh [install|path]" ;;
esac
