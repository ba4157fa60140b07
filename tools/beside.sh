#!/usr/bin/env bash
# Runs a stage beside the next ones instead of before them: `make test` runs the deployment stages
# (the compose stack, then the Helm release), which mostly wait on containers and a cluster, beside
# the node tests, which keep both cores busy. They start at a lower CPU priority (BESIDE_NICE,
# default 10), so the node tests, the longest stage, lose little; the deployment stages have time
# to spare. Their output goes to a log, printed when waited for (as it comes from then on), so it
# never interleaves with the test runner's.
#
# Usage: tools/beside.sh start NAME COMMAND… | wait NAME | stop
#   start  runs COMMAND in the background in a session of its own; log and exit code in
#          .cache/beside/ (BESIDE_DIR); BESIDE_LIMIT (seconds, default 3600) bounds it
#   wait   waits until NAME is done, printing its log, and exits with its exit code (1 when it was
#          never started or ended without one); one still running when its limit is out is
#          stopped, and the wait fails with 124
#   stop   stops everything still running, all of each one's session (the CI script's clean-up on
#          the way out)
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
  [[ ${BESIDE_LIMIT:-3600} =~ ^[1-9][0-9]*$ ]] || { say "BESIDE_LIMIT takes whole seconds, not '$BESIDE_LIMIT'"; return 2; }
  rm -f "$dir/$name.exit" "$dir/$name.log"
  echo "$(date +%s) ${BESIDE_LIMIT:-3600}" >"$dir/$name.limit"
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
  local name=$1 t=$SECONDS status seconds began limit printed=0
  [ -f "$dir/$name.pid" ] || { say "$name was never started"; return 1; }
  read -r began limit <"$dir/$name.limit" 2>/dev/null || { began=$(date +%s) limit=3600; }
  echo "== $name (ran beside the stages above; its output follows)"
  while [ ! -f "$dir/$name.exit" ] && running "$name"; do
    print_new
    if [ $(($(date +%s) - began)) -ge "$limit" ]; then
      stop_session "$(cat "$dir/$name.pid")"
      print_new
      rm -f "$dir/$name.pid"
      say "$name outlived its limit of ${limit}s: stopped (BESIDE_LIMIT)"
      return 124
    fi
    sleep 2
  done
  print_new
  rm -f "$dir/$name.pid"
  read -r status seconds <"$dir/$name.exit" 2>/dev/null || { say "$name ended without an exit code"; return 1; }
  say "$name: exit $status after ${seconds}s (waited $((SECONDS - t))s for it)"
  return "$status"
}

# The part of the log not printed yet (wait_done's `printed`).
print_new() {
  local size; size=$(stat -c %s "$dir/$name.log" 2>/dev/null || echo 0)
  [ "$size" -gt "$printed" ] || return 0
  tail -c +$((printed + 1)) "$dir/$name.log" | head -c $((size - printed))
  printed=$size
}

# Every process of the session, process groups of its own inside it included (a `timeout` makes
# one): TERM, then KILL what is left after 10 s.
stop_session() {
  local sid=$1 i
  pkill -TERM -s "$sid" 2>/dev/null
  for i in $(seq 50); do pgrep -s "$sid" >/dev/null || return 0; sleep 0.2; done
  pkill -KILL -s "$sid" 2>/dev/null
  return 0
}

stop() {
  local pidfile
  for pidfile in "$dir"/*.pid; do
    [ -f "$pidfile" ] || continue
    stop_session "$(cat "$pidfile")"
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
