#!/usr/bin/env bash
# Fuzzes both HTTP surfaces with schemathesis against their own OpenAPI documents, at the same time, each against an
# embedded runner (memory bus and store) of its own on free ports:
# - the internal API, from its /swagger.json;
# - the public edge, from its /_gw/v1/openapi.json (settings below: short long-poll windows, a JWT
#   key, a secured proxy route).
# Each run sends every operation of its document a bounded number of examples and fails on a 5xx,
# a status, content type, header or body the document does not describe, a method it does not list
# answered other than 405, a request with no answer within the request time-out (a hang), an error
# logged by the runner, or a runner that died. The runner is stopped by its PID (SIGTERM, then it
# must exit 0). For the public edge it also reports the runner's resident memory before the run and
# after it has settled, and fails when it has not come back within RSS_TOLERANCE_PERCENT.
#
# schemathesis (PyPI, pinned below) is installed once into .cache/schemathesis, a venv of the
# system's python3; later runs only compare its version.
#
# Usage: tools/fuzz-api.sh [internal|public]...   (default: both)
#   FUZZ_EXAMPLES  examples per operation and phase (default 25 for the internal API, 80 for the
#                  public edge: about 1 minute each on 2 loaded cores)
#   FUZZ_SEED      a seed printed by an earlier run, to replay it
#   RSS_TOLERANCE_PERCENT  how far above its level before the run the public edge runner's RSS may
#                  stay (default 10)
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Its real path (.cache/schemathesis may link into the build cache, tools/build-cache.sh): a venv's
# scripts name their python by the path it was made at, so it must be one every clone reaches.
venv=$(cd -P "$root/.cache/schemathesis" 2>/dev/null && pwd || echo "$root/.cache/schemathesis")
work="$root/.cache/fuzz"
schemathesis_version=4.32.5
rss_tolerance_percent=${RSS_TOLERANCE_PERCENT:-10}

say() { echo "fuzz-api: $*" >&2; }
die() { say "$*"; exit 1; }

install_schemathesis() {
  if [ "$("$venv/bin/schemathesis" --version 2>/dev/null)" = "schemathesis, version $schemathesis_version" ]; then
    return
  fi
  say "installing schemathesis $schemathesis_version into .cache/schemathesis"
  rm -rf "$venv"
  python3 -m venv "$venv" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$schemathesis_version"
}

runner_pid=""
stop_runner() { # SIGTERM by PID; the runner must exit 0 (a clean shutdown) within 30 s
  [ -n "$runner_pid" ] || return 0
  local pid=$runner_pid status=0
  runner_pid=""
  kill -TERM "$pid" 2>/dev/null || return 1
  for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null || true
    say "the runner did not stop within 30 s of SIGTERM"
    return 1
  fi
  wait "$pid" || status=$?
  [ "$status" -eq 0 ] || { say "the runner exited $status on SIGTERM"; return 1; }
}
trap 'stop_runner || true' EXIT

# The embedded runner on ports the kernel picks, with `make run`'s node options and the settings
# given as arguments (NAME=value); its "listening" log line names the ports. Sets runner_pid,
# public_port and api_port.
start_runner() {
  log="$work/$surface-runner.log"
  : >"$log"
  (cd "$root" && exec env INBOUND_PORT=0 API_PORT=0 REST_SERVER_PORT=0 HOST=127.0.0.1 LOG_LEVEL=info "$@" \
    node --max-semi-space-size=8 embedded/src/main.ts >>"$log" 2>&1) &
  runner_pid=$!
  local ports
  for _ in $(seq 300); do
    ports=$(python3 - "$log" <<'PY'
import json, sys
for line in open(sys.argv[1], errors="replace"):
    try:
        entry = json.loads(line)
    except ValueError:
        continue
    if entry.get("msg") == "listening" and entry.get("apiPort"):
        print(entry["publicPort"], entry["apiPort"])
        break
PY
)
    if [ -n "$ports" ]; then
      read -r public_port api_port <<<"$ports"
      return
    fi
    kill -0 "$runner_pid" 2>/dev/null || { cat "$log" >&2; die "the runner exited at start"; }
    sleep 0.1
  done
  die "the runner did not listen within 30 s"
}

# Lines the runner logged at level error (50) or above, pino's JSON lines.
runner_errors() {
  python3 - "$log" <<'PY'
import json, sys
for line in open(sys.argv[1], errors="replace"):
    try:
        entry = json.loads(line)
    except ValueError:
        continue
    if isinstance(entry, dict) and entry.get("level", 0) >= 50:
        print(line.rstrip()[:2000])
PY
}

