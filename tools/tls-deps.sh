# Sourced by tools/deps.sh: the brokers as managed services run them, with TLS and users, next to
# the plaintext ones on ports of their own:
#   redis-tls          Redis on REDIS_TLS_PORT (6390), TLS only (port 0), client certificates
#                      required, the default user off and one ACL user
#   redis-tls-cluster  a Redis Cluster of three masters on REDIS_TLS_CLUSTER_PORT (7010) and the
#                      next two, TLS between clients and nodes and between nodes, the same user
#   traces-tls         Jaeger (the binary `traces` builds) taking OTLP only over TLS with client
#                      certificates: gRPC on TRACES_TLS_OTLP_GRPC_PORT (4327), HTTP on
#                      TRACES_TLS_OTLP_HTTP_PORT (4328); its query API (plain) on TRACES_TLS_QUERY_PORT
#                      (16696)
#   nats-tls           NATS (the nats-server `nats` builds) with JetStream on NATS_TLS_PORT (4232),
#                      TLS with client certificates required, a user with a password; and on
#                      NATS_TLS_TOKEN_PORT (4233) a second server, TLS without client certificates,
#                      that takes a token instead (TLS_DEPS_TOKEN): a server has users or a token,
#                      never both
#   kafka-tls          a KRaft broker taking clients only over TLS: SASL_SSL on KAFKA_TLS_SASL_PORT
#                      (9193; SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN, the same user) and SSL with
#                      client certificates required on KAFKA_TLS_MTLS_PORT (9194)
#   schema-registry-tls the schema registry (`schema-registry`, which must run) as managed
#                      registries serve it, through nginx: HTTPS with HTTP basic auth (the user and
#                      password below) on SCHEMA_REGISTRY_TLS_PORT (8443), and HTTPS with client
#                      certificates required on SCHEMA_REGISTRY_MTLS_PORT (8444); the same
#                      /apis/ccompat/v7 path
# Their certificates come from a local CA made with openssl on the first start, under
# .cache/deps/tls/ (ca.pem; server.pem/server-key.pem for 127.0.0.1 and localhost; client.pem/
# client-key.pem), which tests read to connect. The user and password are fixed (TLS_DEPS_USER,
# TLS_DEPS_PASSWORD): these servers listen on 127.0.0.1 for tests only.
REDIS_TLS_PORT=${REDIS_TLS_PORT:-6390}
REDIS_TLS_CLUSTER_PORT=${REDIS_TLS_CLUSTER_PORT:-7010}
tls_cluster_ports=("$REDIS_TLS_CLUSTER_PORT" $((REDIS_TLS_CLUSTER_PORT + 1)) $((REDIS_TLS_CLUSTER_PORT + 2)))
NATS_TLS_PORT=${NATS_TLS_PORT:-4232}
TRACES_TLS_OTLP_GRPC_PORT=${TRACES_TLS_OTLP_GRPC_PORT:-4327}
TRACES_TLS_OTLP_HTTP_PORT=${TRACES_TLS_OTLP_HTTP_PORT:-4328}
TRACES_TLS_QUERY_PORT=${TRACES_TLS_QUERY_PORT:-16696}
TRACES_TLS_QUERY_GRPC_PORT=${TRACES_TLS_QUERY_GRPC_PORT:-16695}
TLS_DEPS_USER=gatehouse
TLS_DEPS_PASSWORD=tls-deps-secret
TLS_DEPS_TOKEN=tls-deps-token
NATS_TLS_TOKEN_PORT=${NATS_TLS_TOKEN_PORT:-4233}
KAFKA_TLS_SASL_PORT=${KAFKA_TLS_SASL_PORT:-9193}
KAFKA_TLS_MTLS_PORT=${KAFKA_TLS_MTLS_PORT:-9194}
KAFKA_TLS_INTERNAL_PORT=${KAFKA_TLS_INTERNAL_PORT:-9195}
KAFKA_TLS_CONTROLLER_PORT=${KAFKA_TLS_CONTROLLER_PORT:-9196}
SCHEMA_REGISTRY_TLS_PORT=${SCHEMA_REGISTRY_TLS_PORT:-8443}
SCHEMA_REGISTRY_MTLS_PORT=${SCHEMA_REGISTRY_MTLS_PORT:-8444}
tls_dir="$state/tls"

