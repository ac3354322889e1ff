# shellcheck shell=bash
# nodes.sh sets the topology (nodes, roles, addrs, server_addrs, servers),
# the names (label, network, cluster_name, client_addr, registry_port) and
# bin/root before it sources this file.
# shellcheck disable=SC2154
# Kubernetes across the emulated nodes (docs/cluster.md, "Kubernetes across
# the nodes"), with `nodes.sh up ... k8s=1` or ORCHBENCH_K8S=1: on every
# server an etcd member, kube-apiserver, and kube-controller-manager and
# kube-scheduler with leader election; on every worker and on the client
# containerd, kubelet and kube-proxy. Servers register no kubelet, so no pod
# lands there; the client is tainted, so only what tolerates it (the load
# job, the node probe) runs there. Pods of node ADDR live in 10.244.<last
# octet of ADDR>.0/24 on a bridge of their own, and every node routes each
# other node's pod range to that node's address on the nodes' network.
# With 3 servers the harness and every kubelet reach the API servers through
# a TCP balancer on the client node (orchbench tcp-balance).

k8s_pod_net=10.244.0.0/16
k8s_service_cidr=10.96.0.0/16
k8s_dns_ip=10.96.0.10
k8s_api_port=6443
# the node probe DaemonSet listens here: the Nomad probe job holds 7070 on
# the same nodes (nodes-probe.sh)
k8s_probe_port=7071
# where the binaries are mounted in every node, and the node's own files
k8s_tools=/opt/obn/k8s
k8s_etc=/etc/obn/k8s
k8s_run=/run/obn-containerd
# how long Kubernetes waits before it evicts the pods of an unreachable or
# not-ready node (the API server's default tolerations): its own default is
# 300 s; K8S_EVICTION (k8s_eviction=) shortens it, and status says it
k8s_eviction=${K8S_EVICTION:-300}
# how long a node may miss its heartbeats before it is marked NotReady
# (kube-controller-manager's --node-monitor-grace-period; 50 s by default)
k8s_grace=${K8S_NODE_GRACE:-50}

# k8s_state: the host's copy of the cluster's PKI and kubeconfigs; the
# harness's admin.kubeconfig is there (nodes.sh env)
k8s_state() { echo "$root/.state/nodes/$cluster_name/kubernetes"; }

# k8s_mounts: the docker run arguments a node needs besides the default
# ones: the binaries, the kubelet's /dev/kmsg, containerd's data on a volume
# (overlayfs snapshots cannot sit on the node's overlay root)
k8s_mounts() {
  local node=$1 t
  for t in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do
    printf '%s\n' -v "$bin/$t:$k8s_tools/$t:ro"
  done
  printf '%s\n' -v "$(command -v etcd):$k8s_tools/etcd:ro" --device /dev/kmsg
  docker volume create --label "$label" "$node-containerd" >/dev/null
  printf '%s\n' -v "$node-containerd:/var/lib/containerd"
  [ "$node" != "$cluster_name-client" ] || k8s_metrics_mounts
}

k8s_need() {
  local t
  [[ $k8s_eviction =~ ^[0-9]+$ ]] || die "k8s_eviction=$k8s_eviction: a whole number of seconds is needed"
  [[ $k8s_grace =~ ^[0-9]+$ ]] && [ "$k8s_grace" -ge 10 ] || die "k8s_grace=$k8s_grace: at least 10 seconds (kubelets post their status every 10 s)"
  for t in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl metrics-server; do
    [ -x "$bin/$t" ] || die "k8s=1: $bin/$t is missing: run ./justw tools-kubernetes first"
  done
  command -v etcd >/dev/null || die "k8s=1: etcd is missing on this machine: run ./justw tools (Debian's etcd-server)"
  [ -e /dev/kmsg ] || die "k8s=1: /dev/kmsg is missing: the kubelet refuses to start without it"
}

k8s_pod_cidr() { echo "10.244.${1##*.}.0/24"; }

# k8s_api: the address the kubelets, kube-proxies and the harness use for
# the API: the balancer on the client node with 3 servers, else the server
k8s_api() { if [ "$servers" -gt 1 ]; then echo "$client_addr:$k8s_api_port"; else echo "${server_addrs[0]}:$k8s_api_port"; fi; }

