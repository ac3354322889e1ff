#!/bin/bash
# Entrypoint of orchbench/memcached: runs memcached with the arguments given
# and, when $MEMCACHED_SEED_DIR names a dataset snapshot's cache dump
# (orchbench dsb social-network snapshot), sets every item of it once
# memcached listens, so a deployment starts with the cache a finished
# dataset load leaves. $MEMCACHED_SEED_MARKER, a file in the allocation's
# data dir, records that the allocation was warmed: a restarted memcached
# starts empty, as any restarted memcached does.
set -eu

host=127.0.0.1
port=11211
prev=
for arg in "$@"; do
  case $prev in
    -l|--listen) host=${arg%%,*} ;;
    -p|--port) port=$arg ;;
  esac
  prev=$arg
done
case $host in 0.0.0.0|"") host=127.0.0.1 ;; esac

warm() {
  for _ in $(seq 1 300); do
    if { exec 3<>"/dev/tcp/$host/$port"; } 2>/dev/null; then
      # the dump is "set ... noreply" commands; quit is read after all of them
      cat "$MEMCACHED_SEED_DIR"/*.memcached >&3
      printf 'quit\r\n' >&3
      cat <&3 >/dev/null || true
      exec 3>&-
      [ -z "${MEMCACHED_SEED_MARKER:-}" ] || : >"$MEMCACHED_SEED_MARKER"
      echo "orchbench: warmed the cache from $MEMCACHED_SEED_DIR" >&2
      return
    fi
    sleep 0.1
  done
  echo "orchbench: memcached did not listen on $host:$port; the cache stays empty" >&2
}

if [ -n "${MEMCACHED_SEED_DIR:-}" ] && { [ -z "${MEMCACHED_SEED_MARKER:-}" ] || [ ! -e "$MEMCACHED_SEED_MARKER" ]; }; then
  warm &
fi
exec memcached "$@"
