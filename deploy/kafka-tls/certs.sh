#!/bin/sh
# The kafka-tls profile's certificates (docker-compose.yml, service kafka-tls-certs; runs once, as
# root, in the Kafka image): a local CA and the broker's certificate, made with the JRE's keytool.
#   /tls/broker (volume kafka-tls-broker, the broker's only)  broker.p12: PKCS12 keystore with the
#               broker's key and its chain; broker.p12.password: that keystore's random password.
#               Owned by the image's appuser, mode 0600.
#   /tls/ca     (volume kafka-tls-ca, read-only in the Gatehouse services at /etc/gatehouse/tls)
#               ca.pem: the CA's certificate, all a client needs (KAFKA_SSL_CA_CERTFILE).
# The broker's certificate names kafka-tls (the compose network), localhost and 127.0.0.1 (the
# published host listener). The CA's key lives only while this runs, so nothing else can ever be
# signed by it. Certificates that exist are kept: `docker compose down -v` removes them.
# A CA for trying the profile out: a production broker has certificates of your own CA or a public one.
set -eu
broker_dir=/tls/broker
ca_dir=/tls/ca
say() { echo "kafka-tls-certs: $*" >&2; }

if [ -s "$broker_dir/broker.p12" ] && [ -s "$broker_dir/broker.p12.password" ] && [ -s "$ca_dir/ca.pem" ]; then
  say "keeping the certificates made on $(date -u -r "$ca_dir/ca.pem" +%Y-%m-%dT%H:%M:%SZ)"
  exit 0
fi
owner="$(id -u appuser):$(id -g appuser)" || { say "no user appuser in this image (the broker runs as it)"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
umask 077
# 32 random bytes as hex: od and tr are in every base image (busybox too).
password=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
store() { # keystore file, keytool arguments...: keytool on a PKCS12 keystore with the password
  file=$1; shift
  # A short-lived JVM: no optimising compiler, the serial collector (half the CPU at start).
  keytool -J-XX:TieredStopAtLevel=1 -J-XX:+UseSerialGC "$@" \
    -keystore "$work/$file" -storetype PKCS12 -storepass "$password" -noprompt
}

store ca.p12 -genkeypair -alias ca -keyalg RSA -keysize 2048 -validity 3650 \
  -dname "CN=Gatehouse compose kafka-tls CA" -ext bc:c=ca:true,pathlen:0 -ext ku:c=keyCertSign,cRLSign
store ca.p12 -exportcert -alias ca -rfc -file "$work/ca.pem"
store broker.p12 -genkeypair -alias broker -keyalg RSA -keysize 2048 -validity 825 -dname "CN=kafka-tls"
store broker.p12 -certreq -alias broker -file "$work/broker.csr"
store ca.p12 -gencert -alias ca -infile "$work/broker.csr" -outfile "$work/broker.pem" -rfc -validity 825 \
  -ext san=dns:kafka-tls,dns:localhost,ip:127.0.0.1 -ext eku=serverAuth -ext ku:c=digitalSignature,keyEncipherment
# The signed certificate and the CA's replace the self-signed one: the chain the broker presents.
cat "$work/broker.pem" "$work/ca.pem" >"$work/chain.pem"
store broker.p12 -importcert -alias broker -file "$work/chain.pem"
printf '%s\n' "$password" >"$work/broker.p12.password"

install_file() { # source, target, mode, owner: written next to the target, then renamed
  cp "$1" "$2.partial" && chown "$4" "$2.partial" && chmod "$3" "$2.partial" && mv "$2.partial" "$2"
}
mkdir -p "$broker_dir" "$ca_dir"
chmod 0755 "$ca_dir"
chown "$owner" "$broker_dir" && chmod 0700 "$broker_dir"
install_file "$work/broker.p12" "$broker_dir/broker.p12" 0600 "$owner"
install_file "$work/broker.p12.password" "$broker_dir/broker.p12.password" 0600 "$owner"
install_file "$work/ca.pem" "$ca_dir/ca.pem" 0644 0:0
say "made a local CA and the certificate of kafka-tls (localhost, 127.0.0.1): $ca_dir/ca.pem"