# k8s_pki: a CA, the API servers' certificate (every server's address, the
# balancer's and the service address), the service-account keys and one
# token per user; made once per cluster on the host.
k8s_pki() {
  local d; d="$(k8s_state)/pki"
  mkdir -p "$d"
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=$cluster_name-kubernetes-ca" \
    -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null || die "step 'k8s pki' failed: openssl"
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" -keyout "$d/apiserver.key" -out "$d/apiserver.csr" 2>/dev/null
  local sans="IP:10.96.0.1,IP:127.0.0.1,IP:$client_addr" a
  for a in "${server_addrs[@]}"; do sans+=",IP:$a"; done
  printf 'subjectAltName=%s,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth\n' "$sans" >"$d/apiserver.ext"
  openssl x509 -req -in "$d/apiserver.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 30 \
    -extfile "$d/apiserver.ext" -out "$d/apiserver.crt" 2>/dev/null || die "step 'k8s pki' failed: the API server's certificate"
  openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
  openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
  {
    echo "$(openssl rand -hex 16),admin,admin,system:masters"
    echo "$(openssl rand -hex 16),system:kube-proxy,kube-proxy"
    local i
    for i in "${!nodes[@]}"; do
      [ "${roles[$i]}" = server ] && continue
      echo "$(openssl rand -hex 16),system:node:${nodes[$i]},kubelet-${nodes[$i]},system:nodes"
    done
  } >"$d/tokens.csv"
  chmod 600 "$d"/*.key "$d/tokens.csv"
}

# k8s_kubeconfig USER SERVER: a kubeconfig for USER's token (tokens.csv's
# user name) at https://SERVER
k8s_kubeconfig() {
  local d; d="$(k8s_state)/pki"
  local token; token=$(awk -F, -v u="$1" '$2 == u {print $1}' "$d/tokens.csv")
  [ -n "$token" ] || die "step 'k8s kubeconfig' failed: no token for $1"
  cat <<YAML
apiVersion: v1
kind: Config
clusters:
- name: $cluster_name
  cluster:
    server: https://$2
    certificate-authority-data: $(base64 -w0 "$d/ca.crt")
users:
- name: $1
  user:
    token: $token
contexts:
- name: $cluster_name
  context: {cluster: $cluster_name, user: "$1"}
current-context: $cluster_name
YAML
}

# k8s_prepare_script: what every Kubernetes agent's start script runs first,
# again after a revived node, whose network namespace and mounts are new:
# the routes to the other nodes' pods, / as a shared mount (the kubelet's
# mount propagation needs it), forwarding of pod traffic, the kubelet's
# cgroup root in every hierarchy.
k8s_prepare_script() {
  local cg=$1 i
  echo 'set -e'
  for i in "${!nodes[@]}"; do
    [ "${roles[$i]}" = server ] && continue
    [ "$i" -eq "$2" ] && continue
    echo "ip route replace $(k8s_pod_cidr "${addrs[$i]}") via ${addrs[$i]} dev eth0"
  done
  echo 'mount --make-rshared /'
  # the node's dockerd drops whatever it forwards that is not its own
  # (FORWARD policy DROP): pod traffic between nodes is let through
  cat <<SH
for dir in -s -d; do
  iptables -C FORWARD \$dir $k8s_pod_net -j ACCEPT 2>/dev/null || iptables -I FORWARD \$dir $k8s_pod_net -j ACCEPT
done
sysctl -qw net.ipv4.ip_forward=1
sysctl -qw net.bridge.bridge-nf-call-iptables=1 2>/dev/null || true
# the kubelet sets these machine-wide sysctls to its values when they
# differ; the node sees files with its values in their place instead, so
# the machine's stay as they are
mkdir -p $k8s_etc/sysctl
for kv in vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000; do
  k=\${kv%=*} f=$k8s_etc/sysctl/\$(echo \${kv%=*} | tr / .)
  # once in place it is left alone: every agent runs this script, and a
  # kubelet reading the file while it is written again would read nothing
  grep -q " /proc/sys/\$k " /proc/self/mountinfo && continue
  echo "\${kv#*=}" >"\$f"
  mount --bind "\$f" "/proc/sys/\$k"
done
for h in /sys/fs/cgroup/*/; do
  [ -d "\$h$cg" ] || continue
  mkdir -p "\$h$cg/kube"
  if [ -f "\$h$cg/cpuset.cpus" ]; then
    cat "\$h$cg/cpuset.cpus" >"\$h$cg/kube/cpuset.cpus"
    cat "\$h$cg/cpuset.mems" >"\$h$cg/kube/cpuset.mems"
  fi
done
SH
}

