#!/usr/bin/env bash
# The embedded single-machine cluster: one Consul server, one Nomad server+client,
# dockerd when needed (a single-node Docker Swarm), and the infrastructure jobs
# (VictoriaMetrics, VictoriaLogs, the node agent) rendered from jobs/*.nomad.tpl by levant. Everything binds to
# 127.0.0.1; state lives in .state/; every process started is recorded by PID.
#   embedded.sh up | status | down [--purge]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.tools/bin"
state="$root/.state"
pids="$state/pids"
logs="$state/logs"
export NOMAD_ADDR=http://127.0.0.1:4646 CONSUL_HTTP_ADDR=http://127.0.0.1:8500
# a remote cluster's credentials in the shell are not this cluster's
unset NOMAD_TOKEN NOMAD_CACERT NOMAD_CLIENT_CERT NOMAD_CLIENT_KEY CONSUL_HTTP_TOKEN CONSUL_HTTP_SSL CONSUL_CACERT CONSUL_CLIENT_CERT CONSUL_CLIENT_KEY
say() { printf '[cluster] %s\n' "$*"; }
die() { say "$*"; exit 1; }
# shellcheck source=lib.sh
source "$root/cluster/lib.sh"

# port NUM PROTO: the port every agent needs, checked before anything starts.
PORTS_TCP="4646 4647 4648 8300 8301 8302 8500 8600 8428 9428 8888 8889"
PORTS_UDP="4648 8301 8302 8600"

alive() { [ -f "$pids/$1" ] && kill -0 "$(cat "$pids/$1")" 2>/dev/null; }

holder() { # holder PROTO PORT -> "name (pid N)" of the listener, or empty
  local line
  line=$(ss -H -lnp -"${1:0:1}" "sport = :$2" 2>/dev/null) || true
  line=${line%%$'\n'*}
  [ -n "$line" ] || return 1
  local proc; proc=$(grep -o 'users:((.*))' <<<"$line" | sed -E 's/users:\(\("([^"]*)",pid=([0-9]+).*/\1 (pid \2)/')
  echo "${proc:-an unknown process}"
}

