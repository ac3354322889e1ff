# shellcheck shell=bash
# nodes.sh sets the topology (nodes, roles, addrs, server_addrs, servers),
# the names (label, network) and the budgets before it sources this file.
# shellcheck disable=SC2154
# The agents inside an emulated node (cluster/nodes.sh): its dockerd, its
# Consul and Nomad agents, and the Swarm it joins. Sourced by nodes.sh, which
# defines say, die, node_exec and the topology (servers, server_addrs).

# node_cgroup NODE: the node container's own cgroup (the cpu hierarchy's
# path, the same in every v1 hierarchy docker's cgroupfs driver writes);
# what the node runs is put under it so that the node's budget bounds it.
node_cgroup() {
  local cg
  cg=$(docker exec "$1" cat /proc/1/cgroup | awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3; exit}')
  [ -n "$cg" ] || cg=$(docker exec "$1" cat /proc/1/cgroup | awk -F: '$1 == 0 {print $3; exit}')
  [ -n "$cg" ] || die "cannot read $1's cgroup from its /proc/1/cgroup"
  echo "$cg"
}

# start_in NODE NAME COMMAND: writes the node's start script for the agent,
# /etc/obn/run/NAME.sh (COMMAND, a shell line, its PID in /run/obn/NAME.pid,
# its output in /var/log/obn/NAME.log), and runs it detached. The scripts
# are the node's unit files: the harness's node faults (harness/nodes)
# run them again to restart an agent or a killed node.
start_in() {
  local node=$1 name=$2 cmd=$3
  printf 'mkdir -p /var/log/obn /run/obn\necho $$ >/run/obn/%s.pid\nexec %s >>/var/log/obn/%s.log 2>&1\n' "$name" "$cmd" "$name" \
    | write_in "$node" "/etc/obn/run/$name.sh"
  docker exec -d "$node" sh "/etc/obn/run/$name.sh"
}

node_docker_ready() { docker exec "$1" docker info >/dev/null 2>&1; }

# start_dockerd NODE: the node's own dockerd, its containers under the node's
# cgroup (without --cgroup-parent they would land at the root of the
# hierarchy, outside the node's budget). --userland-proxy=false as on the embedded
# cluster: published ports are kernel NAT rules, not a relay process.
# --insecure-registry: the client node's registry speaks plain HTTP, which
# is acceptable only because the nodes' network is private to this machine
# (docs/cluster.md, "Images"; a real cluster needs TLS, issue 25).
# --host tcp://ADDR:2375: the harness on the host or the client node reads
# the Swarm API from a manager and each task's container from the engine
# of the node it runs on. Bound to the node's address on the private nodes'
# network only (never 0.0.0.0: the node's other interfaces, docker_gwbridge
# and the ingress, stay closed); plain TCP for the same reason as the
# registry's HTTP (docs/cluster.md, "The harness against the nodes").
start_dockerd() {
  local node=$1 addr=$2 cg; cg=$(node_cgroup "$node")
  start_in "$node" dockerd "dockerd --host unix:///var/run/docker.sock --host tcp://$addr:$engine_port --data-root /var/lib/docker --cgroup-parent $cg/docker --userland-proxy=false --insecure-registry $client_addr:$registry_port"
}

# netem_probe: tc netem in a throwaway container's namespace (refused by a
# kernel built without it, before any node starts)
netem_probe() { docker run --rm --network bridge --cap-add NET_ADMIN orchbench/node:local tc qdisc add dev eth0 root netem delay 1ms; }
netem_available() { netem_probe >/dev/null 2>&1; }

# set_link_delay NODE: tc netem on the node's interface, inside its own
# network namespace (the host's interfaces are never touched). Every packet
# a node sends waits link_delay, so a round trip between two nodes takes
# twice that more.
set_link_delay() {
  [ -n "$link_delay" ] || return 0
  docker exec "$1" tc qdisc replace dev eth0 root netem delay "$link_delay" \
    || die "step 'tc netem delay $link_delay' on $1 failed"
}

# node_meta NODE ROLE: what placement constrains on, one "key value" per
# line: the role; for a worker its index and whether it holds the front end
# (worker 1 does, as in study 002, whose front end stayed on one machine;
# every other node says false, so a constraint "!= false" also holds on a
# single-node cluster, which carries none of these); the link delay.
node_meta() {
  local node=$1 role=$2 frontend=false
  echo "orchbench.role $role"
  if [ "$role" = worker ]; then
    echo "orchbench.worker ${node##*-worker}"
    [ "${node##*-worker}" = 1 ] && frontend=true
  fi
  echo "orchbench.frontend $frontend"
  echo "orchbench.link_delay ${link_delay:-0}"
}

# consul_config NODE ADDR ROLE: the agent's configuration; servers form a
# raft of $servers, everything else is a client agent joining them.
consul_config() {
  local node=$1 addr=$2 role=$3 join
  join=$(printf '"%s",' "${server_addrs[@]}"); join=${join%,}
  cat <<HCL
datacenter     = "dc1"
node_name      = "$node"
data_dir       = "/var/lib/consul"
bind_addr      = "$addr"
advertise_addr = "$addr"
# the node's address for the other nodes, loopback for its own Nomad agent
client_addr    = "127.0.0.1 $addr"
retry_join     = [$join]
log_level      = "WARN"
# the checkpoint service is not an address this cluster may talk to
disable_update_check = true
ports {
  grpc = -1
}
HCL
  if [ "$role" = server ]; then
    printf 'server           = true\nbootstrap_expect = %s\nui_config { enabled = true }\n' "$servers"
  fi
}