# k8s_agent NODE NAME COMMAND [BEFORE]: the agent's start script runs the
# node's preparation and the shell line BEFORE, then COMMAND (start_in's
# scripts are what node faults rerun)
k8s_agent() {
  local node=$1 name=$2 cmd=$3 before=${4:-:}
  printf 'sh %s/prepare.sh\n%s\nexec %s\n' "$k8s_etc" "$before" "$cmd" | write_in "$node" "$k8s_etc/$name.sh"
  start_in "$node" "$name" "sh $k8s_etc/$name.sh"
}

# k8s_wait_containerd: a shell line that waits (a minute at most) until
# the node's containerd answers: a kubelet started before it exits ("validate
# CRI v1 runtime API"), which a revived node, starting both at once, hit
k8s_wait_containerd() {
  printf 'n=0; until ctr --address %s/containerd.sock version >/dev/null 2>&1 || [ $n -ge 60 ]; do n=$((n + 1)); sleep 1; done' "$k8s_run"
}

# k8s_kubelet_cpus_script CGROUP: run before each start of the kubelet (and
# only then: its CPU manager's checkpoint is removed).
k8s_kubelet_cpus_script() {
  local cg=$1
  echo 'set -e'
  cat <<SH
# A node whose cpuset is a part of the machine's CPUs (the machine's owner
# may pin containers): the kubelet's default CPU policy gives its pods
# every CPU the machine has, which the kernel refuses under a narrower
# parent. The static policy with the others reserved keeps pods in the
# node's own; a node with every CPU keeps the default.
expand() { echo "\$1" | tr ',' '\\n' | awk -F- '{ if (NF == 2) for (i = \$1; i <= \$2; i++) print i; else if (\$1 != "") print \$1 }'; }
expand "\$(cat /sys/fs/cgroup/cpuset$cg/cpuset.cpus)" >$k8s_etc/own-cpus
reserved=\$(expand "\$(cat /sys/devices/system/cpu/online)" | grep -vxF -f $k8s_etc/own-cpus | paste -sd, || true)
if [ -n "\$reserved" ]; then
  echo "--cpu-manager-policy=static --reserved-cpus=\$reserved" >$k8s_etc/kubelet-cpus.flags
else
  : >$k8s_etc/kubelet-cpus.flags
fi
# its checkpoint names the policy of its last start, which may differ
rm -f /var/lib/kubelet/cpu_manager_state
SH
}

# k8s_supervised NODE NAME ADDR COMMAND: an agent that exits when it
# cannot reach the API in time at its start, or when it loses its
# leader-election lease (kube-controller-manager, kube-scheduler): started
# once the server's API is ready and again whenever it ends, as systemd's
# Restart=always would; stopping the script stops it
k8s_supervised() {
  local node=$1 name=$2 addr=$3 cmd=$4
  cat <<SH | write_in "$node" "$k8s_etc/$name.sh"
sh $k8s_etc/prepare.sh
trap 'kill \$child 2>/dev/null; exit 0' TERM INT
while :; do
  until curl -sfk -m 3 https://$addr:$k8s_api_port/readyz >/dev/null 2>&1; do sleep 1; done
  $cmd &
  child=\$!
  wait \$child
  echo "$name ended (\$?); starting it again"
  sleep 2
done
SH
  start_in "$node" "$name" "sh $k8s_etc/$name.sh"
}

