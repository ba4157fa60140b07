#!/usr/bin/env bash
# Starts and stops the real servers the tests use, on 127.0.0.1 only:
#   Apache Kafka (KRaft, jars from Maven Central), Redis and a Redis Cluster of three masters (Debian
#   packages), NATS 2.14 with JetStream (nats-server built once from the Go module proxy, pinned in
#   nats_server_version: Debian's 2.9 cannot filter a consumer by several subjects; `nats` and
#   `nats-tls` run it), a Kinesis emulator (npm package kinesis-local), the two trace backends
#   `traces`: Jaeger v2 (OTLP/HTTP in, query API out), built once from the Go module proxy
#   (tools/jaeger/go.mod), and `zipkin`: a Zipkin server (its executable jar from Maven Central;
#   Zipkin v2 JSON in at /api/v2/spans, query API at /api/v2/traces), and `schema-registry`: a
#   Confluent-compatible schema registry (Apicurio Registry from Maven Central, its ccompat API)
#   keeping its schemas in a topic of that Kafka.
# Usage: tools/deps.sh up|down|status [name...]    tools/deps.sh restart name...    tools/deps.sh tools
#        tools/deps.sh kafka-libs   (only fetch the Kafka jars; prints their directory)
#        tools/deps.sh schema-registry-app   (only fetch Apicurio Registry; prints its directory)
#        tools/deps.sh jaeger-bin   (only build Jaeger when it is missing or stale; prints its path)
#        tools/deps.sh nats-bin   (only build nats-server when it is missing or stale; prints its path)
#        tools/deps.sh zipkin-jar   (only fetch Zipkin's jar; prints its path)
# Names: kafka redis redis-cluster nats kinesis traces zipkin schema-registry redis-tls redis-tls-cluster nats-tls traces-tls kafka-tls schema-registry-tls (default: all;
# schema-registry needs kafka up, schema-registry-tls the schema-registry). Idempotent: `up` skips what
# already runs, but restarts a nats or nats-tls that runs another binary than the pinned build.
# State, logs and PID files live under .cache/deps/<name>/. Ports come from the environment:
#   KAFKA_PORT (9092) KAFKA_CONTROLLER_PORT (9093) REDIS_PORT (6379) NATS_PORT (4222)
#   NATS_MONITOR_PORT (8222) KINESIS_PORT (4567) TRACES_OTLP_PORT (4318) TRACES_QUERY_PORT (16686)
#   TRACES_QUERY_GRPC_PORT (16685)
#   REDIS_CLUSTER_PORT (7000): the cluster's masters listen on it and the next two ports
#   SCHEMA_REGISTRY_PORT (8081): the registry's Confluent API is http://127.0.0.1:<port>/apis/ccompat/v7
#   ZIPKIN_PORT (9411): Zipkin's one port, for spans in (/api/v2/spans), queries and /health
# redis-tls, redis-tls-cluster, nats-tls, traces-tls, kafka-tls and schema-registry-tls (TLS, client certificates, users): tools/tls-deps.sh.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
state="$root/.cache/deps"
KAFKA_PORT=${KAFKA_PORT:-9092}
KAFKA_CONTROLLER_PORT=${KAFKA_CONTROLLER_PORT:-9093}
REDIS_PORT=${REDIS_PORT:-6379}
NATS_PORT=${NATS_PORT:-4222}
NATS_MONITOR_PORT=${NATS_MONITOR_PORT:-8222}
KINESIS_PORT=${KINESIS_PORT:-4567}
REDIS_CLUSTER_PORT=${REDIS_CLUSTER_PORT:-7000}
cluster_ports=("$REDIS_CLUSTER_PORT" $((REDIS_CLUSTER_PORT + 1)) $((REDIS_CLUSTER_PORT + 2)))
TRACES_OTLP_PORT=${TRACES_OTLP_PORT:-4318}
TRACES_QUERY_PORT=${TRACES_QUERY_PORT:-16686}
TRACES_QUERY_GRPC_PORT=${TRACES_QUERY_GRPC_PORT:-16685}
SCHEMA_REGISTRY_PORT=${SCHEMA_REGISTRY_PORT:-8081}
ZIPKIN_PORT=${ZIPKIN_PORT:-9411}
all=(redis redis-cluster nats kinesis kafka traces zipkin schema-registry redis-tls redis-tls-cluster nats-tls traces-tls kafka-tls schema-registry-tls)

