#!/usr/bin/env bash
# Starts dockerd when the docker.io package is installed and no daemon answers,
# and stops it only if this project started it (its PID is recorded). What a
# dockerd it started adds to the host (docker0, docker_gwbridge, DOCKER
# chains, netns mounts) is removed when it stops (cluster/hoststate.sh), and
# a swarm this project initialised is left first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pids="$root/.state/pids"
mkdir -p "$pids" "$root/.state/logs"
say() { printf '[dockerd] %s\n' "$*"; }

answers() { timeout 5 docker info >/dev/null 2>&1; }

up() {
  if answers; then say "a docker daemon already answers"; return; fi
  command -v dockerd >/dev/null || { say "dockerd is not installed (apt-get install docker.io); run ./justw tools"; exit 1; }
  say "starting dockerd"
  "$root/cluster/hoststate.sh" snapshot "$root/.state/hoststate/dockerd"
  # --userland-proxy=false: a published port answers on loopback through a
  # kernel NAT rule, as Nomad's CNI port mappings do, rather than through
  # docker-proxy, a userland relay the load-path gate refuses to measure through
  setsid dockerd --data-root /var/lib/docker --userland-proxy=false >"$root/.state/logs/dockerd.log" 2>&1 </dev/null &
  echo $! >"$pids/dockerd"
  for _ in $(seq 1 60); do
    answers && { say "ready (pid $(cat "$pids/dockerd"))"; return; }
    kill -0 "$(cat "$pids/dockerd")" 2>/dev/null || break
    sleep 1
  done
  say "dockerd did not answer within 60 s; last lines of .state/logs/dockerd.log:"
  tail -n 20 "$root/.state/logs/dockerd.log" | sed 's/^/    /'
  exit 1
}

down() {
  [ -f "$pids/dockerd" ] || return 0
  local pid; pid=$(cat "$pids/dockerd")
  if kill -0 "$pid" 2>/dev/null && [ -f "$root/.state/swarm-initialised" ]; then
    say "leaving the swarm this project initialised"
    timeout 60 docker swarm leave --force >/dev/null 2>&1 || say "docker swarm leave failed; its state stays in /var/lib/docker/swarm"
  fi
  rm -f "$root/.state/swarm-initialised"
  if kill -0 "$pid" 2>/dev/null; then
    say "stopping dockerd pid $pid"
    # containerd is dockerd's child; stopping dockerd first lets it shut containers down cleanly
    local children; children=$(pgrep -P "$pid" || true)
    kill "$pid"
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
    for c in $children; do kill "$c" 2>/dev/null || true; done
  fi
  rm -f "$pids/dockerd"
  "$root/cluster/hoststate.sh" clean "$root/.state/hoststate/dockerd" --docker
  say "stopped"
}

case "${1:-up}" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