# k8s_copy NODE: the PKI and kubeconfigs a node needs, into /etc/obn/k8s
k8s_copy() {
  local node=$1 role=$2 d; d=$(k8s_state)
  docker exec "$node" mkdir -p "$k8s_etc/pki"
  if [ "$role" = server ]; then
    local f; for f in ca.crt ca.key apiserver.crt apiserver.key sa.key sa.pub tokens.csv; do
      docker cp -q "$d/pki/$f" "$node:$k8s_etc/pki/$f"
    done
    k8s_front_proxy_copy "$node"
    k8s_kubeconfig admin "$3:$k8s_api_port" | write_in "$node" "$k8s_etc/admin.kubeconfig"
  else
    k8s_kubeconfig "system:node:$node" "$(k8s_api)" | write_in "$node" "$k8s_etc/kubelet.kubeconfig"
    k8s_kubeconfig system:kube-proxy "$(k8s_api)" | write_in "$node" "$k8s_etc/kube-proxy.kubeconfig"
  fi
  # the harness run on the client node finds the API as on the host
  [ "$role" = client ] && k8s_kubeconfig admin "$(k8s_api)" | write_in "$node" "$k8s_etc/admin-client.kubeconfig"
  return 0
}

# k8s_etcd_cluster: every server's member, for --initial-cluster
k8s_etcd_cluster() {
  local i out=""
  for i in "${!nodes[@]}"; do
    [ "${roles[$i]}" = server ] && out+="${nodes[$i]}=http://${addrs[$i]}:2380,"
  done
  echo "${out%,}"
}

k8s_etcd_endpoints() { local a out=""; for a in "${server_addrs[@]}"; do out+="http://$a:2379,"; done; echo "${out%,}"; }

# k8s_server NODE ADDR: etcd, the API server, and the leader-elected
# controller manager and scheduler. etcd and the API speak plain HTTP to
# each other on the nodes' private network, as the registry does; a real
# cluster needs TLS there (issue 25). Heartbeats and elections are slower
# than etcd's defaults (100 ms, 1 s): a node's budget is a fraction of a core,
# and a throttled member would otherwise call elections all the time.
k8s_server() {
  local node=$1 addr=$2 p=$k8s_etc/pki kc=$k8s_etc/admin.kubeconfig
  k8s_agent "$node" etcd "$k8s_tools/etcd --name $node --data-dir /var/lib/etcd \
--listen-client-urls http://$addr:2379,http://127.0.0.1:2379 --advertise-client-urls http://$addr:2379 \
--listen-peer-urls http://$addr:2380 --initial-advertise-peer-urls http://$addr:2380 \
--initial-cluster $(k8s_etcd_cluster) --initial-cluster-state new --initial-cluster-token $cluster_name \
--heartbeat-interval 250 --election-timeout 2500"
  k8s_agent "$node" kube-apiserver "$k8s_tools/kube-apiserver --etcd-servers=$(k8s_etcd_endpoints) \
--bind-address=$addr --advertise-address=$addr --secure-port=$k8s_api_port \
--tls-cert-file=$p/apiserver.crt --tls-private-key-file=$p/apiserver.key --client-ca-file=$p/ca.crt \
--token-auth-file=$p/tokens.csv --authorization-mode=Node,RBAC \
--service-account-issuer=https://kubernetes.default.svc --service-account-key-file=$p/sa.pub \
--service-account-signing-key-file=$p/sa.key --service-cluster-ip-range=$k8s_service_cidr \
--service-node-port-range=30000-32767 --kubelet-preferred-address-types=InternalIP --allow-privileged=false \
--default-not-ready-toleration-seconds=$k8s_eviction --default-unreachable-toleration-seconds=$k8s_eviction \
$(k8s_aggregator_flags)"
  k8s_supervised "$node" kube-controller-manager "$addr" "$k8s_tools/kube-controller-manager --kubeconfig=$kc \
--authentication-kubeconfig=$kc --authorization-kubeconfig=$kc --bind-address=127.0.0.1 \
--leader-elect=true --service-account-private-key-file=$p/sa.key --root-ca-file=$p/ca.crt \
--use-service-account-credentials=true --allocate-node-cidrs=false --node-monitor-grace-period=${k8s_grace}s \
--horizontal-pod-autoscaler-sync-period=10s"
  k8s_supervised "$node" kube-scheduler "$addr" "$k8s_tools/kube-scheduler --kubeconfig=$kc \
--authentication-kubeconfig=$kc --authorization-kubeconfig=$kc --bind-address=127.0.0.1 --leader-elect=true"
}

