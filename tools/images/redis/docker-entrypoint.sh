#!/bin/sh
# As the public image's entry point: `-…` or `*.conf` first means redis-server's arguments; the
# server starts as user redis (owning /data) with protected mode off unless the arguments say else.
set -e
case "$1" in -*|*.conf) set -- redis-server "$@" ;; esac
if [ "$1" = redis-server ]; then
  shift
  # A config file must come first; options after it override it, and later options win.
  case "$1" in *.conf) conf=$1; shift; set -- "$conf" --protected-mode no "$@" ;; *) set -- --protected-mode no "$@" ;; esac
  set -- redis-server "$@"
  if [ "$(id -u)" = 0 ]; then
    find . \! -user redis -exec chown redis '{}' +
    exec setpriv --reuid=redis --regid=redis --init-groups "$@"
  fi
fi
exec "$@"
