# Functions the cluster scripts share; each script defines say() first.

# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND until it succeeds.
wait_for() {
  local limit=$1 what=$2; shift 2
  local deadline=$(( $(date +%s) + limit ))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.5
  done
  say "$what: ok"
}

# stop_pidfile FILE NAME SIGNAL: stops the process FILE records with SIGNAL,
# then SIGKILL after a 10 s grace period, and removes FILE.
stop_pidfile() {
  local file=$1 name=$2 signal=$3 pid
  if ! { [ -f "$file" ] && pid=$(cat "$file") && kill -0 "$pid" 2>/dev/null; }; then
    rm -f "$file"; return 0
  fi
  say "stopping $name (pid $pid)"
  kill -"$signal" "$pid" 2>/dev/null || true
  for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$file"
}