# nomad_config NODE ADDR ROLE CGROUP: servers are servers only (study 002's
# managers run no application); workers and the client are clients of them,
# told apart by node_class so that application jobs avoid the client node
# and the load job targets it.
nomad_config() {
  local node=$1 addr=$2 role=$3 cg=$4 join
  join=$(printf '"%s:4647",' "${server_addrs[@]}"); join=${join%,}
  cat <<HCL
datacenter = "dc1"
name       = "$node"
data_dir   = "/var/lib/nomad"
bind_addr  = "$addr"
log_level  = "INFO"
# the checkpoint service is not an address this cluster may talk to
disable_update_check = true
advertise {
  http = "$addr"
  rpc  = "$addr"
  serf = "$addr"
}
consul {
  address = "127.0.0.1:8500"
}
HCL
  if [ "$role" = server ]; then
    cat <<HCL
server {
  enabled          = true
  bootstrap_expect = $servers
  server_join {
    retry_join = [$join]
  }
  # memory_max (the unlimited variant) needs it, as on the embedded cluster
  default_scheduler_config {
    memory_oversubscription_enabled = true
  }
}
HCL
    return
  fi
  cat <<HCL
client {
  enabled           = true
  node_class        = "$role"
  network_interface = "eth0"
  servers           = [$join]
  # Nomad fingerprints the machine's cores and /proc/meminfo, not the
  # container's --cpus and --memory. Memory is overridden. CPU cannot be
  # made to match a fractional budget: the docker driver sets a task's CFS
  # quota to its MHz / (total - reserved MHz) x the cores it sees, so a
  # smaller cpu_total_compute or a CPU reservation inflates every quota
  # (325 of 1300 usable MHz gave 0.5 core, not 0.125). The CPU view stays
  # the machine's, quotas stay true, and the node's own quota bounds their
  # sum (docs/cluster.md).
  memory_total_mb   = $memory_total_mb
  reserved {
    memory = $memory_reserved_mb
  }
  # exec-style tasks' cgroups under the node's own, as --cgroup-parent does for dockerd
  cgroup_parent     = "$cg/nomad"
  # Debian's containernetworking-plugins, for bridge-mode groups
  cni_path          = "/usr/lib/cni"
  meta {
$(node_meta "$node" "$role" | while read -r k v; do printf '    "%s" = "%s"\n' "$k" "$v"; done)
  }
  options = {
    # the environment's AWS_CA_BUNDLE crashes the cloud fingerprinters
    "fingerprint.denylist" = "env_aws,env_gce,env_azure,env_digitalocean"
  }
}
# the node probe (jobs/node-probe.nomad.tpl) runs as a process of the node
plugin "raw_exec" {
  config {
    enabled = true
  }
}
plugin "docker" {
  config {
    # from the client node's registry, where up pushes it
    infra_image = "$client_addr:$registry_port/orchbench/pause:local"
    # an image loaded into the node (nodes.sh load-images) cannot be
    # pulled again once collected; those from the registry could
    gc {
      image = false
    }
    volumes {
      enabled = false
    }
  }
}
HCL
}

# write_in NODE PATH: stdin into PATH inside NODE
write_in() { docker exec -i "$1" sh -c "mkdir -p \"\$(dirname '$2')\" && cat >'$2'"; }

start_consul() {
  local node=$1 addr=$2 role=$3
  consul_config "$node" "$addr" "$role" | write_in "$node" /etc/obn/consul.hcl
  start_in "$node" consul "/opt/obn/bin/consul agent -config-file /etc/obn/consul.hcl"
}

start_nomad() {
  local node=$1 addr=$2 role=$3
  nomad_config "$node" "$addr" "$role" "$(node_cgroup "$node")" | write_in "$node" /etc/obn/nomad.hcl
  start_in "$node" nomad "/opt/obn/bin/nomad agent -config /etc/obn/nomad.hcl"
}

# swarm_form: the first server initialises the swarm; the other servers join
# as managers, workers and the client as workers. Managers are drained (they
# run no task), and every node carries its role as a label that services
# place by (node.labels.orchbench.role==worker).
swarm_form() {
  local first=${nodes[0]} first_addr=${addrs[0]} mtoken wtoken i
  docker exec "$first" docker swarm init --advertise-addr "$first_addr" --listen-addr "$first_addr:2377" >/dev/null \
    || die "step 'swarm init' on $first failed"
  mtoken=$(docker exec "$first" docker swarm join-token -q manager)
  wtoken=$(docker exec "$first" docker swarm join-token -q worker)
  for i in "${!nodes[@]}"; do
    [ "$i" -eq 0 ] && continue
    local token=$wtoken; [ "${roles[$i]}" = server ] && token=$mtoken
    docker exec "${nodes[$i]}" docker swarm join --token "$token" --advertise-addr "${addrs[$i]}" --listen-addr "${addrs[$i]}:2377" "$first_addr:2377" >/dev/null \
      || die "step 'swarm join' of ${nodes[$i]} failed"
  done
  local k v adds
  for i in "${!nodes[@]}"; do
    adds=()
    while read -r k v; do adds+=(--label-add "$k=$v"); done < <(node_meta "${nodes[$i]}" "${roles[$i]}")
    docker exec "$first" docker node update "${adds[@]}" "${nodes[$i]}" >/dev/null
    [ "${roles[$i]}" = server ] && docker exec "$first" docker node update --availability drain "${nodes[$i]}" >/dev/null
  done
  say "swarm: ${#nodes[@]} nodes, $servers manager(s) drained, roles labelled"
}
