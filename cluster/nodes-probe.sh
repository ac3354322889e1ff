# shellcheck shell=bash
# shellcheck disable=SC2154
# The node probe on the emulated nodes (sourced by nodes.sh, which sets
# nodes/roles/addrs, bin and root): the static orchbench binary copied into
# every Nomad client node, then the node-probe system job
# (jobs/node-probe.nomad.tpl), as `just cluster-up` does on the embedded
# cluster. ORCHBENCH_BIN (default .tools/bin/orchbench) is the binary.

# where the probe's program sits on a node
node_probe_bin=/opt/obn/bin/orchbench

# probe_clients: the nodes that run a Nomad client (every role but server)
probe_clients() {
  local i
  for i in "${!nodes[@]}"; do [ "${roles[$i]}" = server ] || echo "$i"; done
}

# probe_answers ADDR: anything answers HTTP at ADDR:7070 (a request that
# names no node is refused, which is an answer)
probe_answers() { [[ $(curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST -d '{}' "http://$1:7070/v1/identity") != 000 ]]; }

deploy_probes() {
  local src=${ORCHBENCH_BIN:-$bin/orchbench} i
  [ -x "$src" ] || die "step 'node probe' failed: $src is not an executable (just build, or set ORCHBENCH_BIN)"
  file -b "$src" 2>/dev/null | grep -q 'statically linked' \
    || say "warning: $src may not be static; the nodes run it with their own libraries"
  for i in $(probe_clients); do
    # a running probe keeps its file: the new one is moved into place
    docker cp "$src" "${nodes[$i]}:$node_probe_bin.new" && docker exec "${nodes[$i]}" mv "$node_probe_bin.new" "$node_probe_bin" \
      || die "step 'copy the probe into ${nodes[$i]}' failed"
  done
  NOMAD_ADDR="http://${addrs[0]}:4646" NODE_PROBE_BIN=$node_probe_bin NODE_PROBE_SUM=$(sha256sum "$src" | cut -c1-12) \
    "$root/cluster/jobs.sh" deploy node-probe \
    || die "step 'deploy node-probe' failed"
  for i in $(probe_clients); do
    wait_for 30 "${nodes[$i]}: node probe on ${addrs[$i]}:7070" probe_answers "${addrs[$i]}" \
      || die "step 'node probe on ${nodes[$i]}' failed: nothing answers on ${addrs[$i]}:7070 (nomad job status node-probe)"
  done
}

# running_topology: nodes/roles/addrs of the nodes that run, servers first,
# for the commands that act on a cluster already up
running_topology() {
  local name role want
  nodes=() roles=() addrs=()
  for want in server worker client; do
    while read -r name role; do
      [ "$role" = "$want" ] || continue
      nodes+=("$name"); roles+=("$role")
      addrs+=("$(docker inspect -f "{{(index .NetworkSettings.Networks \"$network\").IPAddress}}" "$name")")
    done < <(docker ps --filter "label=$label" --filter status=running --format '{{.Names}} {{.Label "orchbench.node.role"}}' | sort)
  done
  [ ${#nodes[@]} -gt 0 ] && [ "${roles[0]}" = server ] || die "no running server node: just nodes-up first"
}
