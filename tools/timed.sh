#!/usr/bin/env bash
# Runs one stage of a longer run and says how long it took: `tools/timed.sh <stage> <command...>`.
# Prints `== <stage>` before and `== <stage>: ok|failed (exit N) in Ns` after; keeps the exit code.
# With CI_REPORT_DIR set, also appends `<stage>\t<seconds>\t<exit code>\t<beside>` to its stages.tsv
# (the table .ci/run prints at the end, tools/ci-report.ts); <beside> names the background job the
# stage ran in (BESIDE, set by tools/beside.sh), empty for a stage that ran on its own.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -uo pipefail
stage=$1; shift
echo "== $stage"
start=$SECONDS
"$@"
status=$?
outcome=ok; [ $status -eq 0 ] || outcome="failed (exit $status)"
echo "== $stage: $outcome in $((SECONDS - start))s"
[ -z "${CI_REPORT_DIR:-}" ] || printf '%s\t%s\t%s\t%s\n' "$stage" "$((SECONDS - start))" "$status" "${BESIDE:-}" >>"$CI_REPORT_DIR/stages.tsv"
exit $status
