#!/usr/bin/env bash
# An emulated multi-node cluster on this machine (docs/cluster.md, "Many
# nodes"): every node is a container of orchbench/node with its own network
# address, dockerd, Consul and Nomad agents and CPU/memory budget, on the
# project's dockerd. Everything it makes is named $NODES_NAME-* (obn-*) and labelled
# orchbench.nodes; the embedded single-node cluster is not touched.
#   nodes.sh up [nodes=]N [servers=]S [node_cpus=C] [node_memory=M] [link_delay=D] [k8s=1]
#                                   S servers (1 or 3), N-1 workers and 1 client node (default 4 3);
#                                   k8s=1 (or ORCHBENCH_K8S=1) runs Kubernetes across them too (nodes-k8s.sh)
#   nodes.sh status                 every node's role, address and agents; fails when one is missing
#   nodes.sh env                    the exports that point orchbench at the nodes (eval "$(nodes.sh env)")
#   nodes.sh push-images IMAGE...   pushes images to the registry on the client node, and every node pulls them now
#   nodes.sh registry               the registry's address for the host's dockerd (REGISTRY=... just images X)
#   nodes.sh load-images IMAGE...   copies images from the project's dockerd into the workers and the client
#   nodes.sh probes                 (re)deploys the node probe (ORCHBENCH_BIN) on every Nomad client
#   nodes.sh infra                  (re)deploys VictoriaMetrics and the Nomad Autoscaler on the client node
#   nodes.sh down                   removes every node, its volume, the network and the nodes' cgroups
#   nodes.sh present                succeeds when a node of this cluster exists (cluster-status, cluster-down)
#   nodes.sh revive NODE...         starts a stopped node again with its agents, as a node fault's end does
# node_cpus (NODE_CPUS, default 0.5) and node_memory (NODE_MEMORY, default 2560m:
# the social network's baseline at resource_scale 0.03 fits on 3 workers)
# are each node's budget; NODES_SUBNET (default 10.77.0.0/24) the nodes' network;
# link_delay (LINK_DELAY, e.g. 0.1ms; default none) a tc netem delay on every
# node's link, so a packet between two nodes takes it twice per round trip.
# k8s_eviction (K8S_EVICTION, default 300 s as Kubernetes') is how long pods
# stay bound to an unreachable node; k8s_grace (K8S_NODE_GRACE, default 50 s)
# how long a node may be silent before it is NotReady.
# NODES_NAME (default obn) prefixes every name, so that two clusters of
# nodes (two worktrees' tests, say) can run side by side on their own subnets.
set -euo pipefail
# The nodes are containers of the project's dockerd (NODES_DOCKER_HOST, else
# this machine's socket), never of the engine `nodes.sh env` exports for a
# sweep, a Swarm manager inside the cluster: `eval "$(nodes.sh env)"` and a
# later `nodes.sh down` in the same shell must still find the nodes.
if [ -n "${NODES_DOCKER_HOST:-}" ]; then export DOCKER_HOST=$NODES_DOCKER_HOST; else unset DOCKER_HOST; fi
unset DOCKER_CONTEXT DOCKER_TLS_VERIFY DOCKER_CERT_PATH
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.tools/bin"
say() { printf '[nodes] %s\n' "$*"; }
die() { say "$*"; exit 1; }
# shellcheck source=lib.sh
source "$root/cluster/lib.sh"
# shellcheck source=nodes-agents.sh
source "$root/cluster/nodes-agents.sh"
# shellcheck source=nodes-status.sh
source "$root/cluster/nodes-status.sh"
# shellcheck source=nodes-registry.sh
source "$root/cluster/nodes-registry.sh"
# shellcheck source=nodes-probe.sh
source "$root/cluster/nodes-probe.sh"
# shellcheck source=nodes-infra.sh
source "$root/cluster/nodes-infra.sh"
# shellcheck source=nodes-k8s.sh
source "$root/cluster/nodes-k8s.sh"
# shellcheck source=nodes-k8s-metrics.sh
source "$root/cluster/nodes-k8s-metrics.sh"
# shellcheck source=k8s-node.sh
source "$root/cluster/k8s-node.sh"

