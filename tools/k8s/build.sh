#!/usr/bin/env bash
# Builds, once, what tools/k8s-local.sh runs, into .cache/k8s/bin/ and .cache/k8s/images/:
# - kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy and kubectl
#   v1.32.13 from the module tools/k8s (go.mod pins every staging module), with the version
#   ldflags a release build sets (without them every component reports v0.0.0-master and chart
#   kubeVersion checks fail);
# - CoreDNS v1.12.0 (go install), the static C pause program (tools/k8s/pause.c), and the module's
#   own helpers cri-clean (used by `down`) and smoke (the smoke test's server);
# - docker-archive images of pause, CoreDNS and smoke, each just its static binary.
# A stamp file per binary holds the version (or source hash) it was built from; a later run only
# compares stamps. Go's module and build caches live in .cache/k8s/go. Needs Go >= 1.23 and gcc.
# Usage: tools/k8s/build.sh; prints the bin directory.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache="$root/.cache/k8s"
bin="$cache/bin"
images="$cache/images"
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

export GOMODCACHE="$cache/go/mod" GOCACHE="$cache/go/build" GOPATH="$cache/go/path" GOBIN="$bin"
export GOTOOLCHAIN=local GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0
command -v go >/dev/null || PATH="/usr/local/go/bin:$PATH"
mkdir -p "$bin" "$images"

kubernetes_components=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)
outputs_of() { if [ "$1" = kubernetes ]; then echo "${kubernetes_components[@]}"; else echo "$1"; fi; }
fresh() {
  local file
  for file in $(outputs_of "$1"); do [ -x "$bin/$file" ] || return 1; done
  [ "$(cat "$bin/.$1.version" 2>/dev/null)" = "$2" ]
}
stamp() { echo "$2" >"$bin/.$1.version"; }
hash_of() { cat "$@" | sha256sum | cut -c1-16; }
# Builds $1 with the command that follows unless its stamp says version $2 is there already.
ensure() {
  local name=$1 version=$2; shift 2
  fresh "$name" "$version" && return
  command -v go >/dev/null || die "Go >= 1.23 is needed to build $name (not in PATH or /usr/local/go/bin)"
  timed "built $name" "$@"
  stamp "$name" "$version"
}

build_kubernetes() {
  local flags="-s -w" pkg packages=()
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=32 -X $pkg.gitTreeState=clean"
  done
  for pkg in "${kubernetes_components[@]}"; do packages+=("k8s.io/kubernetes/cmd/$pkg"); done
  # One go build for all six compiles the packages they share once.
  go -C "$here" build -trimpath -ldflags "$flags" -o "$bin/" "${packages[@]}"
  for pkg in "${kubernetes_components[@]}"; do [ -x "$bin/$pkg" ] || die "go build did not write $pkg"; done
}

build_coredns() {
  go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@$coredns_version"
}

build_pause() {
  apt_install gcc:gcc
  gcc -Os -Wall -Werror -static -s -o "$bin/pause" "$here/pause.c"
}

build_local() { go -C "$here" build -trimpath -ldflags "-s -w" -o "$bin/$1" "./$1"; }

# image name, binary: a docker-archive image whose root holds just the binary, its entrypoint.
build_image() {
  local name=$1 binary=$2 rootfs
  rootfs=$(mktemp -d)
  cp "$bin/$binary" "$rootfs/$binary"
  "$here/image-archive.sh" "$name" "$rootfs" "$images/$binary.tar" "/$binary"
  rm -rf "$rootfs"
}
ensure_image() { # name, binary: rebuilt when the binary's stamp or the image name changes
  local version
  version="$1 $(cat "$bin/.$2.version")"
  [ -f "$images/$2.tar" ] && [ "$(cat "$images/.$2.version" 2>/dev/null)" = "$version" ] && return
  build_image "$1" "$2"
  echo "$version" >"$images/.$2.version"
}

ensure kubernetes "$k8s_version $(hash_of "$here/go.mod" "$here/go.sum")" build_kubernetes
ensure coredns "$coredns_version" build_coredns
ensure pause "$(hash_of "$here/pause.c")" build_pause
ensure cri-clean "$(hash_of "$here/cri-clean/main.go" "$here/go.sum")" build_local cri-clean
ensure smoke "$(hash_of "$here/smoke/main.go")" build_local smoke
ensure_image "$pause_image" pause
ensure_image "$coredns_image" coredns
ensure_image "$smoke_image" smoke
echo "$bin"
