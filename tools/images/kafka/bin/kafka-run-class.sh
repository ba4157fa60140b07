#!/usr/bin/env bash
# Runs a Kafka class with the jars of /opt/kafka/libs, honouring the variables of Kafka's own script:
# KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS, KAFKA_GC_LOG_OPTS, KAFKA_LOG4J_OPTS, KAFKA_OPTS.
set -euo pipefail
base=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck disable=SC2086 # the *_OPTS variables are lists of JVM options
exec java ${KAFKA_HEAP_OPTS:--Xmx256M} \
  ${KAFKA_JVM_PERFORMANCE_OPTS:--server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true} \
  ${KAFKA_GC_LOG_OPTS:-} \
  ${KAFKA_LOG4J_OPTS:--Dlog4j.configuration=file:$base/config/tools-log4j.properties} \
  ${KAFKA_OPTS:-} -cp "$base/libs/*" "$@"
