#!/usr/bin/env bash
# `just cluster-status` for a cluster the environment points at (the
# exports of `orchbench remote env`): Nomad's servers and clients,
# Consul's members, the swarm's nodes and the jobs, each through the
# product's own CLI, which reads the same NOMAD_*, CONSUL_* and DOCKER_*
# variables the harness does. Fails when a server or a node is not up.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$root/.tools/bin:$PATH"
say() { printf '[remote] %s\n' "$*"; }
ok=0
say "Nomad at $NOMAD_ADDR"
if out=$(nomad server members 2>&1); then
  echo "$out"
  grep -q ' alive .* true ' <<<"$out" || { say "no Nomad leader"; ok=1; }
  grep -qE ' (failed|left) ' <<<"$out" && { say "a Nomad server is not alive"; ok=1; }
else echo "$out"; ok=1; fi
if out=$(nomad node status 2>&1); then
  echo "$out"
  grep -qE ' (down|disconnected|initializing) *$' <<<"$out" && { say "a Nomad client is not ready"; ok=1; }
else echo "$out"; ok=1; fi
nomad job status 2>&1 | sed 's/^/  /'
say "Consul at ${CONSUL_HTTP_ADDR:-}"
if out=$(consul members 2>&1); then
  echo "$out"
  grep -qE ' (failed|left) ' <<<"$out" && { say "a Consul member is not alive"; ok=1; }
else echo "$out"; ok=1; fi
if [ -n "${DOCKER_HOST:-}" ]; then
  say "Swarm at $DOCKER_HOST"
  if out=$(docker node ls 2>&1); then
    echo "$out"
    grep -qE ' (Down|Unknown) ' <<<"$out" && { say "a swarm node is down"; ok=1; }
  else echo "$out"; ok=1; fi
fi
[ -n "${ORCHBENCH_REGISTRY:-}" ] && say "registry: $ORCHBENCH_REGISTRY (images: just remote-images)"
exit $ok
