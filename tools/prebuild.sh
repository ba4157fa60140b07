#!/usr/bin/env bash
# The long Go builds of a first `make test` (nats-server for the NATS of the tests, about 2 minutes
# on two cores; Jaeger for the trace backend, about 8; Kubernetes for the local cluster, about 11),
# started in the background at the lowest CPU and I/O priority when the run begins, so they use
# what the early stages (lint, typecheck, chart checks, fuzzing, the compose stack) leave idle
# instead of each holding up its own stage.
# The stage that needs a build waits for that one first (`wait nats`, `wait jaeger`, `wait
# kubernetes`); a build that failed in the background is made again, in the foreground, by the stage
# itself (tools/deps.sh, tools/k8s-local.sh), which then reports the error. Built once, they are
# only stamp checks (a second or two).
#
# Usage: tools/prebuild.sh start [nats] jaeger [kubernetes] | wait nats|jaeger|kubernetes | stop
#   start  starts the named builds in the background, in that order (a session of their own); log
#          and exit codes in .cache/prebuild/
#   wait   waits until that build is done and says how it went (exit 0 either way)
#   stop   stops them (the CI script's clean-up on the way out)
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Where the log and exit codes go, and the build commands: overridden by tools/test/prebuild.test.ts.
dir=${PREBUILD_DIR:-"$root/.cache/prebuild"}
export PREBUILD_NATS=${PREBUILD_NATS:-"$root/tools/deps.sh nats-bin"}
export PREBUILD_JAEGER=${PREBUILD_JAEGER:-"$root/tools/deps.sh jaeger-bin"}
export PREBUILD_KUBERNETES=${PREBUILD_KUBERNETES:-"$root/tools/k8s/build.sh"}
pidfile="$dir/pid"
say() { echo "prebuild: $*"; }

running() { local pid; pid=$(cat "$pidfile" 2>/dev/null) && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }

start() {
  local name
  for name in "$@"; do
    [[ $name = nats || $name = jaeger || $name = kubernetes ]] ||
      { echo "usage: $0 start [nats] jaeger [kubernetes]" >&2; exit 2; }
  done
  mkdir -p "$dir"
  if running; then say "already running (pid $(cat "$pidfile"))"; return; fi
  rm -f "$dir"/*.exit
  # In the order given: nats and Jaeger first, since the dependencies stage comes before the cluster's.
  setsid nice -n 19 ionice -c 3 bash -c '
    dir=$1; shift
    start=$SECONDS
    for name in "$@"; do
      case $name in
        nats) $PREBUILD_NATS ;;
        jaeger) $PREBUILD_JAEGER ;;
        kubernetes) $PREBUILD_KUBERNETES ;;
      esac
      echo "$? $((SECONDS - start))" >"$dir/$name.exit"
    done
  ' prebuild "$dir" "$@" >"$dir/log" 2>&1 </dev/null &
  echo $! >"$pidfile"
  say "building $* in the background (pid $!, log $dir/log)"
}

wait_done() {
  local name=$1 t=$SECONDS status seconds
  [ -f "$pidfile" ] || return 0
  while [ ! -f "$dir/$name.exit" ] && running; do sleep 2; done
  read -r status seconds <"$dir/$name.exit" 2>/dev/null || { status="none (the background job ended first)"; seconds=?; }
  if [ "$status" = 0 ]; then
    say "$name built in the background ${seconds}s after the start (waited $((SECONDS - t))s for it)"
  else
    say "$name: the background build failed (exit $status, waited $((SECONDS - t))s); the stage builds it again. Log tail:"
    tail -n 20 "$dir/log"
  fi
}

stop() {
  running && kill -TERM -- "-$(cat "$pidfile")" 2>/dev/null
  rm -f "$pidfile"
  return 0
}

case "${1:-}" in
  start) shift; start "$@" ;;
  wait) [[ "${2:-}" = nats || "${2:-}" = jaeger || "${2:-}" = kubernetes ]] ||
      { echo "usage: $0 wait nats|jaeger|kubernetes" >&2; exit 2; }
    wait_done "$2" ;;
  stop) stop ;;
  *) echo "usage: $0 start|wait nats|jaeger|kubernetes|stop" >&2; exit 2 ;;
esac
