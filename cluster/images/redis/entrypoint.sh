#!/bin/sh
# Entrypoint of orchbench/redis: makes Redis's --dir (Redis refuses to start
# when it is missing, and /alloc/data starts empty), and fills it from
# $REDIS_SEED_DIR when it holds no data yet, then runs redis-server with the
# arguments given.
#
# A dataset-snapshot image (orchbench dsb social-network snapshot) sets
# REDIS_SEED_DIR to its copy of a loaded Redis's files. A restarted task
# finds its own data and is never seeded over. A marker names a seeding cut
# short, so a half-copied dir is seeded again rather than taken for data.
set -eu

dir=.
prev=
for arg in "$@"; do
  [ "$prev" = "--dir" ] && dir=$arg
  prev=$arg
done
mkdir -p "$dir"

marker="$dir/.orchbench-seeding"
if [ -n "${REDIS_SEED_DIR:-}" ]; then
  if [ -e "$marker" ] || { [ ! -e "$dir/appendonlydir" ] && [ ! -e "$dir/dump.rdb" ]; }; then
    : >"$marker"
    rm -rf "$dir/appendonlydir" "$dir/dump.rdb"
    cp -R "$REDIS_SEED_DIR/." "$dir/"
    sync
    rm -f "$marker"
    echo "orchbench: seeded $dir from $REDIS_SEED_DIR" >&2
  fi
fi
exec redis-server "$@"
