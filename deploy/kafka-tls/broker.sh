#!/bin/sh
# The kafka-tls profile's broker (docker-compose.yml, service kafka-tls), in the Kafka image as its
# own user: a single-node KRaft broker that clients reach only over TLS with SASL, configured here
# rather than by the image's KAFKA_* variables, so it runs the same on the public apache/kafka image
# and on tools/containers.sh's stand-in (it needs only /opt/kafka/bin and a JRE).
#   SASL_SSL://kafka-tls:9093   the compose network (KAFKA_BROKERS=kafka-tls:9093)
#   HOST://:29093               SASL_SSL too, advertised as KAFKA_TLS_HOST_LISTENER (the port
#                               compose publishes on 127.0.0.1) for clients on the host
#   CONTROLLER://127.0.0.1:9094 KRaft's own, on the container's loopback only
# Both client listeners take SCRAM-SHA-512 (its credential is made when the storage is formatted)
# and PLAIN (as Confluent Cloud uses it), one user: KAFKA_TLS_USER (gatehouse) with
# KAFKA_TLS_PASSWORD, which has no default: without it the broker refuses to start. Certificates:
# deploy/kafka-tls/certs.sh. Storage and configuration live in the container (/tmp/kafka-tls): a
# container made anew (a changed password, `up --force-recreate`) starts with an empty broker.
set -eu
user=${KAFKA_TLS_USER:-gatehouse}
password=${KAFKA_TLS_PASSWORD:-}
host_listener=${KAFKA_TLS_HOST_LISTENER:-127.0.0.1:29093}
keystore=/etc/kafka-tls/broker/broker.p12
ca=/etc/kafka-tls/ca/ca.pem
dir=/tmp/kafka-tls
# Any id of 16 bytes in URL-safe base64; one broker, one cluster.
cluster_id=R2F0ZWhvdXNlS2Fma2FUTA
say() { echo "kafka-tls: $*" >&2; }

if [ -z "$password" ]; then
  say "KAFKA_TLS_PASSWORD is not set: set it in .env (openssl rand -hex 32), and KAFKA_SASL=scram-sha-512:$user:<the same password> for the services; the broker does not start without it"
  exit 1
fi
# The values go into JAAS lines and the storage tool's SCRAM argument, which have quoting of their own.
case $password in *[!A-Za-z0-9._~+/-]*)
  say "KAFKA_TLS_PASSWORD may hold only letters, digits and . _ ~ + / - (openssl rand -hex 32 makes one)"
  exit 1 ;;
esac
if [ ${#password} -lt 16 ]; then say "KAFKA_TLS_PASSWORD is too short: 16 characters at least"; exit 1; fi
case $user in '' | *[!A-Za-z0-9._-]*)
  say "KAFKA_TLS_USER may hold only letters, digits and . _ -"
  exit 1 ;;
esac
for file in "$keystore" "$keystore.password" "$ca"; do
  [ -r "$file" ] || { say "$file is missing: the kafka-tls-certs service makes it (docker compose logs kafka-tls-certs)"; exit 1; }
done

umask 077
mkdir -p "$dir/data"
storepass=$(cat "$keystore.password")
cat >"$dir/log4j.properties" <<PROPERTIES
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
PROPERTIES
cat >"$dir/server.properties" <<PROPERTIES
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:9094
controller.listener.names=CONTROLLER
listeners=SASL_SSL://:9093,HOST://:29093,CONTROLLER://127.0.0.1:9094
advertised.listeners=SASL_SSL://kafka-tls:9093,HOST://$host_listener
listener.security.protocol.map=SASL_SSL:SASL_SSL,HOST:SASL_SSL,CONTROLLER:PLAINTEXT
inter.broker.listener.name=SASL_SSL
sasl.mechanism.inter.broker.protocol=PLAIN
sasl.enabled.mechanisms=SCRAM-SHA-512,PLAIN
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="$user" password="$password" user_$user="$password";
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.host.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$user="$password";
listener.name.host.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
ssl.keystore.type=PKCS12
ssl.keystore.location=$keystore
ssl.keystore.password=$storepass
ssl.key.password=$storepass
ssl.truststore.type=PEM
ssl.truststore.location=$ca
ssl.client.auth=none
log.dirs=$dir/data
num.partitions=1
auto.create.topics.enable=true
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
# The controller must take the broker's heartbeat within half this interval (Kafka's default 2 s: 1 s),
# or the broker stays fenced and no client gets metadata. On a busy host (CI: two cores, a test
# suite and the rest of the stack beside it) the one node's controller queue took longer, and the
# broker stayed fenced for minutes ("controller event queue overloaded"). One node has no other
# broker to fail over to, so slower heartbeats cost nothing here.
broker.heartbeat.interval.ms=10000
broker.session.timeout.ms=60000
PROPERTIES
# What the health check connects with: the compose network's listener, as the services do.
cat >"$dir/client.properties" <<PROPERTIES
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="$user" password="$password";
ssl.truststore.type=PEM
ssl.truststore.location=$ca
PROPERTIES

export KAFKA_LOG4J_OPTS="-Dlog4j.configuration=file:$dir/log4j.properties"
/opt/kafka/bin/kafka-storage.sh format --ignore-formatted --cluster-id "$cluster_id" \
  --config "$dir/server.properties" --add-scram "SCRAM-SHA-512=[name=$user,password=$password]"
say "SASL_SSL on kafka-tls:9093 and $host_listener (user $user: SCRAM-SHA-512, PLAIN)"
exec /opt/kafka/bin/kafka-server-start.sh "$dir/server.properties"
