#!/usr/bin/env bash
# Emulated hosts for `just remote-up` (docs/remote.md): containers of
# orchbench/host that look to SSH like fresh Debian machines (systemd as
# PID 1, sshd, a user `debian` with passwordless sudo) and have nothing of
# orchbench's installed. They are the stand-ins for a user's own machines:
# everything on them is put there by remote-up over SSH, as on a real rack.
# Everything made is named $HOSTS_NAME-* (obh-*) and labelled orchbench.hosts.
#   hosts.sh up [hosts=]N [servers=]S [host_cpus=C] [host_memory=M]
#                         S servers (1 or 3), N-S-1 workers and 1 client (default 5 3)
#   hosts.sh inventory    the path of the inventory up wrote (an HCL file remote-up reads)
#   hosts.sh status       every host, its address and whether sshd answers
#   hosts.sh down         removes every host, its volumes, the network, its cgroups and keys
# host_cpus (HOST_CPUS, default 1: the demo's vertical variant asks half a
# core, and a host refuses a task above its own budget) and host_memory
# (HOST_MEMORY, default 2560m) are each host's budget.
# HOSTS_SUBNET (default 10.88.0.0/24) is the hosts' network; its key pair and
# the inventory are kept in .state/hosts/$HOSTS_NAME.
set -euo pipefail
if [ -n "${NODES_DOCKER_HOST:-}" ]; then export DOCKER_HOST=$NODES_DOCKER_HOST; else unset DOCKER_HOST; fi
unset DOCKER_CONTEXT DOCKER_TLS_VERIFY DOCKER_CERT_PATH
root=$(cd "$(dirname "$0")/.." && pwd)
say() { printf '[hosts] %s\n' "$*"; }
die() { say "$*"; exit 1; }
# shellcheck source=lib.sh
source "$root/cluster/lib.sh"

name=${HOSTS_NAME:-obh}
[[ $name =~ ^[a-z][a-z0-9]{0,7}$ ]] || die "HOSTS_NAME=$name: a lower-case word of at most 8 letters and digits is needed"
network=$name-hosts
label=orchbench.hosts=$name
cgroup_root=$name-hosts
subnet=${HOSTS_SUBNET:-10.88.0.0/24}
prefix=${subnet%.0/24}
state="$root/.state/hosts/$name"
host_cpus=${HOST_CPUS:-1}
host_memory=${HOST_MEMORY:-2560m}

existing() { docker ps -a --filter "label=$label" --format '{{.Names}}' | sort; }

# topology N S: the hosts' names, roles and addresses, as nodes.sh lays
# them out (servers .11.., workers .21.., the client .10)
names=() roles=() addrs=()
topology() {
  local n=$1 s=$2 i
  for ((i = 1; i <= s; i++)); do names+=("$name-server$i"); roles+=(server); addrs+=("$prefix.$((10 + i))"); done
  for ((i = 1; i <= n - s - 1; i++)); do names+=("$name-worker$i"); roles+=(worker); addrs+=("$prefix.$((20 + i))"); done
  names+=("$name-client"); roles+=(client); addrs+=("$prefix.10")
}

run_host() {
  local host=$1 role=$2 addr=$3
  docker volume create --label "$label" "$host-docker" >/dev/null
  # A machine's flags (lib.sh), so that the host's systemd and, later, its
  # dockerd make their cgroups under the host's own; tmpfs where systemd
  # expects them; /var/lib/docker on a volume (overlay2 cannot sit on overlay2).
  run_machine "$host" \
    --label "$label" --label "orchbench.host.role=$role" \
    --tmpfs /run --tmpfs /run/lock --tmpfs /tmp:exec \
    --cgroup-parent "/$cgroup_root" --cpus "$host_cpus" --memory "$host_memory" \
    --network "$network" --ip "$addr" -v "$host-docker:/var/lib/docker" \
    orchbench/host:local >/dev/null || die "step 'start host $host' failed"
  # what cloud-init does on a cloud host: the user's public key
  docker exec -i "$host" sh -c 'umask 077; cat >/home/debian/.ssh/authorized_keys && chown debian:debian /home/debian/.ssh/authorized_keys' <"$state/id_ed25519.pub"
}

sshd_answers() { timeout 2 bash -c "exec 3<>/dev/tcp/$1/22" 2>/dev/null; }

write_inventory() {
  local i
  {
    printf '# The emulated hosts of cluster/hosts.sh (%s): an inventory for just remote-up.\n' "$subnet"
    # remote up's secrets for these hosts live and go with them
    printf 'datacenter = "dc1"\nstate_dir  = "%s"\n\nssh {\n  user = "debian"\n  key  = "%s"\n}\n' "$state/remote" "$state/id_ed25519"
    for i in "${!names[@]}"; do
      printf '\nhost "%s" {\n  address = "%s"\n  role    = "%s"\n}\n' "${names[$i]}" "${addrs[$i]}" "${roles[$i]}"
    done
  } >"$state/inventory.hcl"
}