check_ports() {
  local busy=()
  for p in $PORTS_TCP; do h=$(holder tcp "$p") && busy+=("port $p/tcp is already in use by $h"); done
  for p in $PORTS_UDP; do h=$(holder udp "$p") && busy+=("port $p/udp is already in use by $h"); done
  if [ ${#busy[@]} -gt 0 ]; then
    for b in "${busy[@]}"; do say "$b"; done
    die "cannot start: free the port(s) above or stop the other cluster (just cluster-down); nothing was started"
  fi
}

need_tools() {
  local need=(nomad consul victoria-metrics victoria-logs levant nomad-autoscaler)
  [ "$(agent_template)" = agent ] && need+=(otelcol-orchbench)
  for t in "${need[@]}"; do
    [ -x "$bin/$t" ] || die "$bin/$t is missing: run ./justw tools first"
  done
}


consul_leader() { [ -n "$(curl -sf "$CONSUL_HTTP_ADDR/v1/status/leader" | tr -d '"')" ]; }
nomad_ready() { output_has '^Status *= ready' "$bin/nomad" node status -self -short 2>/dev/null; }
# nomad_diagnosis: what a node that never became ready says about itself
nomad_diagnosis() {
  say "nomad agent members: $("$bin/nomad" server members 2>&1 | tail -n +2 | tr -s ' ' | paste -sd';')"
  say "nomad nodes: $("$bin/nomad" node status 2>&1 | paste -sd';')"
  say "nomad log, registration, fingerprint and error lines (.state/logs/nomad.log):"
  grep -E 'registration|fingerprint|driver|ERROR|WARN|leader|election' "$logs/nomad.log" | tail -n 25 | sed 's/^/    /'
  say "nomad log, last lines:"
  tail -n 10 "$logs/nomad.log" | sed 's/^/    /'
}
memory_oversubscription() {
  "$bin/nomad" operator scheduler set-config -memory-oversubscription=true >/dev/null &&
    output_has '^Memory Oversubscription *= true' "$bin/nomad" operator scheduler get-config
}
vm_healthy() { output_has OK curl -sf http://127.0.0.1:8428/health; }
vm_running() { output_has '^Status *= running' "$bin/nomad" job status -short victoriametrics 2>/dev/null; }

write_configs() {
  mkdir -p "$state/consul/data" "$state/nomad/data" "$pids" "$logs"
  cat >"$state/consul/config.hcl" <<HCL
datacenter       = "dc1"
data_dir         = "$state/consul/data"
server           = true
bootstrap_expect = 1
bind_addr        = "127.0.0.1"
advertise_addr   = "127.0.0.1"
client_addr      = "127.0.0.1"
ports {
  http = 8500
  dns  = 8600
  grpc = -1
}
# the web UI ships inside the Consul binary
ui_config { enabled = true }
log_level = "WARN"
# the checkpoint service is not an address this cluster may talk to
disable_update_check = true
telemetry {
  prometheus_retention_time = "60s"
  disable_hostname          = true
}
HCL
  cat >"$state/nomad/config.hcl" <<HCL
datacenter = "dc1"
data_dir   = "$state/nomad/data"
bind_addr  = "127.0.0.1"
# INFO: registration and fingerprinting are in the log when start-up stalls
log_level  = "INFO"
# the checkpoint service is not an address this cluster may talk to
disable_update_check = true
advertise {
  http = "127.0.0.1"
  rpc  = "127.0.0.1"
  serf = "127.0.0.1"
}
server {
  enabled          = true
  bootstrap_expect = 1
  # memory_max (the unlimited variant's burst ceiling) is ignored unless
  # the scheduler oversubscribes memory; the limits gate would refuse it
  default_scheduler_config {
    memory_oversubscription_enabled = true
  }
}
client {
  enabled           = true
  network_interface = "lo"
  cni_path          = "/usr/lib/cni"
  options = {
    # the environment's AWS_CA_BUNDLE crashes the cloud fingerprinters
    "fingerprint.denylist" = "env_aws,env_gce,env_azure,env_digitalocean"
  }
  # An exec task (study 000's "process" form) gets the base image's
  # userland, unpacked by cluster/images.sh base, instead of the host's:
  # the same runtime files as its container twin (the host's node may be
  # another major version), so the comparison differs only in isolation.
  # The study apps' vendored packages come from the host (cluster/tools.sh apps).
  chroot_env {
    "$state/exec-rootfs/bin"   = "/bin"
    "$state/exec-rootfs/etc"   = "/etc"
    "$state/exec-rootfs/lib"   = "/lib"
    "$state/exec-rootfs/lib64" = "/lib64"
    "$state/exec-rootfs/sbin"  = "/sbin"
    "$state/exec-rootfs/usr"   = "/usr"
    "/usr/local/lib/orchbench" = "/usr/local/lib/orchbench"
  }
}
consul {
  address = "127.0.0.1:8500"
}
plugin "raw_exec" {
  config {
    # development and infrastructure jobs only: raw_exec enforces no limits
    enabled = true
  }
}
plugin "docker" {
  config {
    # bridge-mode allocations need a pause container; the upstream image's
    # registry is not reachable, so cluster/images.sh builds one locally
    infra_image = "orchbench/pause:local"
    # images are built locally and no registry can give them back: Nomad's
    # image garbage collection would delete them minutes after last use
    gc {
      image = false
    }
    volumes {
      enabled = false
    }
  }
}
telemetry {
  prometheus_metrics         = true
  publish_allocation_metrics = true
  publish_node_metrics       = true
  collection_interval        = "1s"
  disable_hostname           = true
}
HCL
}

# swarm_up makes the dockerd a single-node swarm, on loopback only; a swarm
# that exists already (another project's, or ours from before) is kept.
swarm_up() {
  local st; st=$(docker info --format '{{.Swarm.LocalNodeState}}' 2>/dev/null || true)
  case "$st" in
    active) say "docker swarm: already active"; return 0 ;;
    inactive) ;;
    *) die "step 'swarm init' failed: the docker daemon reports swarm state '$st'" ;;
  esac
  docker swarm init --advertise-addr 127.0.0.1 --listen-addr 127.0.0.1:2377 --data-path-addr 127.0.0.1 >"$logs/swarm-init.log" 2>&1 \
    || die "step 'swarm init' failed: $(tail -n 3 "$logs/swarm-init.log")"
  touch "$state/swarm-initialised"
  say "docker swarm: initialised (single node, 127.0.0.1)"
}

start() { # start NAME COMMAND...
  local name=$1; shift
  setsid "$@" >"$logs/$name.log" 2>&1 </dev/null &
  echo $! >"$pids/$name"
  say "started $name (pid $!)"
}

autoscaler_healthy() { curl -sf -m 5 -o /dev/null http://127.0.0.1:7072/v1/health; }
vl_healthy() { output_has OK curl -sf http://127.0.0.1:9428/health; }
agent_running() { output_has '^Status *= running' "$bin/nomad" job status -short orchbench-agent 2>/dev/null; }
# the metrics page is long: read whole, for the reason output_has (lib.sh) gives
agent_healthy() { local m; m=$(curl -sf -m 5 http://127.0.0.1:8888/metrics) && [[ $m == *otelcol_* || $m == *vector_* ]]; }
# agent_template: Vector where the node has it (jobs/vector.nomad.tpl, untested
# here), the OpenTelemetry Collector built by cluster/tools.sh otherwise
agent_template() { if command -v vector >/dev/null 2>&1; then echo vector; else echo agent; fi; }

# the node probe answers (any HTTP status: a request naming no node is refused)
probe_answers() { [[ $(curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST -d '{}' http://127.0.0.1:7070/v1/identity) != 000 ]]; }

# deploy_infra deploys the infrastructure jobs that are not running healthy
# (all of them on a fresh cluster; the missing ones on a cluster already up).
deploy_infra() {
  vm_healthy || "$root/cluster/jobs.sh" deploy victoriametrics
  wait_for 90 "victoriametrics healthy on 127.0.0.1:8428" vm_healthy \
    || die "step 'victoriametrics health' failed: no answer on 127.0.0.1:8428/health within 90 s (see: nomad job status victoriametrics)"
  vl_healthy || "$root/cluster/jobs.sh" deploy victorialogs
  wait_for 90 "victorialogs healthy on 127.0.0.1:9428" vl_healthy \
    || die "step 'victorialogs health' failed: no answer on 127.0.0.1:9428/health within 90 s (see: nomad job status victorialogs)"
  { agent_running && agent_healthy; } || "$root/cluster/jobs.sh" deploy "$(agent_template)"
  wait_for 60 "node agent shipping (its metrics on 127.0.0.1:8888)" agent_healthy \
    || die "step 'agent health' failed: the node agent's metrics did not answer on 127.0.0.1:8888 within 60 s (see: nomad job status orchbench-agent; nomad alloc logs -stderr -job orchbench-agent)"
  # the node probe the harness reads every task through (docs/node-probe.md)
  # Submitted every time: the job carries its binary's checksum, so a new
  # orchbench replaces the probe (raw_exec runs the file in place, and a
  # running probe keeps the old program); Nomad leaves an unchanged job be.
  "$root/cluster/jobs.sh" deploy node-probe
  wait_for 30 "node probe on 127.0.0.1:7070" probe_answers \
    || die "step 'node probe' failed: nothing answered on 127.0.0.1:7070 within 30 s (see: nomad job status node-probe; nomad alloc logs -stderr -job node-probe)"
  # the Nomad Autoscaler, which acts on packs' scaling blocks (autoscale)
  autoscaler_healthy || "$root/cluster/jobs.sh" deploy nomad-autoscaler
  wait_for 60 "nomad autoscaler on 127.0.0.1:7072" autoscaler_healthy \
    || die "step 'nomad autoscaler' failed: its health did not answer on 127.0.0.1:7072 within 60 s (see: nomad job status nomad-autoscaler; nomad alloc logs -stderr -job nomad-autoscaler)"
}

up() {
  need_tools
  if alive consul && alive nomad; then
    say "already up (consul pid $(cat "$pids/consul"), nomad pid $(cat "$pids/nomad")); checking the infrastructure jobs"
    deploy_infra
    return 0
  fi
  if alive consul || alive nomad; then
    die "half up: one agent is running, the other is not; run 'just cluster-down' first"
  fi
  check_ports
  local t0; t0=$(date +%s)
  "$root/cluster/hoststate.sh" snapshot "$state/hoststate/cluster"
  write_configs
  if command -v dockerd >/dev/null; then "$root/cluster/dockerd.sh" up; swarm_up; fi
  start consul "$bin/consul" agent -config-file "$state/consul/config.hcl"
  wait_for 60 "consul leader elected" consul_leader \
    || die "step 'consul leader' failed: no leader within 60 s; last lines of .state/logs/consul.log: $(tail -n 5 "$logs/consul.log")"
  start nomad "$bin/nomad" agent -config "$state/nomad/config.hcl"
  # the client waits up to 55 s for its drivers' first fingerprints before it registers
  wait_for 150 "nomad node ready" nomad_ready || { nomad_diagnosis; die "step 'nomad node ready' failed: not ready within 150 s (diagnosis above)"; }
  # the server config's default applies to a new state only; a kept
  # .state/ from before it needs the setting too
  wait_for 30 "memory oversubscription on (memory_max is enforced)" memory_oversubscription \
    || die "step 'nomad scheduler config' failed: memory oversubscription (needed by memory_max) could not be turned on: $("$bin/nomad" operator scheduler set-config -memory-oversubscription=true 2>&1 | tail -n 1)"
  deploy_infra
  say "up in $(( $(date +%s) - t0 )) s"
  urls
}

status() {
  for n in consul nomad; do
    if alive "$n"; then say "$n: running (pid $(cat "$pids/$n"))"; else say "$n: not running"; fi
  done
  alive nomad && "$bin/nomad" node status 2>/dev/null | sed 's/^/    /' || true
  alive consul && "$bin/consul" members 2>/dev/null | sed 's/^/    /' || true
  alive nomad && "$bin/nomad" job status 2>/dev/null | sed 's/^/    /' || true
  if vm_healthy; then say "victoriametrics: healthy"; else say "victoriametrics: not answering"; fi
  if vl_healthy; then say "victorialogs: healthy"; else say "victorialogs: not answering"; fi
  if agent_healthy; then say "node agent: shipping (metrics on 127.0.0.1:8888)"; else say "node agent: not answering"; fi
  if probe_answers; then say "node probe: answering on 127.0.0.1:7070"; else say "node probe: not answering"; fi
  urls
  say "docker swarm: $(docker info --format '{{.Swarm.LocalNodeState}} ({{.Swarm.NodeAddr}})' 2>/dev/null || echo 'no docker daemon')"
}

# urls prints the web UIs that answer now, and says which do not.
urls() {
  local ui
  # a Nomad built without its UI answers /ui/ with a page telling to run make dev-ui
  if ui=$(curl -sf http://127.0.0.1:4646/ui/ 2>/dev/null) && ! grep -q 'dev-ui' <<<"$ui"; then
    say "nomad ui:       http://127.0.0.1:4646/ui/"
  else
    say "nomad ui:       not in this nomad binary (cluster/tools.sh nomad-ui builds it; restart the cluster after); API http://127.0.0.1:4646"
  fi
  if curl -sf -o /dev/null http://127.0.0.1:8500/ui/; then say "consul ui:      http://127.0.0.1:8500/ui/"; fi
  if curl -sf -o /dev/null http://127.0.0.1:8428/vmui/; then say "metrics (vmui): http://127.0.0.1:8428/vmui/#/dashboards"; fi
  if curl -sf -o /dev/null http://127.0.0.1:9428/select/vmui/; then say "logs (vmui):    http://127.0.0.1:9428/select/vmui/"; fi
  return 0
}

stop_pid() { stop_pidfile "$pids/$1" "$1" INT; }

down() {
  if alive nomad; then
    # only our own Nomad's jobs: another checkout's cluster may answer on 4646 otherwise
    local jobs
    jobs=$("$bin/nomad" job status -short 2>/dev/null | awk 'NR>1 && $1 !~ /\// {print $1}' || true)
    for j in $jobs; do
      say "stopping job $j"
      "$bin/nomad" job stop -purge -detach "$j" >/dev/null 2>&1 || true
    done
    # give the client a moment to stop tasks (containers, executors) before the agent goes
    for _ in $(seq 1 40); do
      [ -z "$("$bin/nomad" alloc status -json 2>/dev/null | grep -o '"ClientStatus": *"running"' || true)" ] && break
      sleep 0.5
    done
  fi
  stop_pid nomad
  stop_pid consul
  # executors and logmons outlive the agent by design; ours run our binary
  local left; left=$(pgrep -f "^$bin/nomad " || true)
  if [ -n "$left" ]; then say "stopping leftover nomad processes: $(echo $left)"; kill $left 2>/dev/null || true; sleep 1; kill -9 $left 2>/dev/null || true; fi
  for t in victoria-metrics victoria-logs otelcol-orchbench "orchbench node-probe"; do
    left=$(pgrep -f "^$bin/$t " || true)
    if [ -n "$left" ]; then say "stopping leftover $t: $(echo $left)"; kill $left 2>/dev/null || true; fi
  done
  # containers Nomad started and could not stop because the agent went first
  if [ -f "$pids/dockerd" ] && docker info >/dev/null 2>&1; then
    local ctr; ctr=$(docker ps -q --filter label=com.hashicorp.nomad.alloc_id || true)
    [ -n "$ctr" ] && docker rm -f $ctr >/dev/null 2>&1 || true
  fi
  "$root/cluster/dockerd.sh" down
  # Nomad's CNI chains, its bridge and its allocations' tmpfs mounts outlive the agent
  "$root/cluster/hoststate.sh" clean "$state/hoststate/cluster"
  if [ "${1:-}" = "--purge" ]; then
    say "removing .state/"
    # Nomad leaves secrets/alloc mounts behind; unmount them before removing
    grep -o " $state/[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
    rm -rf "$state"
  fi
  say "down"
}

case "${1:-}" in
  up) up ;;
  status) status ;;
  running) alive consul || alive nomad ;;
  down) shift; down "${1:-}" ;;
  *) echo "usage: $0 up|status|running|down [--purge]" >&2; exit 2 ;;
esac
