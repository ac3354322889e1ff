#!/usr/bin/env bash
# The node probe as a Swarm global service (docs/node-probe.md), for a
# swarm whose nodes run no Nomad client: on the embedded cluster and the
# emulated nodes the Nomad system job (jobs/node-probe.nomad.tpl) already
# runs one probe per host, which the harness finds under the same node
# names, and a second probe would need another port.
#   swarm-probe.sh up [PORT]   create or update the service node-probe (default port 7070)
#   swarm-probe.sh down        remove it
# The docker CLI talks to a manager (DOCKER_HOST); PROBE_IMAGE (default
# orchbench/orchbench:local) must be on every node.
#
# Swarm cannot give a service the host's PID namespace, so the node's /proc
# is mounted instead (a proc mount shows the PID namespace it was made in),
# with the cgroup tree and Docker's container state, read-only. The host's
# network: the probe answers on the node's own address, as the harness
# finds it (the node's address in the swarm), and this kernel has no IPVS
# for a routing mesh. SYS_PTRACE reads other processes' fd links (which
# process accepts a connection), SYS_ADMIN enters a network namespace.
set -euo pipefail
say() { printf '[swarm-probe] %s\n' "$*"; }
die() { say "$*"; exit 1; }
image=${PROBE_IMAGE:-orchbench/orchbench:local}
service=node-probe

up() {
  local port=${1:-7070}
  [[ $port =~ ^[0-9]+$ ]] && [ "$port" -gt 0 ] && [ "$port" -lt 65536 ] || die "port '$port' is not a port number"
  docker info --format '{{.Swarm.ControlAvailable}}' 2>/dev/null | grep -qx true \
    || die "step 'swarm manager' failed: the docker daemon (${DOCKER_HOST:-local}) is not a swarm manager"
  if docker service inspect "$service" >/dev/null 2>&1; then
    say "removing the old $service"; docker service rm "$service" >/dev/null
  fi
  docker service create --detach --quiet --name "$service" --mode global \
    --label "orchbench.node-probe.port=$port" \
    --network host \
    --cap-add CAP_SYS_PTRACE --cap-add CAP_SYS_ADMIN \
    --mount type=bind,src=/proc,dst=/host/proc,readonly \
    --mount type=bind,src=/sys/fs/cgroup,dst=/host/sys/fs/cgroup,readonly \
    --mount type=bind,src=/var/lib/docker/containers,dst=/host/docker/containers,readonly \
    --mount type=bind,src=/var/lib/docker/image,dst=/host/docker/image,readonly \
    --mount type=bind,src=/etc,dst=/host/etc,readonly \
    --mount type=bind,src=/usr/lib/os-release,dst=/host/usr/lib/os-release,readonly \
    --env 'ORCHBENCH_NODE_NAME={{.Node.Hostname}}' \
    "$image" node-probe --listen "0.0.0.0:$port" \
    --proc /host/proc --cgroup-root /host/sys/fs/cgroup --docker-root /host/docker --system-root /host >/dev/null \
    || die "step 'service create $service' failed"
  local _
  for _ in $(seq 60); do
    local want have
    want=$(docker node ls --filter role=worker -q | wc -l)
    have=$(docker service ps "$service" --filter desired-state=running --format '{{.CurrentState}}' | grep -c '^Running' || true)
    if [ "$have" -ge 1 ] && [ "$have" -ge "$want" ]; then say "$service: $have tasks running on port $port"; return 0; fi
    sleep 1
  done
  die "step '$service running' failed: $(docker service ps --no-trunc "$service" --format '{{.Node}} {{.CurrentState}} {{.Error}}' | paste -sd';')"
}

case "${1:-}" in
  up) shift; up "$@" ;;
  down) docker service rm "$service" >/dev/null 2>&1 || true; say "$service removed" ;;
  *) echo "usage: $0 up [PORT] | down" >&2; exit 2 ;;
esac
