#!/bin/sh
# Arguments starting with `-` are nats-server's options, as in the public image.
set -e
case "$1" in -*) set -- nats-server "$@" ;; esac
exec "$@"