only_known_tool_errors() {
  python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
failures = root.findall(".//failure")
errors = root.findall(".//error")
known = "AST constructor recursion depth mismatch"
sys.exit(0 if not failures and errors and all(known in (e.text or "") + (e.get("message") or "") for e in errors) else 1)
PY
}

rss_kib() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$runner_pid/status"; }

# The checks of the document's truth. Not positive_data_acceptance / negative_data_rejection: a
# document cannot express every rule the services apply (a path_regex that compiles, a body id
# equal to the path's, BLACKLIST_MAX_VALIDITY, a correlation id the proxy issued, a constraint on a
# field the extractor configuration defines, a connection token the hub issued).
checks=not_a_server_error,status_code_conformance,content_type_conformance
checks+=,response_headers_conformance,response_schema_conformance,unsupported_method
checks+=,missing_required_header,allow_header_conformance

# schemathesis against a document; its output goes to .cache/fuzz/<surface>-schemathesis.txt.
# Sets `status` (non-zero: a check failed) and `cases`.
run_schemathesis() {
  local examples=$1 document=$2 base=$3
  shift 3
  local junit="$work/$surface-junit.xml" out="$work/$surface-schemathesis.txt" start=$SECONDS
  local config=()
  [ ! -f "$root/tools/fuzz-$surface.toml" ] || config=(--config-file "$root/tools/fuzz-$surface.toml")
  status=0
  # From a folder per surface: schemathesis keeps its own state (.schemathesis/) in the working
  # directory, and the two surfaces run at the same time.
  mkdir -p "$work/$surface-state"
  (cd "$work/$surface-state" && NO_COLOR=1 "$venv/bin/schemathesis" "${config[@]}" run "$document" --url "$base" --checks "$checks" \
    --max-examples "$examples" --phases coverage,fuzzing,stateful --workers 2 --no-shrink \
    --suppress-health-check too_slow --report junit --report-junit-path "$junit" \
    ${FUZZ_SEED:+--seed "$FUZZ_SEED"} "$@") 2>&1 | tee "$out" || status=$?
  say "$surface: schemathesis ran in $((SECONDS - start))s"
  # A run whose only errors are CPython's "AST constructor recursion depth mismatch" (a CPython 3.11
  # bug hypothesis meets while naming a strategy deep in a draw; no request involved) passes;
  # any check failure, network error (a time-out: a hang) or other error fails it.
  if [ "$status" -ne 0 ] && only_known_tool_errors "$junit"; then
    say "$surface: tolerated: schemathesis errors from the CPython AST bug only (no check failed)"
    status=0
  fi
  cases=$(sed -n 's/^ *\([0-9][0-9]*\) generated.*/\1/p' "$out" | tail -1)
  say "$surface: cases run: ${cases:-unknown} ($examples examples per operation and phase)"
}

# The runner still alive, nothing logged at error level, a clean stop.
finish_runner() {
  kill -0 "$runner_pid" 2>/dev/null || { runner_pid=""; die "$surface: the runner died during the run ($log)"; }
  local errors
  errors=$(runner_errors)
  if [ -n "$errors" ]; then
    echo "$errors" >&2
    say "$surface: the runner logged errors during the run (above)"
    status=1
  fi
  stop_runner || status=1
  [ "$status" -eq 0 ] || die "$surface: failed (output in .cache/fuzz/)"
}

fuzz_internal() {
  surface=internal
  local start=$SECONDS
  start_runner
  say "internal: embedded runner (pid $runner_pid) on internal API port $api_port in $((SECONDS - start))s"
  # /dashboard/stream is an endless SSE stream with no input; its answer is checked by
  # embedded/test/internal-api-document.test.ts, which also sends every example of the document:
  # schemathesis' own examples phase is left out, it fails now and then inside the tool while
  # completing a body example (a hypothesis FlakyFailure, no request involved).
  run_schemathesis "${FUZZ_EXAMPLES:-25}" "http://127.0.0.1:$api_port/swagger.json" "http://127.0.0.1:$api_port" \
    --exclude-path /dashboard/stream --request-timeout 10
  finish_runner
  say "internal: ok: no 5xx, every answer as documented, no errors logged, the runner stopped cleanly"
}

# A secured route for every one-segment GET, so the proxy's 401 and its preflight are fuzzed beside
# its 404. No fuzzed request carries a valid JWT, so its target (the discard port, where nothing
# listens) is never called.
public_edge_apis='[{"id":"fuzz-secured","name":"fuzz-secured","auth_type":"jwt","version_data":{"default":{"endpoints":[{"id":"any-get","method":"GET","path_regex":"/[^/]*","secured":true}]}},"proxy":{"target_url":"http://127.0.0.1","port":9}}]'

