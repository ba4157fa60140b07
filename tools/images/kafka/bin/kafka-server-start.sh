#!/usr/bin/env bash
# Usage: kafka-server-start.sh server.properties
base=$(cd "$(dirname "$0")/.." && pwd)
export KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:--Xmx1G -Xms1G}
export KAFKA_LOG4J_OPTS=${KAFKA_LOG4J_OPTS:--Dlog4j.configuration=file:$base/config/log4j.properties}
exec "$(dirname "$0")/kafka-run-class.sh" kafka.Kafka "$@"