# k8s_containerd_config ADDR: the node's CRI runtime. Its images come from
# the client node's registry in plain HTTP (the mirror entry), the pause
# image too.
k8s_containerd_config() {
  containerd_cri_toml /var/lib/containerd "$k8s_run" "$k8s_run/containerd.sock" "$k8s_run/runc" \
    "$client_addr:$registry_port/orchbench/pause:local" "$k8s_etc/cni"
  cat <<TOML
[plugins."io.containerd.grpc.v1.cri".registry.mirrors."$client_addr:$registry_port"]
  endpoint = ["http://$client_addr:$registry_port"]
TOML
}

# k8s_cni_config ADDR: the bridge plugin on the node's own pod range; no
# masquerade, since every node routes every pod range (a pod sees its
# peers' own addresses, as with a flat pod network)
k8s_cni_config() {
  local cidr; cidr=$(k8s_pod_cidr "$1")
  cat <<JSON
{"cniVersion": "0.4.0", "name": "$cluster_name-pods", "plugins": [
  {"type": "bridge", "bridge": "obpods0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$cidr", "gateway": "${cidr%.0/24}.1"}]],
            "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "/var/lib/cni/ipam"}},
  {"type": "portmap", "capabilities": {"portMappings": true}, "snat": true}]}
JSON
}

# k8s_kubelet_config NODE ADDR CGROUP: the kubelet's pods under the node's
# own cgroup, so the node's budget bounds them
k8s_kubelet_config() {
  kubelet_yaml "$k8s_run/containerd.sock" "$2" "$k8s_dns_ip"
  echo "cgroupRoot: $3/kube"
}

k8s_proxy_config() {
  kube_proxy_yaml "$k8s_etc/kube-proxy.kubeconfig" "$1" "$k8s_pod_net" "$2"
}

# k8s_node_labels NODE ROLE: the placement labels (node_meta) as --node-labels
k8s_node_labels() {
  local out="" k v
  while read -r k v; do out+="$k=$v,"; done < <(node_meta "$1" "$2")
  echo "${out%,}"
}

# k8s_kubelet_node NODE ADDR ROLE: containerd, the kubelet and kube-proxy.
# The client registers tainted: only pods that tolerate it (the load job,
# the node probe) run there, as only the load runs on study 002's client.
k8s_kubelet_node() {
  local node=$1 addr=$2 role=$3 cg; cg=$(node_cgroup "$node")
  k8s_containerd_config | write_in "$node" "$k8s_etc/containerd.toml"
  k8s_cni_config "$addr" | write_in "$node" "$k8s_etc/cni/10-pods.conflist"
  k8s_kubelet_config "$node" "$addr" "$cg" | write_in "$node" "$k8s_etc/kubelet.yaml"
  k8s_proxy_config "$node" "$addr" | write_in "$node" "$k8s_etc/kube-proxy.yaml"
  k8s_agent "$node" containerd "containerd --config $k8s_etc/containerd.toml"
  local taint=""
  [ "$role" = client ] && taint="--register-with-taints=orchbench.role=client:NoSchedule"
  k8s_kubelet_cpus_script "$cg" | write_in "$node" "$k8s_etc/kubelet-cpus.sh"
  # --containerd: pods' CPU from their cgroups, for metrics-server (kubernetes.sh says why)
  k8s_agent "$node" kubelet "$k8s_tools/kubelet --config=$k8s_etc/kubelet.yaml --kubeconfig=$k8s_etc/kubelet.kubeconfig \
--hostname-override=$node --node-ip=$addr --root-dir=/var/lib/kubelet --cert-dir=/var/lib/kubelet/pki \
--containerd=$k8s_run/containerd.sock --node-labels=$(k8s_node_labels "$node" "$role") $taint \$(cat $k8s_etc/kubelet-cpus.flags) --v=1" \
    "sh $k8s_etc/kubelet-cpus.sh; $(k8s_wait_containerd)"
  k8s_agent "$node" kube-proxy "$k8s_tools/kube-proxy --config=$k8s_etc/kube-proxy.yaml"
}

