#!/usr/bin/env bash
# The build cache outside the clone: what the long builds and downloads produce (Node and pnpm,
# Kubernetes, Jaeger, nats-server, Zipkin, helm and the chart tools, Kafka's jars, the schema registry, the
# Python fuzzer, the benchmark peers, the debootstrapped Debian base image and the stand-in images
# as built) lives in GATEHOUSE_BUILD_CACHE, and the clone's .cache/<folder> is a symbolic link to
# it. A fresh clone on the same machine so finds them built.
#
# The cache is keyed by content: each build already writes beside its output a stamp of what
# determines it (the module versions, go.mod/go.sum hashes, the pinned versions), and rebuilds when
# the stamp differs, so a change of those files rebuilds in the cache and a clone of an older commit
# rebuilds back. An empty cache (a fresh machine) builds everything, as before. A clone whose
# .cache/<folder> is already a real folder keeps it (it is moved into the cache only when the cache
# has none). Two clones building at the same moment share one folder: run them one after the other.
#
# Usage: tools/build-cache.sh [link|path|--help]
#   link   make each cached folder of .cache/ a link into the cache (the default; quiet)
#   path   print the cache's folder
# GATEHOUSE_BUILD_CACHE  the cache's folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/gatehouse-builds);
#                        `none` keeps everything inside the clone's .cache/.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
store=${GATEHOUSE_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gatehouse-builds}
# The folders of .cache/ that hold builds and downloads only (never state of a run), and the test
# files' times of the last run (which to start first, tools/run-tests.ts).
cached=(test-times node pnpm traces nats zipkin chart-tools kafka schema-registry schemathesis centrifugo mercury k8s/bin k8s/images
  images/debian images/saved)

link() {
  [ "$store" != none ] || return 0
  mkdir -p "$store" "$root/.cache"
  local folder target
  for folder in "${cached[@]}"; do
    target="$store/${folder//\//-}"
    [ -L "$root/.cache/$folder" ] && [ "$(readlink "$root/.cache/$folder")" = "$target" ] && continue
    mkdir -p "$(dirname "$root/.cache/$folder")"
    if [ -d "$root/.cache/$folder" ] && [ ! -L "$root/.cache/$folder" ]; then
      # A clone that built before the cache existed: its build seeds the cache, or stays its own.
      [ -e "$target" ] && continue
      mv "$root/.cache/$folder" "$target"
    fi
    mkdir -p "$target"
    rm -f "$root/.cache/$folder"
    ln -s "$target" "$root/.cache/$folder"
  done
}

case "${1:-link}" in
  link) link ;;
  path) echo "$store" ;;
  *) echo "usage: $0 [link|path|--help]" >&2; exit 2 ;;
esac