# A CA, a server certificate for 127.0.0.1/localhost and a client certificate, once.
tls_certificates() {
  [ -f "$tls_dir/client.pem" ] && return
  apt_install openssl:openssl
  mkdir -p "$tls_dir"
  local d=$tls_dir
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=gatehouse-test-ca \
    -keyout "$d/ca-key.pem" -out "$d/ca.pem" 2>/dev/null
  tls_issue server "/CN=localhost" "subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth,clientAuth"
  tls_issue client "/CN=$TLS_DEPS_USER" "extendedKeyUsage=clientAuth"
  chmod 600 "$d"/*-key.pem
}
tls_issue() { # name, subject, extensions
  local d=$tls_dir
  openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$d/$1-key.pem" -out "$d/$1.csr" 2>/dev/null
  printf '%s\n' "$3" >"$d/$1.ext"
  openssl x509 -req -in "$d/$1.csr" -CA "$d/ca.pem" -CAkey "$d/ca-key.pem" -CAcreateserial \
    -days 3650 -extfile "$d/$1.ext" -out "$d/$1.pem" 2>/dev/null
  rm -f "$d/$1.csr" "$d/$1.ext"
}

# A redis-server's arguments into redis_tls_args: TLS only (port 0), client certificates required;
# the ACL has no default user and one user with every command on every key and channel.
redis_tls_arguments() { # port, data dir
  redis_tls_args=(--bind 127.0.0.1 --port 0 --tls-port "$1" --dir "$2"
    --tls-cert-file "$tls_dir/server.pem" --tls-key-file "$tls_dir/server-key.pem"
    --tls-ca-cert-file "$tls_dir/ca.pem" --tls-auth-clients yes
    --save '' --appendonly no --protected-mode yes --daemonize no --notify-keyspace-events Ex
    --user default off --user "$TLS_DEPS_USER" on ">$TLS_DEPS_PASSWORD" '~*' '&*' +@all)
}
redis_tls_cli() { # port, command...
  local port=$1; shift
  redis-cli -h 127.0.0.1 -p "$port" --tls --cacert "$tls_dir/ca.pem" --cert "$tls_dir/client.pem" \
    --key "$tls_dir/client-key.pem" --user "$TLS_DEPS_USER" --pass "$TLS_DEPS_PASSWORD" --no-auth-warning "$@"
}

redis-tls_up() {
  apt_install redis-server:redis-server redis-cli:redis-tools
  tls_certificates
  mkdir -p "$state/redis-tls/data"
  redis_tls_arguments "$REDIS_TLS_PORT" "$state/redis-tls/data"
  spawn redis-tls redis-server "${redis_tls_args[@]}"
  wait_ready redis-tls 20 redis-tls-ping "$REDIS_TLS_PORT"
}
redis-tls-ping() { [ "$(redis_tls_cli "$1" ping)" = PONG ]; }

# Memory only (no AOF): a restart starts an empty cluster, created again below.
redis-tls-cluster_up() {
  apt_install redis-server:redis-server redis-cli:redis-tools
  tls_certificates
  local port dir
  for port in "${tls_cluster_ports[@]}"; do
    dir="$state/redis-tls-cluster/$port"
    rm -rf "$dir/data" && mkdir -p "$dir/data"
    redis_tls_arguments "$port" "$dir/data"
    spawn "redis-tls-cluster/$port" redis-server "${redis_tls_args[@]}" --tls-cluster yes --cluster-enabled yes \
      --cluster-config-file nodes.conf --cluster-node-timeout 2000 --masteruser "$TLS_DEPS_USER" \
      --masterauth "$TLS_DEPS_PASSWORD"
  done
  for port in "${tls_cluster_ports[@]}"; do wait_ready "redis-tls-cluster/$port" 20 redis-tls-ping "$port"; done
  redis_tls_cli "$REDIS_TLS_CLUSTER_PORT" --cluster create "${tls_cluster_ports[@]/#/127.0.0.1:}" \
    --cluster-replicas 0 --cluster-yes >>"$state/redis-tls-cluster/log" 2>&1
  for port in "${tls_cluster_ports[@]}"; do wait_ready "redis-tls-cluster/$port" 30 redis-tls-cluster-ok "$port"; done
  pid_of "redis-tls-cluster/$REDIS_TLS_CLUSTER_PORT" >"$state/redis-tls-cluster/pid"
}
redis-tls-cluster-ok() {
  local info; info=$(redis_tls_cli "$1" cluster info | tr -d '\r')
  grep -qx cluster_state:ok <<<"$info" && grep -qx cluster_known_nodes:3 <<<"$info"
}

nats-tls_up() {
  local bin; bin=$(nats_bin)
  tls_certificates
  mkdir -p "$state/nats-tls/data" "$state/nats-tls/token-data"
  cat >"$state/nats-tls/nats.conf" <<EOF
listen: 127.0.0.1:$NATS_TLS_PORT
jetstream { store_dir: "$state/nats-tls/data" }
tls {
  cert_file: "$tls_dir/server.pem"
  key_file: "$tls_dir/server-key.pem"
  ca_file: "$tls_dir/ca.pem"
  verify: true
  timeout: 5
}
authorization {
  users: [ { user: "$TLS_DEPS_USER", password: "$TLS_DEPS_PASSWORD" } ]
}
EOF
  cat >"$state/nats-tls/token.conf" <<EOF
listen: 127.0.0.1:$NATS_TLS_TOKEN_PORT
jetstream { store_dir: "$state/nats-tls/token-data" }
tls {
  cert_file: "$tls_dir/server.pem"
  key_file: "$tls_dir/server-key.pem"
  timeout: 5
}
authorization { token: "$TLS_DEPS_TOKEN" }
EOF
  spawn nats-tls "$bin" -c "$state/nats-tls/nats.conf"
  wait_ready nats-tls 20 nats-tls-ping "$NATS_TLS_PORT"
  spawn nats-tls/token "$bin" -c "$state/nats-tls/token.conf"
  wait_ready nats-tls/token 20 nats-tls-ping "$NATS_TLS_TOKEN_PORT"
}
# The server greets with INFO (TLS starts after it: these servers do not set handshake_first).
nats-tls-ping() {
  [ "$(timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1 && head -c 4 <&3")" = INFO ]
}

traces-tls_up() {
  local bin="$root/.cache/traces/bin/jaeger"
  [ -x "$bin" ] || die "traces-tls runs the Jaeger that 'tools/deps.sh up traces' builds: start traces once first"
  tls_certificates
  mkdir -p "$state/traces-tls"
  TLS_DIR=$tls_dir TRACES_TLS_OTLP_GRPC_PORT=$TRACES_TLS_OTLP_GRPC_PORT \
    TRACES_TLS_OTLP_HTTP_PORT=$TRACES_TLS_OTLP_HTTP_PORT TRACES_TLS_QUERY_PORT=$TRACES_TLS_QUERY_PORT \
    TRACES_TLS_QUERY_GRPC_PORT=$TRACES_TLS_QUERY_GRPC_PORT \
    spawn traces-tls "$bin" --config "$root/tools/jaeger/config-tls.yaml"
  wait_ready traces-tls 60 curl -fsS "http://127.0.0.1:$TRACES_TLS_QUERY_PORT/api/services"
}

kafka-tls_up() {
  apt_install kcat:kcat
  kafka_libs
  tls_certificates
  local libs="$root/.cache/kafka/libs" dir="$state/kafka-tls"
  mkdir -p "$dir/data"
  cat "$tls_dir/server-key.pem" "$tls_dir/server.pem" >"$dir/server-keystore.pem"
  chmod 600 "$dir/server-keystore.pem"
  sed -e "s#@SASL_PORT@#$KAFKA_TLS_SASL_PORT#g" -e "s#@MTLS_PORT@#$KAFKA_TLS_MTLS_PORT#g" \
    -e "s#@INTERNAL_PORT@#$KAFKA_TLS_INTERNAL_PORT#g" -e "s#@CONTROLLER_PORT@#$KAFKA_TLS_CONTROLLER_PORT#g" \
    -e "s#@DATA@#$dir/data#g" -e "s#@DIR@#$dir#g" -e "s#@TLS@#$tls_dir#g" \
    -e "s#@USER@#$TLS_DEPS_USER#g" -e "s#@PASSWORD@#$TLS_DEPS_PASSWORD#g" \
    "$root/tools/kafka/server-tls.properties.in" >"$dir/server.properties"
  local log4j="-Dlog4j.configuration=file:$root/tools/kafka/log4j.properties"
  if [ ! -f "$dir/data/meta.properties" ]; then
    local user="name=$TLS_DEPS_USER,password=$TLS_DEPS_PASSWORD"
    java -Xmx256m "$log4j" -cp "$libs/*" kafka.tools.StorageTool format \
      -t "$(java -Xmx128m "$log4j" -cp "$libs/*" kafka.tools.StorageTool random-uuid | tail -n1)" \
      -c "$dir/server.properties" --add-scram "SCRAM-SHA-256=[$user]" --add-scram "SCRAM-SHA-512=[$user]" \
      >>"$dir/log" 2>&1
  fi
  spawn kafka-tls java -Xms128m -Xmx384m -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true \
    "$log4j" -Dkafka.logs.dir="$dir" -cp "$libs/*" kafka.Kafka "$dir/server.properties"
  wait_ready kafka-tls 120 kafka-tls-ping
}
# Ready = a metadata request over the mutual-TLS listener answers.
kafka-tls-ping() {
  kcat -b "127.0.0.1:$KAFKA_TLS_MTLS_PORT" -X security.protocol=ssl -X ssl.ca.location="$tls_dir/ca.pem" \
    -X ssl.certificate.location="$tls_dir/client.pem" -X ssl.key.location="$tls_dir/client-key.pem" -L -m 2
}

schema-registry-tls_up() {
  running schema-registry || die "schema-registry-tls serves the registry 'schema-registry' runs: start it first"
  apt_install nginx:nginx openssl:openssl curl:curl
  tls_certificates
  local dir="$state/schema-registry-tls"
  mkdir -p "$dir/temp"
  printf '%s:%s\n' "$TLS_DEPS_USER" "$(openssl passwd -apr1 "$TLS_DEPS_PASSWORD")" >"$dir/htpasswd"
  sed -e "s#@DIR@#$dir#g" -e "s#@TLS@#$tls_dir#g" -e "s#@TLS_PORT@#$SCHEMA_REGISTRY_TLS_PORT#g" \
    -e "s#@MTLS_PORT@#$SCHEMA_REGISTRY_MTLS_PORT#g" -e "s#@REGISTRY_PORT@#$SCHEMA_REGISTRY_PORT#g" \
    "$root/tools/schema-registry/nginx-tls.conf.in" >"$dir/nginx.conf"
  spawn schema-registry-tls /usr/sbin/nginx -p "$dir/" -c "$dir/nginx.conf" -e stderr
  wait_ready schema-registry-tls 30 curl -fsS --cacert "$tls_dir/ca.pem" \
    -u "$TLS_DEPS_USER:$TLS_DEPS_PASSWORD" "https://127.0.0.1:$SCHEMA_REGISTRY_TLS_PORT/apis/ccompat/v7/subjects"
}