say() { echo "deps: $*" >&2; }
die() { say "$*"; exit 1; }

pid_of() { cat "$state/$1/pid" 2>/dev/null || true; }
running() { local pid; pid=$(pid_of "$1"); [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }
# A dependency of several processes (redis-cluster) runs while every one of them does.
running_all() {
  local n; for n in $(members_of "$1"); do running "$n" || return 1; done
}
members_of() {
  local port
  if [ "$1" = redis-cluster ]; then
    for port in "${cluster_ports[@]}"; do echo "redis-cluster/$port"; done
  elif [ "$1" = redis-tls-cluster ]; then
    for port in "${tls_cluster_ports[@]}"; do echo "redis-tls-cluster/$port"; done
  elif [ "$1" = nats-tls ]; then
    echo nats-tls; echo nats-tls/token
  else echo "$1"; fi
}

# Polls `check` until it succeeds or `seconds` pass; fails if the process died meanwhile.
wait_ready() {
  local name=$1 seconds=$2; shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    running "$name" || die "$name exited during start-up; see $state/$name/log"
    [ $SECONDS -lt $deadline ] || die "$name not ready after ${seconds}s; see $state/$name/log"
    sleep 0.5
  done
}

apt_install() {
  local missing=()
  for pair in "$@"; do command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}"); done
  [ ${#missing[@]} -eq 0 ] && return
  say "installing ${missing[*]} with apt"
  if [ ! -d /var/lib/apt/lists ] || [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v lock)" ]; then
    apt-get update -qq
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

spawn() { # name, command...: runs in the background with its log and PID file
  local name=$1; shift
  mkdir -p "$state/$name"
  # A session of its own: the server outlives the shell or test process that (re)started it.
  setsid nohup "$@" >>"$state/$name/log" 2>&1 < /dev/null &
  echo $! >"$state/$name/pid"
}

# ---- Redis: AOF persistence so a restart keeps streams and keys (tests restart it) ----
redis_up() {
  apt_install redis-server:redis-server redis-cli:redis-tools
  mkdir -p "$state/redis/data"
  spawn redis redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$state/redis/data" \
    --appendonly yes --appendfsync always --save '' --protected-mode yes --daemonize no \
    --notify-keyspace-events Ex
  wait_ready redis 20 redis-ping
}
redis-ping() { [ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping)" = PONG ]; }

# ---- Redis Cluster: three masters (no replicas), each with AOF, cluster state in nodes.conf ----
# The first start creates the cluster (slots split over the three); later starts find it in
# nodes.conf and the AOF, as a restarted cluster does.
redis-cluster_up() {
  apt_install redis-server:redis-server redis-cli:redis-tools
  local port dir
  for port in "${cluster_ports[@]}"; do
    dir="$state/redis-cluster/$port"
    mkdir -p "$dir/data"
    spawn "redis-cluster/$port" redis-server --bind 127.0.0.1 --port "$port" --dir "$dir/data" \
      --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 2000 \
      --appendonly yes --appendfsync always --save '' --protected-mode yes --daemonize no \
      --notify-keyspace-events Ex
  done
  for port in "${cluster_ports[@]}"; do wait_ready "redis-cluster/$port" 20 cluster-node-ping "$port"; done
  if [ "$(cluster-info "$REDIS_CLUSTER_PORT" cluster_slots_assigned)" = 0 ]; then
    redis-cli --cluster create "${cluster_ports[@]/#/127.0.0.1:}" --cluster-replicas 0 --cluster-yes \
      >>"$state/redis-cluster/log" 2>&1
  fi
  for port in "${cluster_ports[@]}"; do wait_ready "redis-cluster/$port" 30 cluster-ok "$port"; done
  # The shared PID file says the dependency runs (status); each node has its own below it.
  pid_of "redis-cluster/$REDIS_CLUSTER_PORT" >"$state/redis-cluster/pid"
}
cluster-node-ping() { [ "$(redis-cli -h 127.0.0.1 -p "$1" ping)" = PONG ]; }
cluster-info() { redis-cli -h 127.0.0.1 -p "$1" cluster info | tr -d '\r' | sed -n "s/^$2://p"; }
cluster-ok() { [ "$(cluster-info "$1" cluster_state)" = ok ] && [ "$(cluster-info "$1" cluster_known_nodes)" = 3 ]; }

# ---- NATS with JetStream, file storage so a restart keeps streams ----
nats_up() {
  apt_install curl:curl
  local bin; bin=$(nats_bin)
  mkdir -p "$state/nats/data"
  spawn nats "$bin" -a 127.0.0.1 -p "$NATS_PORT" -m "$NATS_MONITOR_PORT" -js -sd "$state/nats/data"
  wait_ready nats 20 curl -fsS "http://127.0.0.1:$NATS_MONITOR_PORT/healthz?js-enabled-only=true"
}
# The NATS server of the tests and of the nats image stand-in (tools/containers.sh): built from the
# Go module proxy at this pinned version, not Debian's 2.9, which refuses a consumer filtered by
# several subjects (filter_subjects, 2.10+) and so never ran FANOUT_ROUTING=interest for a replica
# whose clients want two types or more. Keep the image pins (docker-compose.yml, the chart's values,
# tools/images/nats) on the same minor.
nats_server_version=2.14.9
# Builds nats-server when it is missing or the pin changed; prints the binary's path.
nats_bin() {
  local bin="$root/.cache/nats/bin/nats-server"
  if [ ! -x "$bin" ] || [ "$(cat "$bin.stamp" 2>/dev/null)" != "$nats_server_version" ]; then
    build_nats "$bin" >&2
    echo "$nats_server_version" >"$bin.stamp"
  fi
  echo "$bin"
}
build_nats() {
  local out=$1 t=$SECONDS cache="$root/.cache/nats/go"
  command -v go >/dev/null || PATH="/usr/local/go/bin:$PATH"
  command -v go >/dev/null || die "nats: Go is needed to build nats-server (https://go.dev/dl/)"
  say "building nats-server $nats_server_version from the Go module proxy (about 2 minutes, once)"
  mkdir -p "$(dirname "$out")"
  # Static (CGO off), so the same binary runs in the Alpine image stand-in.
  GOMODCACHE="$cache/mod" GOCACHE="$cache/build" GOPATH="$cache/path" GOTOOLCHAIN=local CGO_ENABLED=0 \
    GOFLAGS="-buildvcs=false -modcacherw" GOBIN="$(dirname "$out")" \
    go install -trimpath -ldflags "-s -w" "github.com/nats-io/nats-server/v2@v$nats_server_version"
  # The module and build caches only serve a rebuild, which a new pin needs anyway.
  rm -rf "$cache"
  say "nats-server $nats_server_version built in $((SECONDS - t))s"
}

# ---- Kinesis emulator (kinesis-local = kinesis-mock); must run with its package as cwd ----
kinesis_up() {
  local dir="$root/node_modules/kinesis-local"
  [ -f "$dir/main.js" ] || die "kinesis-local is not installed; run 'make install' first"
  mkdir -p "$state/kinesis"
  (cd "$dir" && KINESIS_MOCK_PLAIN_PORT=$KINESIS_PORT KINESIS_MOCK_TLS_PORT=$((KINESIS_PORT + 1)) \
    CREATE_STREAM_DURATION=10ms DELETE_STREAM_DURATION=10ms UPDATE_STREAM_DURATION=10ms \
    REGISTER_STREAM_CONSUMER_DURATION=10ms LOG_LEVEL=WARN \
    spawn kinesis node main.js)
  wait_ready kinesis 60 kinesis-ping
}
kinesis-ping() {
  curl -fsS -X POST "http://127.0.0.1:$KINESIS_PORT/" -H 'content-type: application/x-amz-json-1.1' \
    -H 'x-amz-target: Kinesis_20131202.ListStreams' -H 'x-amz-date: 20260101T000000Z' \
    -H 'authorization: AWS4-HMAC-SHA256 Credential=x/20260101/us-east-1/kinesis/aws4_request, SignedHeaders=host, Signature=x' \
    -d '{}'
}

# ---- Apache Kafka, KRaft single node, jars via Maven (tools/kafka/pom.xml) ----
# The jars, once, into .cache/kafka/libs (also the Kafka image of tools/containers.sh).
kafka_libs() {
  local libs="$root/.cache/kafka/libs"
  if [ -z "$(ls "$libs"/kafka_2.13-*.jar 2>/dev/null)" ]; then
    apt_install mvn:maven java:default-jre-headless
    say "fetching Kafka jars with Maven"
    mvn -q -B -f "$root/tools/kafka/pom.xml" \
      org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$libs" >&2
  fi
}

kafka_up() {
  apt_install kcat:kcat
  kafka_libs
  local libs="$root/.cache/kafka/libs" dir="$state/kafka"
  mkdir -p "$dir/data"
  sed -e "s#@PORT@#$KAFKA_PORT#g" -e "s#@CONTROLLER_PORT@#$KAFKA_CONTROLLER_PORT#g" -e "s#@DATA@#$dir/data#g" \
    "$root/tools/kafka/server.properties.in" >"$dir/server.properties"
  local log4j="-Dlog4j.configuration=file:$root/tools/kafka/log4j.properties"
  if [ ! -f "$dir/data/meta.properties" ]; then
    java -Xmx256m "$log4j" -cp "$libs/*" kafka.tools.StorageTool format \
      -t "$(java -Xmx128m "$log4j" -cp "$libs/*" kafka.tools.StorageTool random-uuid | tail -n1)" \
      -c "$dir/server.properties" >>"$dir/log" 2>&1
  fi
  spawn kafka java -Xms256m -Xmx512m -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true \
    "$log4j" -Dkafka.logs.dir="$dir" -cp "$libs/*" kafka.Kafka "$dir/server.properties"
  # Ready = a metadata request answers (not just an open port).
  wait_ready kafka 120 kcat -b "127.0.0.1:$KAFKA_PORT" -L -m 2
}

# ---- Jaeger v2 (traces): built from tools/jaeger/go.mod into .cache/traces/, rebuilt when it changes;
#      memory storage, so a restart starts empty ----
traces_up() {
  local bin
  bin=$(jaeger_bin)
  mkdir -p "$state/traces"
  TRACES_OTLP_PORT=$TRACES_OTLP_PORT TRACES_QUERY_PORT=$TRACES_QUERY_PORT \
    TRACES_QUERY_GRPC_PORT=$TRACES_QUERY_GRPC_PORT spawn traces "$bin" --config "$root/tools/jaeger/config.yaml"
  wait_ready traces 60 traces-ping
}
# Ready = the OTLP receiver takes an (empty) export and the query API answers.
traces-ping() {
  curl -fsS -X POST -H 'content-type: application/json' -d '{}' "http://127.0.0.1:$TRACES_OTLP_PORT/v1/traces" &&
    curl -fsS "http://127.0.0.1:$TRACES_QUERY_PORT/api/services"
}
# Builds Jaeger when it is missing or its go.mod/go.sum changed; prints the binary's path.
jaeger_bin() {
  local bin="$root/.cache/traces/bin/jaeger" stamp
  # The files' contents only (not their paths): a clone elsewhere reuses the build.
  stamp=$(cat "$root/tools/jaeger/go.mod" "$root/tools/jaeger/go.sum" | sha256sum | cut -c1-16)
  if [ ! -x "$bin" ] || [ "$(cat "$bin.stamp" 2>/dev/null)" != "$stamp" ]; then
    build_jaeger "$bin" >&2
    echo "$stamp" >"$bin.stamp"
  fi
  echo "$bin"
}
build_jaeger() {
  local out=$1 t=$SECONDS cache="$root/.cache/traces/go" version
  command -v go >/dev/null || PATH="/usr/local/go/bin:$PATH"
  command -v go >/dev/null || die "traces: Go is needed to build Jaeger (https://go.dev/dl/)"
  say "building Jaeger from the Go module proxy (a few minutes, once)"
  export GOMODCACHE="$cache/mod" GOCACHE="$cache/build" GOPATH="$cache/path" GOTOOLCHAIN=local CGO_ENABLED=0
  export GOFLAGS="-mod=mod -buildvcs=false -modcacherw"
  version=$(go -C "$root/tools/jaeger" list -m -f '{{.Version}}' github.com/jaegertracing/jaeger)
  go -C "$root/tools/jaeger" build -trimpath -o "$out" \
    -ldflags "-s -w -X github.com/jaegertracing/jaeger/internal/version.latestVersion=$version" \
    github.com/jaegertracing/jaeger/cmd/jaeger
  # The 3 GB of module and build caches only serve a rebuild, which a go.mod change needs anyway.
  rm -rf "$cache"
  say "Jaeger $version built in $((SECONDS - t))s"
}

# ---- Zipkin (zipkin): the executable jar of zipkin-server from Maven Central, checked against
#      the SHA-256 Maven Central publishes for it (pinned here), fetched once into .cache/zipkin/;
#      Java 17 (Debian's) runs it. In-memory storage, so a restart starts empty; 127.0.0.1 only. ----
zipkin_version=3.6.1
zipkin_sha256=d8326e0ed4f43855dba81228f688554706e52578a7c782d9a90b73f8680654a1
zipkin_up() {
  apt_install java:default-jre-headless curl:curl
  local jar; jar=$(zipkin_jar)
  mkdir -p "$state/zipkin"
  # Spring properties on the command line: the listener (one port, HTTP, loopback only), memory
  # storage of at most 100,000 spans, no self-tracing, logs at WARN.
  spawn zipkin java -Xms64m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Djava.awt.headless=true -jar "$jar" \
    '--armeria.ports[0].ip=127.0.0.1' "--armeria.ports[0].port=$ZIPKIN_PORT" \
    '--armeria.ports[0].protocols[0]=http' \
    --zipkin.storage.type=mem --zipkin.storage.mem.max-spans=100000 \
    --zipkin.self-tracing.enabled=false --spring.main.banner-mode=off --logging.level.root=WARN
  wait_ready zipkin 120 zipkin-ping
}
# Ready = /health says UP (the collector and the storage both).
zipkin-ping() { curl -fsS "http://127.0.0.1:$ZIPKIN_PORT/health" | grep -q '"status" *: *"UP"'; }
# The jar's path, fetched once (tools/build-cache.sh keeps .cache/zipkin across clones).
zipkin_jar() {
  local jar="$root/.cache/zipkin/zipkin-server-$zipkin_version-exec.jar"
  [ -f "$jar" ] || fetch_zipkin "$jar" >&2
  echo "$jar"
}
fetch_zipkin() {
  local jar=$1 t=$SECONDS url
  url="https://repo1.maven.org/maven2/io/zipkin/zipkin-server/$zipkin_version"
  url="$url/zipkin-server-$zipkin_version-exec.jar"
  say "fetching Zipkin $zipkin_version from Maven Central (about 135 MB, once)"
  mkdir -p "$(dirname "$jar")"
  curl -fsS -o "$jar.part" "$url"
  [ "$(sha256sum "$jar.part" | cut -d' ' -f1)" = "$zipkin_sha256" ] ||
    { rm -f "$jar.part"; die "zipkin: checksum mismatch for $url"; }
  mv "$jar.part" "$jar"
  say "Zipkin $zipkin_version fetched in $((SECONDS - t))s"
}

# ---- Schema registry: Apicurio Registry (Apache 2.0), whose ccompat API is the Confluent Schema
#      Registry's REST API (Karapace, the brief's first choice, is not on PyPI). Its Quarkus build,
#      checked against Maven Central's SHA-1, is unpacked once into .cache/schema-registry/; 3.0.x is
#      the last line that runs on Java 17 (Debian bookworm's). Storage `kafkasql`: schemas live in the
#      topic gatehouse-schemas of the local Kafka, so a restart keeps them, as Confluent's _schemas. ----
apicurio_version=3.0.9
schema-registry_up() {
  running kafka || die "schema-registry keeps its schemas in Kafka: start kafka first"
  apt_install java:default-jre-headless curl:curl
  local dir; dir=$(apicurio_app)
  local jar="$dir/apicurio-registry-app-$apicurio_version-runner.jar"
  mkdir -p "$state/schema-registry"
  spawn schema-registry java -Xms64m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$SCHEMA_REGISTRY_PORT" \
    -Dquarkus.log.console.level=WARN -Dquarkus.http.access-log.enabled=false \
    -Dapicurio.storage.kind=kafkasql -Dapicurio.kafkasql.bootstrap.servers="127.0.0.1:$KAFKA_PORT" \
    -Dapicurio.kafkasql.topic=gatehouse-schemas -jar "$jar"
  wait_ready schema-registry 240 curl -fsS "$(schema_registry_url)/subjects"
  # Confluent's default: a new version must read data written with the previous one.
  curl -fsS -X PUT -H 'content-type: application/vnd.schemaregistry.v1+json' \
    -d '{"compatibility":"BACKWARD"}' "$(schema_registry_url)/config" >/dev/null
}
schema_registry_url() { echo "http://127.0.0.1:$SCHEMA_REGISTRY_PORT/apis/ccompat/v7"; }
# The directory of the runner jar and its lib/ (fetched once); tools/containers.sh builds the
# registry's image stand-in from it too.
apicurio_app() {
  local dir="$root/.cache/schema-registry/$apicurio_version"
  [ -f "$dir/apicurio-registry-app-$apicurio_version-runner.jar" ] || fetch_apicurio "$dir" >&2
  echo "$dir"
}
fetch_apicurio() {
  local dir=$1 t=$SECONDS name="apicurio-registry-app-$apicurio_version-all.tar.gz"
  local url="https://repo1.maven.org/maven2/io/apicurio/apicurio-registry-app/$apicurio_version/$name"
  say "fetching Apicurio Registry $apicurio_version from Maven Central (about 110 MB, once)"
  mkdir -p "$dir"
  curl -fsS -o "$dir/$name" "$url"
  [ "$(sha1sum "$dir/$name" | cut -d' ' -f1)" = "$(curl -fsS "$url.sha1" | cut -c1-40)" ] ||
    { rm -f "$dir/$name"; die "schema-registry: checksum mismatch for $name"; }
  tar -xzf "$dir/$name" -C "$dir"
  rm -f "$dir/$name"
  say "Apicurio Registry $apicurio_version fetched in $((SECONDS - t))s"
}

# shellcheck source=tools/tls-deps.sh
. "$root/tools/tls-deps.sh"

up_one() {
  if running_all "$1"; then
    if ! outdated "$1"; then say "$1 already running (pid $(pid_of "$1"))"; return; fi
    say "$1 runs another server than the pinned one (e.g. Debian's NATS 2.9 before the pin): restarting it"
  fi
  # Some of its processes run (one of a cluster died), or an outdated server: stop them, then start
  # it whole.
  if [ "$(members_of "$1")" != "$1" ] || outdated "$1"; then down_one "$1"; fi
  local t=$SECONDS
  "${1}_up"
  say "$1 ready in $((SECONDS - t))s (pid $(pid_of "$1"))"
}

# A running NATS whose executable is not the pinned build (another binary, or one rebuilt since:
# the kernel then names it "(deleted)").
outdated() {
  [[ $1 = nats || $1 = nats-tls ]] || return 1
  local bin n exe; bin=$(readlink -f "$(nats_bin)")
  for n in $(members_of "$1"); do
    exe=$(readlink "/proc/$(pid_of "$n")/exe" 2>/dev/null) || continue
    [ "$exe" = "$bin" ] || return 0
  done
  return 1
}

down_one() {
  local n
  for n in $(members_of "$1"); do stop_process "$n"; done
  rm -f "$state/$1/pid"
}

stop_process() {
  local pid; pid=$(pid_of "$1")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && { say "$1 did not stop; killing"; kill -KILL "$pid"; }
    say "$1 stopped"
  fi
  rm -f "$state/$1/pid"
}

cmd=${1:-status}; shift || true
names=("$@"); [ ${#names[@]} -eq 0 ] && names=("${all[@]}")
[[ "$cmd" = tools || "$cmd" = kafka-libs || "$cmd" = schema-registry-app || "$cmd" = jaeger-bin || "$cmd" = nats-bin || "$cmd" = zipkin-jar ]] &&
  names=()
for n in "${names[@]}"; do [[ " ${all[*]} " == *" $n "* ]] || die "unknown dependency '$n' (know: ${all[*]})"; done
case "$cmd" in
  up) for n in "${names[@]}"; do up_one "$n"; done ;;
  # In reverse: the schema registry stops before the Kafka it keeps its schemas in.
  down) for ((i = ${#names[@]} - 1; i >= 0; i--)); do down_one "${names[$i]}"; done ;;
  restart) for n in "${names[@]}"; do down_one "$n"; up_one "$n"; done ;;
  # Test tools that are not servers: a browser (browser tests), nginx (the edge in test-e2e),
  # Prometheus and promtool (the scrape test starts its own server).
  tools) apt_install chromium:chromium curl:curl nginx:nginx prometheus:prometheus promtool:prometheus ;;
  kafka-libs) kafka_libs; echo "$root/.cache/kafka/libs" ;;
  schema-registry-app) apt_install curl:curl; apicurio_app ;;
  jaeger-bin) jaeger_bin ;;
  nats-bin) nats_bin ;;
  zipkin-jar) apt_install curl:curl; zipkin_jar ;;
  status) for n in "${names[@]}"; do
      if running_all "$n"; then echo "$n: running (pid $(pid_of "$n"))"; else echo "$n: stopped"; fi
    done ;;
  *) die "usage: $0 up|down|restart|status [${all[*]}] | tools | kafka-libs | schema-registry-app | jaeger-bin | nats-bin | zipkin-jar" ;;
esac
