#!/usr/bin/env bash
# Runs one stage of a longer run and says how long it took: `tools/timed.sh <stage> <command...>`.
# Prints `== <stage>` before and `== <stage>: ok|failed (exit N) in Ns` after; keeps the exit code.
set -uo pipefail
stage=$1; shift
echo "== $stage"
start=$SECONDS
"$@"
status=$?
outcome=ok; [ $status -eq 0 ] || outcome="failed (exit $status)"
echo "== $stage: $outcome in $((SECONDS - start))s"
exit $status