up() {
  local n=5 s=3 arg pos=0
  for arg in "$@"; do
    case "$arg" in
      hosts=*) n=${arg#*=} ;;
      servers=*) s=${arg#*=} ;;
      host_cpus=*) host_cpus=${arg#*=} ;;
      host_memory=*) host_memory=${arg#*=} ;;
      *=*) die "unknown setting '$arg' (known: hosts servers host_cpus host_memory)" ;;
      *) pos=$((pos + 1)); case $pos in 1) n=$arg ;; 2) s=$arg ;; *) die "too many arguments: $*" ;; esac ;;
    esac
  done
  [[ $n =~ ^[0-9]+$ ]] || die "hosts=$n: a whole number is needed"
  [ "$s" = 1 ] || [ "$s" = 3 ] || die "servers=$s: 1 or 3"
  [ "$n" -ge $((s + 2)) ] || die "hosts=$n with servers=$s: at least $((s + 2)) (the servers, a worker and the client)"
  [ "$n" -le $((s + 61)) ] || die "hosts=$n: at most 60 workers"
  [[ $subnet =~ ^(10|172|192)\.[0-9]+\.[0-9]+\.0/24$ ]] || die "HOSTS_SUBNET=$subnet: a private /24 such as 10.88.0.0/24 is needed"
  docker info >/dev/null 2>&1 || die "the project's dockerd does not answer (docker info)"
  topology "$n" "$s"
  local have; have=$(existing)
  if [ -n "$have" ]; then
    [ "$have" = "$(printf '%s\n' "${names[@]}" | sort)" ] || die "hosts of another shape exist ($(echo $have)); run cluster/hosts.sh down first"
    say "already up with this shape"; status; return
  fi
  local t0; t0=$(date +%s)
  "$root/cluster/images.sh" host
  mkdir -p "$state"; chmod 0700 "$state"
  [ -f "$state/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C "orchbench-hosts-$name" -f "$state/id_ed25519"
  docker network inspect "$network" >/dev/null 2>&1 \
    || docker network create --label "$label" --subnet "$subnet" "$network" >/dev/null \
    || die "step 'network create $network $subnet' failed (another network on $subnet? HOSTS_SUBNET=10.89.0.0/24)"
  say "starting ${#names[@]} hosts ($s servers, $((n - s - 1)) workers, 1 client) on $subnet, each --cpus $host_cpus --memory $host_memory"
  local i
  for i in "${!names[@]}"; do run_host "${names[$i]}" "${roles[$i]}" "${addrs[$i]}"; done
  for i in "${!names[@]}"; do
    wait_for 60 "${names[$i]}: sshd" sshd_answers "${addrs[$i]}" \
      || die "step 'sshd' on ${names[$i]} failed: $(docker exec "${names[$i]}" systemctl --failed --no-pager 2>&1 | paste -sd';')"
  done
  write_inventory
  say "up in $(( $(date +%s) - t0 )) s; inventory: $state/inventory.hcl"
}

status() {
  local host addr role ok=0
  while read -r host; do
    [ -n "$host" ] || continue
    addr=$(docker inspect -f "{{(index .NetworkSettings.Networks \"$network\").IPAddress}}" "$host" 2>/dev/null || true)
    role=$(docker inspect -f '{{index .Config.Labels "orchbench.host.role"}}' "$host")
    if [ -n "$addr" ] && sshd_answers "$addr"; then printf '%-16s %-7s %-13s sshd up\n' "$host" "$role" "$addr"
    else printf '%-16s %-7s %-13s sshd DOWN\n' "$host" "$role" "${addr:--}"; ok=1; fi
  done < <(existing)
  return $ok
}

down() {
  local have vols; have=$(existing)
  # shellcheck disable=SC2086
  [ -z "$have" ] || { say "removing hosts: $(echo $have)"; docker rm -f -v $have >/dev/null; }
  vols=$(docker volume ls -q --filter "label=$label")
  # shellcheck disable=SC2086
  [ -z "$vols" ] || docker volume rm $vols >/dev/null
  if docker network inspect "$network" >/dev/null 2>&1; then docker network rm "$network" >/dev/null; fi
  "$root/cluster/hoststate.sh" clean-cgroups "^$cgroup_root\$" | sed 's/^\[cluster\]/[hosts]/'
  rm -rf "$state"
  say "down"
}

case "${1:-}" in
  up) shift; up "$@" ;;
  inventory) [ -f "$state/inventory.hcl" ] || die "no inventory: cluster/hosts.sh up first"; echo "$state/inventory.hcl" ;;
  status) status ;;
  down) down ;;
  *) echo "usage: $0 up [hosts=]N [servers=]S [host_cpus=C] [host_memory=M] | inventory | status | down" >&2; exit 2 ;;
esac