cluster_name=${NODES_NAME:-obn}
[[ $cluster_name =~ ^[a-z][a-z0-9]{0,7}$ ]] || die "NODES_NAME=$cluster_name: a lower-case word of at most 8 letters and digits is needed"
network=$cluster_name-nodes
# label=value filters select this cluster's containers, volumes and network only
label=orchbench.nodes=$cluster_name
# the nodes' cgroups all sit under this one, in every hierarchy, so that
# down finds what their runtimes leave behind
cgroup_root=$cluster_name-nodes
subnet=${NODES_SUBNET:-10.77.0.0/24}
node_cpus=${NODE_CPUS:-0.5}
node_memory=${NODE_MEMORY:-2560m}
link_delay=${LINK_DELAY:-}
# Kubernetes across the nodes too (nodes-k8s.sh); off keeps the nodes as they were
k8s=${ORCHBENCH_K8S:-0}
# the registry's address (nodes-registry.sh, nodes-agents.sh' dockerd flags)
# shellcheck disable=SC2034
client_addr=${subnet%.0/24}.10
# every node's dockerd also listens on ADDR:$engine_port (nodes-agents.sh)
# shellcheck disable=SC2034
engine_port=2375
# a node's own dockerd, Consul and Nomad agents take about 90 MiB idle:
# reserved, so that allocations do not count on it
memory_reserved_mb=256

# topology N S: fills nodes/roles/addrs (servers first, then workers, then
# the client) and server_addrs.
nodes=() roles=() addrs=() server_addrs=()
topology() {
  local n=$1 s=$2 prefix=${subnet%.0/24} i
  for ((i = 1; i <= s; i++)); do nodes+=("$cluster_name-server$i"); roles+=(server); addrs+=("$prefix.$((10 + i))"); server_addrs+=("$prefix.$((10 + i))"); done
  for ((i = 1; i < n; i++)); do nodes+=("$cluster_name-worker$i"); roles+=(worker); addrs+=("$prefix.$((20 + i))"); done
  nodes+=("$cluster_name-client"); roles+=(client); addrs+=("$prefix.10")
}

# ip_int A.B.C.D: the address as an integer, for overlap tests
ip_int() { local IFS=.; read -r a b c d <<<"$1"; echo $(( (a << 24) | (b << 16) | (c << 8) | d )); }