# k8s_balancer NODE: the API's TCP balancer on the client node, in front of
# every server's API server (orchbench tcp-balance: a dead server's
# connections fail over to the others). With one server there is none.
k8s_balancer() {
  [ "$servers" -gt 1 ] || return 0
  local backends="" a
  for a in "${server_addrs[@]}"; do backends+=" --backend $a:$k8s_api_port"; done
  docker exec "$1" "$node_probe_bin" tcp-balance --help >/dev/null 2>&1 \
    || die "step 'api balancer' failed: ${ORCHBENCH_BIN:-$bin/orchbench} has no tcp-balance command (just build, or ORCHBENCH_BIN=a newer build)"
  k8s_agent "$1" k8s-balancer "$node_probe_bin tcp-balance --listen $client_addr:$k8s_api_port$backends"
  wait_for 30 "api balancer on $client_addr:$k8s_api_port" output_has '^ok$' docker exec "$1" curl -sk -m 3 "https://$client_addr:$k8s_api_port/readyz" \
    || die "step 'api balancer' failed: $(docker exec "$1" tail -n 3 /var/log/obn/k8s-balancer.log)"
}

# k8s_server_state NODE ADDR: etcd:leader|follower|down and api:ok|down, as
# the server itself says (etcd's etcd_server_is_leader, the API's /readyz)
k8s_server_state() {
  local m etcd=down api=down
  m=$(docker exec "$1" curl -sf -m 3 "http://$2:2379/metrics" 2>/dev/null | grep -E '^etcd_server_is_leader ' || true)
  case "$m" in *" 1") etcd=leader ;; *" 0") etcd=follower ;; esac
  [ "$(docker exec "$1" curl -sk -m 3 "https://$2:$k8s_api_port/readyz" 2>/dev/null)" = ok ] && api=ok
  echo "etcd:$etcd:api:$api"
}

kubectl_in() { local s=$1; shift; docker exec -i "$s" "$k8s_tools/kubectl" --kubeconfig "$k8s_etc/admin.kubeconfig" "$@"; }

