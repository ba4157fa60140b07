#!/bin/sh
# The entry point, as the public image's run-java.sh (Red Hat's OpenJDK runtime images) runs this
# application: java with JAVA_OPTS and JAVA_OPTS_APPEND (lists of JVM options), -jar JAVA_APP_JAR.
# shellcheck disable=SC2086 # the *_OPTS variables are lists of options
exec java ${JAVA_OPTS:-} ${JAVA_OPTS_APPEND:-} -jar "$JAVA_APP_JAR" "$@"
