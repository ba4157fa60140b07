#!/usr/bin/env bash
# Runs a stage beside the next ones instead of before them: `make test` runs the deployment stages
# (the compose stack, then the Helm release), which mostly wait on containers and a cluster, beside
# the node tests, which keep both cores busy. They start at a lower CPU priority (BESIDE_NICE,
# default 10), so the node tests, the longest stage, lose little; the deployment stages have time
# to spare. Their output goes to a log and is printed whole when waited for, so it never
# interleaves with the test runner's.
#
# Usage: tools/beside.sh start NAME COMMAND… | wait NAME | stop
#   start  runs COMMAND in the background in a session of its own; log and exit code in
#          .cache/beside/ (BESIDE_DIR)
#   wait   waits until NAME is done, prints its log, and exits with its exit code (1 when it was
#          never started or ended without one)
#   stop   stops everything still running (the CI script's clean-up on the way out)
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${BESIDE_DIR:-"$root/.cache/beside"}
say() { echo "beside: $*"; }
usage() { echo "usage: $0 start NAME COMMAND… | wait NAME | stop" >&2; exit 2; }

running() { local pid; pid=$(cat "$dir/$1.pid" 2>/dev/null) && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }

start() {
  local name=$1; shift
  [ $# -gt 0 ] || usage
  mkdir -p "$dir"
  if running "$name"; then say "$name is already running"; return 1; fi
  rm -f "$dir/$name.exit" "$dir/$name.log"
  # BESIDE names the stage for tools/timed.sh (the CI table marks the stages that ran beside others).
  BESIDE=$name setsid nice -n "${BESIDE_NICE:-10}" bash -c '
    exit_file=$1; shift
    start=$SECONDS
    "$@"
    echo "$? $((SECONDS - start))" >"$exit_file"
  ' beside "$dir/$name.exit" "$@" >"$dir/$name.log" 2>&1 </dev/null &
  echo $! >"$dir/$name.pid"
  say "$name runs beside the next stages (pid $!, log $dir/$name.log)"
}

wait_done() {
  local name=$1 t=$SECONDS status seconds
  [ -f "$dir/$name.pid" ] || { say "$name was never started"; return 1; }
  while [ ! -f "$dir/$name.exit" ] && running "$name"; do sleep 2; done
  echo "== $name (ran beside the stages above; its output follows)"
  cat "$dir/$name.log"
  rm -f "$dir/$name.pid"
  read -r status seconds <"$dir/$name.exit" 2>/dev/null || { say "$name ended without an exit code"; return 1; }
  say "$name: exit $status after ${seconds}s (waited $((SECONDS - t))s for it)"
  return "$status"
}

stop() {
  local pidfile
  for pidfile in "$dir"/*.pid; do
    [ -f "$pidfile" ] || continue
    kill -TERM -- "-$(cat "$pidfile")" 2>/dev/null
    rm -f "$pidfile"
  done
  return 0
}

case "${1:-}" in
  start) [ $# -ge 3 ] || usage; shift; start "$@" ;;
  wait) [ $# -eq 2 ] || usage; wait_done "$2" ;;
  stop) stop ;;
  *) usage ;;
esac