fuzz_public() {
  surface=public
  local start=$SECONDS
  # Long polls answer within LONGPOLL_TIMEOUT and socket.io polls within HEARTBEAT_INTERVAL, far
  # below the request time-out, so only a hang times out. The rate limits are off the way: a 429 is
  # documented, but would hide what lies behind it. Long-poll records expire soon after the run.
  start_runner JWT_SECRET_KEY="$(python3 -c 'import secrets; print(secrets.token_hex(32))')" \
    LONGPOLL_TIMEOUT=1s LONGPOLL_SESSION_TTL=5s HEARTBEAT_INTERVAL=1s \
    MAX_CONNECTIONS_PER_MINUTE=1000000 MAX_CONNECTIONS_PER_IP_PER_MINUTE=1000000 \
    MAX_CONNECTIONS_PER_ADDRESS=1000000 \
    PROXY_CONFIG_FILE="$public_edge_apis" PROXY_TARGET_ALLOW=127.0.0.1
  local edge="http://127.0.0.1:$public_port"
  say "public: embedded runner (pid $runner_pid) on public edge port $public_port in $((SECONDS - start))s"
  # The baseline: started, the document served once, an event on the stream (as a running gateway
  # has: a long poll whose cursor an empty stream has not reached never answers, a reported finding
  # in embedded/test/public-edge-findings.test.ts).
  curl -sf -o /dev/null "$edge/_gw/v1/openapi.json"
  curl -sf -o /dev/null -H 'content-type: application/cloudevents+json' \
    -d '{"specversion":"1.0","id":"first","type":"fuzz","source":"/fuzz"}' "$edge/_gw/v1/events"
  sleep 2
  local rss_before rss_after
  rss_before=$(rss_kib)
  # The WebSocket connect is documented but not fuzzed here: an upgrade switches the socket the tool
  # would reuse for its next request. embedded/test/public-edge-fuzz.test.ts fuzzes it over raw TCP
  # against this document's statuses. SSE streams are read up to their welcome pair
  # (tools/fuzz-public-edge.toml).
  run_schemathesis "${FUZZ_EXAMPLES:-80}" "$edge/_gw/v1/openapi.json" "$edge" \
    --exclude-path /_gw/v1/connection/ws --request-timeout 5
  # What the run left goes within 30 s: long-poll records after LONGPOLL_SESSION_TTL, engine.io
  # sessions after their ping time-out (HEARTBEAT_INTERVAL + 20 s).
  local settle=$SECONDS
  rss_after=$(rss_kib)
  while [ $(( (rss_after - rss_before) * 100 )) -gt $(( rss_before * rss_tolerance_percent )) ] &&
    [ $((SECONDS - settle)) -lt 30 ]; do
    sleep 1
    rss_after=$(rss_kib)
  done
  say "public: runner RSS ${rss_before} KiB before the run, ${rss_after} KiB $((SECONDS - settle))s after it" \
    "($(( (rss_after - rss_before) * 100 / rss_before ))%, tolerance ${rss_tolerance_percent}%)"
  if [ $(( (rss_after - rss_before) * 100 )) -gt $(( rss_before * rss_tolerance_percent )) ]; then
    say "public: RSS did not come back within ${rss_tolerance_percent}% of its level before the run"
    status=1
  fi
  finish_runner
  say "public: ok: no 5xx, no hang, every answer as documented, no errors logged, RSS back, the runner stopped cleanly"
}

# One surface in a subshell of its own, its runner stopped on the way out whatever happens.
fuzz_surface() {
  trap 'stop_runner || true' EXIT
  case $1 in
    internal) fuzz_internal ;;
    public) fuzz_public ;;
  esac
}

main() {
  mkdir -p "$work"
  local start=$SECONDS surfaces=("$@") pids=() failed=0 i
  [ ${#surfaces[@]} -gt 0 ] || surfaces=(internal public)
  for surface in "${surfaces[@]}"; do
    [[ $surface = internal || $surface = public ]] || die "unknown surface $surface (internal, public)"
  done
  install_schemathesis
  say "schemathesis $schemathesis_version ready in $((SECONDS - start))s"
  # The surfaces at the same time, each on its own runner and ports (one core each); each one's
  # output is printed whole once it is done.
  for surface in "${surfaces[@]}"; do
    (fuzz_surface "$surface") >"$work/$surface-stage.log" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || failed=1
    cat "$work/${surfaces[$i]}-stage.log"
  done
  say "${surfaces[*]}: done in $((SECONDS - start))s"
  return $failed
}

main "$@"
