#!/usr/bin/env bash
# Writes a one-layer image as a docker-archive tarball (the format of `podman save --format
# docker-archive`, which `ctr images import` reads) from a folder that is the image's whole root
# file system. Nothing is pulled and no image store is touched, so images of static binaries need
# no base image and no podman.
# Usage: tools/k8s/image-archive.sh NAME:TAG ROOTFS-DIR OUT.tar ENTRYPOINT [ARG...]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 NAME:TAG ROOTFS-DIR OUT.tar ENTRYPOINT [ARG...]" >&2; exit 2; }
name=$1 rootfs=$2 out=$3
shift 3

json_string() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; printf '"%s"' "$s"; }
json_array() {
  local first=1 item
  printf '['
  for item in "$@"; do [ $first = 1 ] || printf ','; first=0; json_string "$item"; done
  printf ']'
}
sha256() { sha256sum "$1" | cut -d' ' -f1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Reproducible layer: sorted names, root owner, fixed times, so the same files give the same image ID.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$rootfs" -cf "$work/layer.tar" .
layer=$(sha256 "$work/layer.tar")
mkdir "$work/$layer"
mv "$work/layer.tar" "$work/$layer/layer.tar"
arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
printf '{"architecture":"%s","os":"linux","config":{"Entrypoint":%s,"Env":["PATH=/"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
  "$arch" "$(json_array "$@")" "$layer" >"$work/config.json"
config=$(sha256 "$work/config.json")
mv "$work/config.json" "$work/$config.json"
printf '[{"Config":"%s.json","RepoTags":[%s],"Layers":["%s/layer.tar"]}]' "$config" "$(json_string "$name")" "$layer" \
  >"$work/manifest.json"
tar --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$work" -cf "$out.tmp" manifest.json "$config.json" "$layer/layer.tar"
mv "$out.tmp" "$out"
