# shellcheck shell=bash
# nodes.sh sets the topology (nodes, roles, addrs, server_addrs, servers),
# the names (label, network) and the budgets before it sources this file.
# shellcheck disable=SC2154
# nodes.sh status: one line per node with what each orchestrator says about
# it, then every problem found; fails when there is one. Sourced by nodes.sh
# (say, label). The cluster is read from inside a running server node, the
# way an operator on a real server would.

# in_node NODE COMMAND...: COMMAND's output inside NODE, empty when it fails
in_node() { docker exec "$@" 2>/dev/null || true; }

status() {
  local list; list=$(docker ps -a --filter "label=$label" --format '{{.Names}} {{.Label "orchbench.node.role"}} {{.State}}' | sort)
  [ -n "$list" ] || { say "no nodes (just nodes-up)"; return 1; }
  local name role state addr via="" via_addr=""
  local -A role_of state_of addr_of
  local order=()
  while read -r name role state; do
    addr=$(docker inspect -f "{{(index .NetworkSettings.Networks \"$network\").IPAddress}}" "$name" 2>/dev/null || true)
    role_of[$name]=$role; state_of[$name]=$state; addr_of[$name]=$addr; order+=("$name")
    if [ -z "$via" ] && [ "$role" = server ] && [ "$state" = running ]; then via=$name; via_addr=$addr; fi
  done <<<"$list"
  local problems=()
  [ -n "$via" ] || problems+=("no server node is running")

  # what each control plane says, keyed by node name
  local -A nomad_srv nomad_cli consul_of swarm_of
  local raft members nodes_t peers line n
  if [ -n "$via" ]; then
    local nomad=(/opt/obn/bin/nomad) consul=(/opt/obn/bin/consul)
    members=$(in_node "$via" "${nomad[@]}" server members -address "http://$via_addr:4646")
    raft=$(in_node "$via" "${nomad[@]}" operator raft list-peers -address "http://$via_addr:4646")
    [ -n "$members" ] || problems+=("nomad: the server on $via does not answer")
    while read -r n _ _ st _; do
      n=${n%.global}; [ -n "$n" ] || continue
      nomad_srv[$n]="server:$st"
      grep -qE "^$n(\.global)? .* leader " <<<"$raft" && nomad_srv[$n]+=":leader"
    done < <(tail -n +2 <<<"$members")
    nodes_t=$(in_node "$via" "${nomad[@]}" node status -address "http://$via_addr:4646" -t '{{range .}}{{.Name}} {{.Status}} {{.NodeClass}}{{"\n"}}{{end}}')
    while read -r n st cls; do [ -n "$n" ] && nomad_cli[$n]="client:$st:$cls"; done <<<"$nodes_t"
    members=$(in_node "$via" "${consul[@]}" members -http-addr "http://$via_addr:8500")
    peers=$(in_node "$via" "${consul[@]}" operator raft list-peers -http-addr "http://$via_addr:8500")
    [ -n "$members" ] || problems+=("consul: the server on $via does not answer")
    while read -r n _ st type _; do
      [ -n "$n" ] || continue
      consul_of[$n]="$type:$st"
      grep -qE "^$n .* leader " <<<"$peers" && consul_of[$n]+=":leader"
    done < <(tail -n +2 <<<"$members")
    line=$(in_node "$via" docker node ls --format '{{.Hostname}} {{if .ManagerStatus}}manager:{{.ManagerStatus}}{{else}}worker{{end}}:{{.Availability}}:{{.Status}}')
    [ -n "$line" ] || problems+=("swarm: the manager on $via does not answer")
    while read -r n st; do [ -n "$n" ] && swarm_of[$n]=$st; done <<<"$line"
  fi
  # Kubernetes, when it runs across the nodes (nodes-k8s.sh)
  local k8s_on="" k8s_etcd_leader="" k8s_cm="" k8s_sched="" k8s_eviction_set=""
  local -A k8s_of
  if [ -n "$via" ] && docker exec "$via" test -f "$k8s_etc/admin.kubeconfig" 2>/dev/null; then
    k8s_on=1
    k8s_eviction_set=$(in_node "$via" cat "$k8s_etc/kube-apiserver.sh" | grep -oE 'default-unreachable-toleration-seconds=[0-9]+' | cut -d= -f2 || true)
  fi
  if [ -n "$k8s_on" ]; then
    local kc=("$k8s_tools/kubectl" --kubeconfig "$k8s_etc/admin.kubeconfig" --request-timeout 5s)
    line=$(in_node "$via" "${kc[@]}" get nodes -o 'jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}')
    [ -n "$line" ] || problems+=("kubernetes: the API server on $via does not answer")
    while read -r n st; do
      [ -n "$n" ] || continue
      if [ "$st" = True ]; then k8s_of[$n]=node:Ready; else k8s_of[$n]=node:NotReady; fi
    done <<<"$line"
    for name in "${order[@]}"; do
      [ "${role_of[$name]}" = server ] && [ "${state_of[$name]}" = running ] || continue
      k8s_of[$name]=$(k8s_server_state "$name" "${addr_of[$name]}")
      [[ ${k8s_of[$name]} == etcd:leader* ]] && k8s_etcd_leader+="$name "
    done
    k8s_cm=$(in_node "$via" "${kc[@]}" -n kube-system get lease kube-controller-manager -o 'jsonpath={.spec.holderIdentity}')
    k8s_sched=$(in_node "$via" "${kc[@]}" -n kube-system get lease kube-scheduler -o 'jsonpath={.spec.holderIdentity}')
  fi

  local nl=0 cl=0 sl=0
  # the SWARM column is padded only when a KUBERNETES column follows it
  local swarm_w=""; [ -n "$k8s_on" ] && swarm_w=-30
  printf "%-14s %-7s %-12s %-8s %-22s %-20s %${swarm_w}s%s\n" NODE ROLE ADDRESS STATE NOMAD CONSUL SWARM "${k8s_on:+ KUBERNETES}"
  for name in "${order[@]}"; do
    role=${role_of[$name]}
    local nm=${nomad_srv[$name]:-} cs=${consul_of[$name]:-?} sw=${swarm_of[$name]:-?}
    [ "$role" = server ] || nm=${nomad_cli[$name]:-}
    local ks=""; [ -n "$k8s_on" ] && ks=${k8s_of[$name]:-?}
    printf "%-14s %-7s %-12s %-8s %-22s %-20s %${swarm_w}s%s\n" "$name" "$role" "${addr_of[$name]}" "${state_of[$name]}" "${nm:-?}" "$cs" "$sw" "${ks:+ $ks}"
    [[ $nm == *:leader ]] && nl=$((nl + 1))
    [[ $cs == *:leader ]] && cl=$((cl + 1))
    [[ $sw == manager:Leader:* ]] && sl=$((sl + 1))
    [ "${state_of[$name]}" = running ] || problems+=("$name: container ${state_of[$name]}")
    if [ "$role" = server ]; then
      [[ $nm == server:alive* ]] || problems+=("$name: not an alive Nomad server (${nm:-absent})")
      [[ $cs == server:alive* ]] || problems+=("$name: not an alive Consul server ($cs)")
      [[ $sw == manager:*:Drain:Ready ]] || problems+=("$name: not a drained, ready Swarm manager ($sw)")
      [ -z "$k8s_on" ] || [[ $ks == etcd:*:api:ok ]] || problems+=("$name: not a healthy etcd member with a ready API server ($ks)")
    else
      [ -z "$k8s_on" ] || [ "$ks" = node:Ready ] || problems+=("$name: not a ready Kubernetes node ($ks)")
      [[ $nm == client:ready:$role ]] || problems+=("$name: not a ready Nomad client of class $role (${nm:-absent})")
      [[ $cs == client:alive* ]] || problems+=("$name: not an alive Consul client ($cs)")
      [[ $sw == worker:Active:Ready ]] || problems+=("$name: not an active, ready Swarm worker ($sw)")
    fi
  done
  if [ -n "$via" ]; then
    [ "$nl" -eq 1 ] || problems+=("nomad: $nl leaders")
    [ "$cl" -eq 1 ] || problems+=("consul: $cl leaders")
    [ "$sl" -eq 1 ] || problems+=("swarm: $sl leaders")
  fi
  if [ -n "$k8s_on" ]; then
    k8s_etcd_leader=${k8s_etcd_leader% }
    say "kubernetes: etcd leader ${k8s_etcd_leader:-none}; kube-controller-manager lease ${k8s_cm%%_*}; kube-scheduler lease ${k8s_sched%%_*}; pods evicted ${k8s_eviction_set:-?} s after their node is lost"
    [ "$(wc -w <<<"$k8s_etcd_leader")" -eq 1 ] || problems+=("kubernetes: $(wc -w <<<"$k8s_etcd_leader") etcd leaders")
    [ -n "$k8s_cm" ] || problems+=("kubernetes: no kube-controller-manager holds its lease")
    [ -n "$k8s_sched" ] || problems+=("kubernetes: no kube-scheduler holds its lease")
  fi
  # the client node's VictoriaMetrics and Nomad Autoscaler (nodes-infra.sh)
  if [ "${state_of[$cluster_name-client]:-}" = running ]; then
    if node_vm_healthy; then say "victoriametrics: healthy on $client_addr:8428"; else problems+=("victoriametrics: no answer on $client_addr:8428 (nodes.sh infra)"); fi
    if node_autoscaler_healthy; then say "nomad autoscaler: healthy on $client_addr:7072"; else problems+=("nomad autoscaler: no answer on $client_addr:7072 (nodes.sh infra)"); fi
  fi
  if [ ${#problems[@]} -gt 0 ]; then
    local p; for p in "${problems[@]}"; do say "problem: $p"; done
    return 1
  fi
  say "ok: every node is up with its agents; one leader each for Nomad, Consul and Swarm${k8s_on:+, and for etcd and both Kubernetes leases}"
}