# overlaps CIDR: true when CIDR and the nodes' subnet share an address
overlaps() {
  local net=${1%/*} len=${1#*/} mine=${subnet%/*}
  [ "$len" = "$1" ] && len=32
  local lo hi mlo mhi
  lo=$(( $(ip_int "$net") & ~((1 << (32 - len)) - 1) & 0xffffffff )); hi=$(( lo + (1 << (32 - len)) - 1 ))
  mlo=$(ip_int "$mine"); mhi=$(( mlo + 255 ))
  [ "$lo" -le "$mhi" ] && [ "$mlo" -le "$hi" ]
}

# validate N S: every refusal happens here, before anything starts.
validate() {
  local n=$1 s=$2
  [[ $n =~ ^[0-9]+$ ]] || die "nodes=$n: a whole number is needed"
  [[ $s =~ ^[0-9]+$ ]] || die "servers=$s: 1 or 3"
  [ "$s" = 1 ] || [ "$s" = 3 ] || die "servers=$s: a control plane of 1 or 3 servers (raft needs an odd number; 2 tolerates no loss)"
  [ "$n" -ge 2 ] || die "nodes=$n with servers=$s: the emulated cluster needs nodes >= 2 (N-1 workers and the client); nodes=1 is the embedded single-node cluster (just cluster-up)"
  [ "$n" -le 60 ] || die "nodes=$n: at most 60 (the node addresses are .21 to .80 of the /24)"
  [[ $subnet =~ ^(10|172|192)\.[0-9]+\.[0-9]+\.0/24$ ]] || die "NODES_SUBNET=$subnet: a private /24 such as 10.77.0.0/24 is needed"
  [[ $node_cpus =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v c="$node_cpus" -v m="$(nproc)" 'BEGIN { exit !(c > 0 && c <= m) }' \
    || die "node_cpus=$node_cpus: a number of cores above 0 and at most this machine's $(nproc)"
  memory_total_mb=$(mib "$node_memory") || die "node_memory=$node_memory: a size such as 2g or 1536m is needed"
  [ "$memory_total_mb" -ge 512 ] || die "node_memory=$node_memory: at least 512m ($memory_reserved_mb MiB of it are reserved for the node's own agents)"
  [ -z "$link_delay" ] || [[ $link_delay =~ ^[0-9]+(\.[0-9]+)?(us|ms)$ ]] \
    || die "link_delay=$link_delay: a delay such as 0.1ms or 200us is needed (tc netem; empty for none)"
  [ "$k8s" = 0 ] || [ "$k8s" = 1 ] || die "k8s=$k8s: 1 runs Kubernetes across the nodes, 0 does not"
  [ "$k8s" = 0 ] || k8s_need
  docker info >/dev/null 2>&1 || die "the project's dockerd does not answer (docker info)"
  if [ -n "$link_delay" ]; then
    # the probe runs tc in the node image: built here when missing (cached)
    "$root/cluster/images.sh" node >/dev/null
    netem_available || die "link_delay=$link_delay: this kernel has no netem qdisc ($(uname -r); tc says: $(netem_probe 2>&1 | tail -n 1)); a delay between nodes needs CONFIG_NET_SCH_NETEM"
  fi
  # another docker network or a host route on the subnet
  local other cidr
  while read -r other; do
    [ "$other" = "$network" ] && continue
    for cidr in $(docker network inspect -f '{{range .IPAM.Config}}{{.Subnet}} {{end}}' "$other" 2>/dev/null); do
      [[ $cidr == *:* ]] && continue
      overlaps "$cidr" && die "NODES_SUBNET=$subnet is in use: docker network '$other' has $cidr; choose another (NODES_SUBNET=10.78.0.0/24)"
    done
  done < <(docker network ls --format '{{.Name}}')
  while read -r cidr dev; do
    [ "$cidr" = default ] && continue
    [ "$dev" = "$(network_bridge)" ] && continue
    overlaps "$cidr" && die "NODES_SUBNET=$subnet is in use: the host routes $cidr through $dev; choose another (NODES_SUBNET=10.78.0.0/24)"
  done < <(ip -4 -o route show | awk '{for (i = 1; i < NF; i++) if ($i == "dev") {print $1, $(i + 1); break}}')
  [ -x "$bin/nomad" ] && [ -x "$bin/consul" ] || die "$bin/nomad or $bin/consul is missing: run ./justw tools first"
  [ -x "$bin/registry" ] || die "$bin/registry is missing: run cluster/tools.sh registry (or ./justw tools) first"
  # an address of ours held by a container that is not one of our nodes
  if docker network inspect "$network" >/dev/null 2>&1; then
    [ "$(docker network inspect -f '{{index .Labels "orchbench.nodes"}}' "$network")" = "$cluster_name" ] \
      || die "a docker network named $network exists and was not made by nodes.sh; remove it or rename it"
    local holder addr
    while read -r holder addr; do
      [ -n "$holder" ] || continue
      case "$holder" in "$cluster_name"-server*|"$cluster_name"-worker*|"$cluster_name"-client) continue ;; esac
      die "address ${addr%/*} on $network is taken by container $holder; remove it first"
    done < <(docker network inspect -f '{{range .Containers}}{{.Name}} {{.IPv4Address}}{{"\n"}}{{end}}' "$network")
  fi
}

# network_bridge: the host interface of our own network (its route is ours)
network_bridge() {
  local id; id=$(docker network inspect -f '{{.Id}}' "$network" 2>/dev/null) || return 0
  echo "br-${id:0:12}"
}

# mib SIZE: 2g, 1536m, 1024 (MiB) as MiB
mib() {
  local v=${1,,}
  case "$v" in
    *g) [[ ${v%g} =~ ^[0-9]+$ ]] && echo $(( ${v%g} * 1024 )) ;;
    *m) [[ ${v%m} =~ ^[0-9]+$ ]] && echo "${v%m}" ;;
    *) [[ $v =~ ^[0-9]+$ ]] && echo "$v" ;;
  esac
}

existing() { docker ps -a --filter "label=$label" --format '{{.Names}}' | sort; }

run_node() {
  local node=$1 role=$2 addr=$3
  docker volume create --label "$label" "$node-docker" >/dev/null
  # the client node holds the registry: its blobs on a volume of their
  # own, its port published on a loopback port of the host, where the
  # host's dockerd may push in plain HTTP (nodes-registry.sh)
  local extra=()
  if [ "$role" = client ]; then
    docker volume create --label "$label" "$node-registry" >/dev/null
    extra=(-v "$node-registry:/var/lib/registry" -v "$bin/registry:/opt/obn/bin/registry:ro" -p "127.0.0.1::$registry_port")
    local m; while read -r m; do extra+=("$m"); done < <(infra_mounts)
  fi
  if [ "$k8s" = 1 ]; then
    local m; while read -r m; do extra+=("$m"); done < <(k8s_mounts "$node")
  fi
  # A machine's flags (lib.sh), so that the node's dockerd and Nomad make
  # their tasks' cgroups under the node's own. /var/lib/docker on a volume:
  # overlay2 cannot sit on overlay2. --init reaps what the agents leave.
  run_machine "$node" --init \
    --label "$label" --label "orchbench.node.role=$role" \
    --cgroup-parent "/$cgroup_root" --cpus "$node_cpus" --memory "$node_memory" \
    --network "$network" --ip "$addr" -v "$node-docker:/var/lib/docker" \
    -v "$bin/nomad:/opt/obn/bin/nomad:ro" -v "$bin/consul:/opt/obn/bin/consul:ro" "${extra[@]}" \
    orchbench/node:local sleep infinity >/dev/null || die "step 'start node $node' failed"
}

consul_leader_known() { output_has '^"[0-9.]+:8300"$' docker exec "${nodes[0]}" curl -sf "http://${addrs[0]}:8500/v1/status/leader"; }
consul_members_alive() { [ "$(docker exec "${nodes[0]}" /opt/obn/bin/consul members -http-addr "http://${addrs[0]}:8500" 2>/dev/null | grep -c ' alive ')" -eq "${#nodes[@]}" ]; }
nomad_leader_known() { output_has '^"[0-9.]+:4647"$' docker exec "${nodes[0]}" curl -sf "http://${addrs[0]}:4646/v1/status/leader"; }
nomad_clients_ready() { [ "$(docker exec "${nodes[0]}" /opt/obn/bin/nomad node status -address "http://${addrs[0]}:4646" 2>/dev/null | grep -c ' ready *$')" -eq $(( ${#nodes[@]} - servers )) ]; }

# up [nodes=]N [servers=]S [node_cpus=C] [node_memory=M]: the words just
# passes on from `just cluster-up nodes=4 servers=3`, or bare numbers
# shellcheck disable=SC2034 # k8s_eviction and k8s_grace: nodes-k8s.sh reads them
up() {
  local n=4 s=3 arg pos=0
  for arg in "$@"; do
    case "$arg" in
      nodes=*) n=${arg#*=} ;;
      servers=*) s=${arg#*=} ;;
      node_cpus=*) node_cpus=${arg#*=} ;;
      node_memory=*) node_memory=${arg#*=} ;;
      link_delay=*) link_delay=${arg#*=} ;;
      k8s=*) k8s=${arg#*=} ;;
      k8s_eviction=*) k8s_eviction=${arg#*=} ;;
      k8s_grace=*) k8s_grace=${arg#*=} ;;
      *=*) die "unknown setting '$arg' (known: nodes servers node_cpus node_memory link_delay k8s k8s_eviction k8s_grace)" ;;
      *) pos=$((pos + 1)); case $pos in 1) n=$arg ;; 2) s=$arg ;; *) die "too many arguments: $*" ;; esac ;;
    esac
  done
  servers=$s
  validate "$n" "$s"
  topology "$n" "$s"
  local have; have=$(existing)
  if [ -n "$have" ]; then
    [ "$have" = "$(printf '%s\n' "${nodes[@]}" | sort)" ] \
      || die "nodes of another shape exist ($(echo $have)); run 'just nodes-down' first"
    say "already up with this shape; checking"
    status; return
  fi
  local t0; t0=$(date +%s)
  trap 'say "up failed: what it made stays for diagnosis (docker exec NODE sh -c \"tail /var/log/obn/*.log\"); just nodes-down removes it"' EXIT
  "$root/cluster/images.sh" node
  docker network inspect "$network" >/dev/null 2>&1 \
    || docker network create --label "$label" --subnet "$subnet" "$network" >/dev/null \
    || die "step 'network create $network $subnet' failed"
  say "starting ${#nodes[@]} nodes ($s servers, $((n - 1)) workers, 1 client) on $subnet, each --cpus $node_cpus --memory $node_memory (Nomad: $memory_total_mb MiB, $memory_reserved_mb reserved)"
  local i
  for i in "${!nodes[@]}"; do run_node "${nodes[$i]}" "${roles[$i]}" "${addrs[$i]}"; done
  for i in "${!nodes[@]}"; do set_link_delay "${nodes[$i]}"; done
  start_registry "$cluster_name-client"
  # every Nomad client's bridge-mode tasks need the pause image (infra_image);
  # built only when missing (a rebuild would retag it for everyone)
  docker image inspect orchbench/pause:local >/dev/null 2>&1 || "$root/cluster/images.sh" pause
  push_images orchbench/pause:local
  for i in "${!nodes[@]}"; do start_dockerd "${nodes[$i]}" "${addrs[$i]}"; done
  for i in "${!nodes[@]}"; do
    wait_for 60 "${nodes[$i]}: dockerd" node_docker_ready "${nodes[$i]}" \
      || die "step 'dockerd' on ${nodes[$i]} failed: $(docker exec "${nodes[$i]}" tail -n 5 /var/log/obn/dockerd.log)"
  done
  swarm_form
  for i in "${!nodes[@]}"; do start_consul "${nodes[$i]}" "${addrs[$i]}" "${roles[$i]}"; done
  wait_for 60 "consul: leader elected" consul_leader_known || die "step 'consul leader' failed: $(docker exec "${nodes[0]}" tail -n 5 /var/log/obn/consul.log)"
  wait_for 60 "consul: ${#nodes[@]} members alive" consul_members_alive || die "step 'consul members' failed"
  for i in "${!nodes[@]}"; do start_nomad "${nodes[$i]}" "${addrs[$i]}" "${roles[$i]}"; done
  wait_for 60 "nomad: leader elected" nomad_leader_known || die "step 'nomad leader' failed: $(docker exec "${nodes[0]}" tail -n 5 /var/log/obn/nomad.log)"
  # a client waits up to 55 s for its drivers' first fingerprints before it registers
  wait_for 150 "nomad: $(( ${#nodes[@]} - s )) clients ready" nomad_clients_ready \
    || die "step 'nomad clients ready' failed: $(docker exec "${nodes[0]}" /opt/obn/bin/nomad node status -address "http://${addrs[0]}:4646" 2>&1 | paste -sd';')"
  deploy_probes
  deploy_node_infra
  [ "$k8s" = 0 ] || k8s_up
  trap - EXIT
  say "up in $(( $(date +%s) - t0 )) s"
  status
}

# load_images IMAGE...: docker save once, docker load into every node that
# runs tasks (workers and the client; the servers run none): the way
# without the registry (push-images), for an image a job names without it.
# revive NODE...: a node stopped by a node fault whose sweep ended before
# the fault did (killed, or the machine lost) started again as the sweep
# would have (harness/nodes Emulated.Revive, the same order): the
# container, stale pid files of its runtimes removed, then each agent it
# has a start script for, dockerd first and waited for.
revive() {
  [ $# -gt 0 ] || die "revive: name the nodes to start (nodes.sh status lists them)"
  local node state agent scripts
  for node in "$@"; do
    state=$(docker inspect -f '{{index .Config.Labels "orchbench.nodes"}} {{.State.Running}}' "$node" 2>/dev/null) \
      || die "revive: $node is not a node of $cluster_name (nodes.sh status lists them)"
    [ "${state% *}" = "$cluster_name" ] || die "revive: $node is not a node of $cluster_name"
    [ "${state#* }" = false ] || { say "$node: running already"; continue; }
    docker start "$node" >/dev/null
    docker exec "$node" rm -f /var/run/docker.pid /var/run/docker/containerd/containerd.pid
    scripts=$(docker exec "$node" ls /etc/obn/run)
    for agent in dockerd consul nomad etcd kube-apiserver kube-controller-manager kube-scheduler k8s-balancer containerd kubelet kube-proxy; do
      grep -qx "$agent.sh" <<<"$scripts" || continue
      docker exec -d "$node" sh "/etc/obn/run/$agent.sh"
      if [ "$agent" = dockerd ]; then
        wait_for 60 "$node: dockerd" node_docker_ready "$node" || die "revive: $node's dockerd did not start: $(docker exec "$node" tail -n 5 /var/log/obn/dockerd.log)"
      fi
    done
    say "$node: started with its agents ($(tr '\n' ' ' <<<"$scripts"))"
  done
}

# task_nodes: the running nodes that run tasks, one per line: the workers
# in order, then the client (the servers run none)
task_nodes() {
  local role
  for role in worker client; do
    docker ps --filter "label=$label" --filter "label=orchbench.node.role=$role" --filter status=running --format '{{.Names}}' | sort
  done
}

load_images() {
  [ $# -gt 0 ] || die "usage: nodes.sh load-images IMAGE..."
  local img targets=() node
  for img in "$@"; do docker image inspect "$img" >/dev/null 2>&1 || die "image $img is not in the project's dockerd (just images ...)"; done
  while read -r node; do [ -n "$node" ] && targets+=("$node"); done < <(task_nodes)
  [ ${#targets[@]} -gt 0 ] || die "no running worker or client node: just nodes-up first"
  # global, not local: the EXIT trap (die exits from inside this function)
  # runs after the function's locals are gone
  images_tar=$(mktemp "/var/tmp/$cluster_name-images.XXXXXX")
  trap 'rm -f "$images_tar"' EXIT
  docker save -o "$images_tar" "$@"
  for node in "${targets[@]}"; do
    docker exec -i "$node" docker load -q <"$images_tar" >/dev/null || die "docker load into $node failed"
    say "$node: loaded $*"
  done
}

# node_env: what to export so that orchbench on the host (or on the client
# node) drives the nodes: Nomad and Consul through the client node's own
# agents, which forward to whichever server leads (so a killed server never
# cuts the harness off, docs/faults.md), the Swarm API at the first running
# manager, images from the client node's registry, and NODES_NAME, by which
# a sweep knows the nodes it may kill and builds its images on the
# project's dockerd rather than on that manager. Only addresses on the
# nodes' private network; the harness reaches each other node's engine at
# the same port from the Swarm API's node list (docs/cluster.md).
node_env() {
  local server
  server=$(docker ps --filter "label=$label" --filter "label=orchbench.node.role=server" --filter status=running --format '{{.Names}}' | sort | head -n 1)
  [ -n "$server" ] || die "no running server node: just nodes-up first"
  local addr; addr=$(docker inspect -f "{{(index .NetworkSettings.Networks \"$network\").IPAddress}}" "$server")
  [ -n "$addr" ] || die "$server has no address on $network"
  docker exec "$server" docker info --format '{{.Swarm.ControlAvailable}}' 2>/dev/null | grep -qx true \
    || die "$server's dockerd is not an active swarm manager (nodes.sh status)"
  cat <<ENV
# the nodes of $cluster_name ($subnet), through $server
export NODES_NAME=$cluster_name
export DOCKER_HOST=tcp://$addr:$engine_port
export NOMAD_ADDR=http://$client_addr:4646
export CONSUL_HTTP_ADDR=http://$client_addr:8500
export ORCHBENCH_REGISTRY=$client_addr:$registry_port
export ORCHBENCH_VM_URL=http://$client_addr:8428
ENV
  # Kubernetes, when it runs across the nodes: its API at the balancer on
  # the client node (or the one server), reached on the nodes' network; the
  # harness dials pods, Services and NodePorts from the client node's
  # network namespace, where they are routed (docs/cluster.md), as the
  # load job does
  local kc; kc="$(k8s_state)/admin.kubeconfig"
  if [ -f "$kc" ]; then
    local pid
    pid=$(docker inspect -f '{{.State.Pid}}' "$cluster_name-client" 2>/dev/null) && [ "${pid:-0}" -gt 0 ] \
      || die "$cluster_name-client is not running: its network namespace is where the harness reaches Kubernetes' pods"
    printf 'export ORCHBENCH_KUBECONFIG=%s\nexport ORCHBENCH_K8S_NETNS=host\nexport ORCHBENCH_K8S_CLIENT_NETNS=/proc/%s/ns/net\n' "$kc" "$pid"
  fi
}

down() {
  local t0 have; t0=$(date +%s); have=$(existing)
  if [ -n "$have" ]; then
    say "removing nodes: $(echo $have)"
    # killing a node's init ends every process of its PID namespace, its tasks' too
    # shellcheck disable=SC2086
    docker rm -f -v $have >/dev/null
  fi
  rm -rf "$root/.state/nodes/$cluster_name"
  rmdir "$root/.state/nodes" 2>/dev/null || true
  local vols; vols=$(docker volume ls -q --filter "label=$label")
  # shellcheck disable=SC2086
  [ -z "$vols" ] || { say "removing volumes: $(echo $vols)"; docker volume rm $vols >/dev/null; }
  if docker network inspect "$network" >/dev/null 2>&1; then
    say "removing network $network"; docker network rm "$network" >/dev/null
  fi
  # the nodes' runtimes never remove their tasks' cgroups, and dockerd cannot
  # remove a node's while they are in it: all of it, depth-first
  "$root/cluster/hoststate.sh" clean-cgroups "^$cgroup_root\$" | sed 's/^\[cluster\]/[nodes]/'
  local left; left=$(find /sys/fs/cgroup -mindepth 2 -maxdepth 2 -type d -name "$cgroup_root" 2>/dev/null || true)
  [ -z "$left" ] || die "cgroups left: $(echo $left)"
  say "down in $(( $(date +%s) - t0 )) s"
}

case "${1:-}" in
  up) shift; up "$@" ;;
  status) status ;;
  env) node_env ;;
  push-images) shift; push_images "$@"; prepull_images "$@" ;;
  registry) registry_host_port ;;
  load-images) shift; load_images "$@" ;;
  probes) running_topology; deploy_probes ;;
  infra) running_topology; deploy_node_infra ;;
  down) down ;;
  present) docker info >/dev/null 2>&1 && [ -n "$(existing)" ] ;;
  revive) shift; revive "$@" ;;
  *) echo "usage: $0 up [nodes=]N [servers=]S [node_cpus=C] [node_memory=M] [link_delay=D] [k8s=1] | status | env | push-images IMAGE... | registry | load-images IMAGE... | probes | infra | down" >&2; exit 2 ;;
esac
