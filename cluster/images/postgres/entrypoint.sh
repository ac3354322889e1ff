#!/bin/sh
# orchbench/postgres: Debian's PostgreSQL 15 with its data in PGDATA (the
# pack puts it in the allocation's data dir, so a task restart keeps it).
# On the first start it runs initdb, creates POSTGRES_USER (a superuser with
# POSTGRES_PASSWORD) and POSTGRES_DB, and runs in that database the SQL of
# POSTGRES_INIT_SCRIPT (the text; an env value crosses every orchestrator)
# and of POSTGRES_INIT_SQL (a file); a marker file says the whole of that finished, so a start
# interrupted half-way initialises again from scratch. Then it runs postgres
# in the foreground with any arguments given (e.g. -p PORT).
set -eu
: "${PGDATA:=/alloc/data/postgres}"
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set: clients connect over TCP with scram-sha-256}"
export PGDATA
bin=/usr/lib/postgresql/15/bin
marker="$PGDATA/orchbench-initialised"
sock=$(mktemp -d)

if [ ! -f "$marker" ]; then
  echo "orchbench-postgres: initialising $PGDATA"
  rm -rf "$PGDATA"
  mkdir -p "$PGDATA"
  chmod 0700 "$PGDATA"
  pw=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pw"
  "$bin/initdb" -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pw" -E UTF8 --locale=C \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pw"
  # clients come from other tasks over TCP, always with the password
  echo "host all all 0.0.0.0/0 scram-sha-256" >>"$PGDATA/pg_hba.conf"
  echo "host all all ::/0 scram-sha-256" >>"$PGDATA/pg_hba.conf"
  # a socket-only server while the database is made
  "$bin/pg_ctl" -D "$PGDATA" -w -s -o "-c listen_addresses='' -k $sock" start
  if [ "$POSTGRES_DB" != postgres ]; then
    "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$sock" -U "$POSTGRES_USER" -d postgres -c "CREATE DATABASE \"$POSTGRES_DB\""
  fi
  if [ -n "${POSTGRES_INIT_SCRIPT:-}" ]; then
    echo "orchbench-postgres: running POSTGRES_INIT_SCRIPT in $POSTGRES_DB"
    printf '%s\n' "$POSTGRES_INIT_SCRIPT" | "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$sock" -U "$POSTGRES_USER" -d "$POSTGRES_DB" -f -
  fi
  if [ -n "${POSTGRES_INIT_SQL:-}" ]; then
    echo "orchbench-postgres: running $POSTGRES_INIT_SQL in $POSTGRES_DB"
    "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$sock" -U "$POSTGRES_USER" -d "$POSTGRES_DB" -f "$POSTGRES_INIT_SQL"
  fi
  "$bin/pg_ctl" -D "$PGDATA" -w -s -m fast stop
  date -u +%Y-%m-%dT%H:%M:%SZ >"$marker"
fi
exec "$bin/postgres" -D "$PGDATA" -k "$sock" "$@"
