#!/usr/bin/env bash
# Runs one stage of a longer run and says how long it took:
# `tools/timed.sh [--limit SECONDS] <stage> <command...>`.
# Prints `== <stage>` before and `== <stage>: ok|failed (exit N) in Ns` after; keeps the exit code.
# With --limit, a stage still running when its limit is out is ended, with everything it started in
# its process group (SIGTERM, SIGKILL 20 s later), and fails with exit 124: a hung stage then fails
# where it hung, with time left for the run to say why, instead of the run being cut off at its wall.
# With CI_REPORT_DIR set, also appends `<stage>\t<seconds>\t<exit code>\t<beside>` to its stages.tsv
# (the table .ci/run prints at the end, tools/ci-report.ts); <beside> names the background job the
# stage ran in (BESIDE, set by tools/beside.sh), empty for a stage that ran on its own.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -uo pipefail
limit=
if [ "${1:-}" = --limit ]; then
  limit=$2; shift 2
  [[ $limit =~ ^[1-9][0-9]*$ ]] || { echo "timed.sh: --limit takes whole seconds, not '$limit'" >&2; exit 2; }
fi
stage=$1; shift
echo "== $stage"
start=$SECONDS
if [ -n "$limit" ]; then
  # `timeout` puts the stage in a process group of its own and signals the whole group. That group
  # is not the terminal's, so an interrupt of this script is passed on to it.
  timeout --kill-after=20 "$limit" "$@" &
  stage_pid=$!
  trap 'kill -TERM "$stage_pid" 2>/dev/null' INT TERM
  wait "$stage_pid"
  status=$?
  # A trapped signal ends `wait` early; the stage's own exit code comes once it has stopped.
  while kill -0 "$stage_pid" 2>/dev/null; do wait "$stage_pid"; status=$?; done
  trap - INT TERM
else
  "$@"
  status=$?
fi
outcome=ok; [ $status -eq 0 ] || outcome="failed (exit $status)"
if [ -n "$limit" ] && [ $((SECONDS - start)) -ge "$limit" ] && { [ $status -eq 124 ] || [ $status -eq 137 ]; }; then
  status=124 outcome="timed out (its limit is ${limit}s)"
fi
echo "== $stage: $outcome in $((SECONDS - start))s"
[ -z "${CI_REPORT_DIR:-}" ] || printf '%s\t%s\t%s\t%s\n' "$stage" "$((SECONDS - start))" "$status" "${BESIDE:-}" >>"$CI_REPORT_DIR/stages.tsv"
exit $status