k8s_etcd_healthy() { output_has '"health":"true"' docker exec "$1" curl -sf "http://$2:2379/health"; }
k8s_api_ready() { kubectl_in "${nodes[0]}" get --raw /readyz >/dev/null; }
k8s_nodes_ready() {
  [ "$(kubectl_in "${nodes[0]}" get nodes -o 'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c '^True$')" -eq $(( ${#nodes[@]} - servers )) ]
}
# k8s_unready: each kubelet node that is not Ready, with its kubelet's last line
k8s_unready() {
  local i st
  for i in "${!nodes[@]}"; do
    [ "${roles[$i]}" = server ] && continue
    st=$(kubectl_in "${nodes[0]}" get node "${nodes[$i]}" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null || true)
    [ "$st" = True ] || printf '%s is not ready (%s), its kubelet says: %s; ' "${nodes[$i]}" "${st:-not registered}" "$(docker exec "${nodes[$i]}" tail -n 1 /var/log/obn/kubelet.log)"
  done
}
k8s_coredns_ready() { [ "$(kubectl_in "${nodes[0]}" -n kube-system get deploy coredns -o 'jsonpath={.status.availableReplicas}')" = 1 ]; }
k8s_probes_ready() { [ "$(kubectl_in "${nodes[0]}" -n orchbench-system get daemonset node-probe -o 'jsonpath={.status.numberReady}')" = $(( ${#nodes[@]} - servers )) ]; }

# k8s_registry_manifest FILE: a manifest of cluster/kubernetes with the
# project's images pulled from the client node's registry (the embedded
# node imports them and never pulls), the probe on its own port
k8s_registry_manifest() {
  sed -e "s#image: \(docker.io/\)\{0,1\}orchbench/#image: $client_addr:$registry_port/orchbench/#" \
      -e 's#imagePullPolicy: Never#imagePullPolicy: IfNotPresent#' \
      -e "s#\${DNS_IP}#$k8s_dns_ip#g" \
      -e "s#:7070#:$k8s_probe_port#; s#containerPort: 7070#containerPort: $k8s_probe_port#; s#hostPort: 7070#hostPort: $k8s_probe_port#" \
      "$root/cluster/kubernetes/$1"
}

k8s_up() {
  local t0 i; t0=$(date +%s)
  rm -rf "$(k8s_state)"; mkdir -p "$(k8s_state)"
  k8s_pki
  k8s_front_proxy
  k8s_kubeconfig admin "$(k8s_api)" >"$(k8s_state)/admin.kubeconfig"
  chmod 600 "$(k8s_state)/admin.kubeconfig"
  docker image inspect orchbench/coredns:local >/dev/null 2>&1 || die "k8s=1: orchbench/coredns:local is missing (just k8s-up makes it once)"
  push_images orchbench/coredns:local orchbench/orchbench:local
  for i in "${!nodes[@]}"; do
    k8s_copy "${nodes[$i]}" "${roles[$i]}" "${addrs[$i]}"
    k8s_prepare_script "$(node_cgroup "${nodes[$i]}")" "$i" | write_in "${nodes[$i]}" "$k8s_etc/prepare.sh"
  done
  for i in "${!nodes[@]}"; do
    if [ "${roles[$i]}" = server ]; then k8s_server "${nodes[$i]}" "${addrs[$i]}"; fi
  done
  for i in "${!nodes[@]}"; do
    [ "${roles[$i]}" = server ] || continue
    wait_for 120 "etcd on ${nodes[$i]}" k8s_etcd_healthy "${nodes[$i]}" "${addrs[$i]}" \
      || die "step 'etcd' on ${nodes[$i]} failed: $(docker exec "${nodes[$i]}" tail -n 3 /var/log/obn/etcd.log)"
  done
  wait_for 180 "kube-apiserver ready" k8s_api_ready || die "step 'kube-apiserver' failed: $(docker exec "${nodes[0]}" tail -n 3 /var/log/obn/kube-apiserver.log)"
  k8s_balancer "$cluster_name-client"
  for i in "${!nodes[@]}"; do
    if [ "${roles[$i]}" != server ]; then k8s_kubelet_node "${nodes[$i]}" "${addrs[$i]}" "${roles[$i]}"; fi
  done
  wait_for 240 "kubernetes: $(( ${#nodes[@]} - servers )) nodes ready" k8s_nodes_ready || die "step 'kubelets' failed: $(k8s_unready)"
  k8s_registry_manifest coredns.yaml | kubectl_in "${nodes[0]}" apply -f - >/dev/null || die "step 'deploy coredns' failed"
  k8s_registry_manifest node-probe.yaml | kubectl_in "${nodes[0]}" apply -f - >/dev/null || die "step 'deploy node-probe' failed"
  # no API serves the controller manager's flags: its node-loss grace is
  # published here for the harness's node-fault records (the eviction is
  # read from the API server's default tolerations)
  kubectl_in "${nodes[0]}" -n kube-system create configmap orchbench-node-loss \
    --from-literal=node-monitor-grace-period="${k8s_grace}s" >/dev/null || die "step 'publish node-loss settings' failed"
  wait_for 240 "coredns ready ($k8s_dns_ip)" k8s_coredns_ready \
    || die "step 'coredns' failed: pods: $(kubectl_in "${nodes[0]}" -n kube-system get pods 2>&1 | paste -sd';'); ${nodes[0]}'s controller manager: $(docker exec "${nodes[0]}" tail -n 2 /var/log/obn/kube-controller-manager.log)"
  wait_for 180 "node probes ready on port $k8s_probe_port" k8s_probes_ready \
    || die "step 'node probe daemonset' failed: $(kubectl_in "${nodes[0]}" -n orchbench-system get pods -o wide 2>&1 | paste -sd';')"
  k8s_metrics_server
  say "kubernetes up in $(( $(date +%s) - t0 )) s: API at https://$(k8s_api), kubeconfig $(k8s_state)/admin.kubeconfig (nodes.sh env)"
}
