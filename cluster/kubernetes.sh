#!/usr/bin/env bash
# The embedded single-node Kubernetes: etcd, kube-apiserver, controller
# manager, scheduler, kubelet, kube-proxy, its own containerd and CoreDNS.
#
# The whole node lives in a network namespace of its own, orchbench-k8s, whose
# loopback carries the node address 10.250.0.1 (the kubelet refuses a 127/8
# node address, and pods must reach the API server at a routable one). Nothing
# is added to the host's interfaces and no packet leaves that namespace but to
# the pods' bridge inside it. The harness and `just kubectl` reach the node by
# entering the namespace (setns), never through a relay or a tunnel.
# State lives in .state/kubernetes; every process started is recorded by PID.
#   kubernetes.sh up | status | down | images
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.tools/bin"
state="$root/.state"
k8s="$state/kubernetes"
pids="$state/pids"
logs="$state/logs"
run=/run/orchbench-k8s
# kept in step with harness/orchestrator/kubernetes (node.go)
ns=orchbench-k8s
node_ip=10.250.0.1
node_name=orchbench
pod_cidr=10.244.0.0/24
service_cidr=10.96.0.0/16
dns_ip=10.96.0.10
# shellcheck source=versions.env
source "$root/cluster/versions.env"
say() { printf '[kubernetes] %s\n' "$*"; }
die() { say "$*"; exit 1; }
# shellcheck source=lib.sh
source "$root/cluster/lib.sh"
# shellcheck source=k8s-node.sh
source "$root/cluster/k8s-node.sh"

nsx() { nsenter --net="/run/netns/$ns" -- "$@"; }
kubectl_() { nsx "$bin/kubectl" --kubeconfig "$k8s/admin.kubeconfig" "$@"; }
alive() { [ -f "$pids/k8s-$1" ] && kill -0 "$(cat "$pids/k8s-$1")" 2>/dev/null; }


need_tools() {
  for t in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl coredns metrics-server; do
    [ -x "$bin/$t" ] || die "$bin/$t is missing: run ./justw tools-kubernetes first"
  done
  for t in etcd containerd runc nsenter openssl; do
    command -v "$t" >/dev/null || die "$t is missing: run ./justw tools (Debian packages)"
  done
  [ -x /usr/lib/cni/bridge ] || die "/usr/lib/cni/bridge is missing: run ./justw tools (containernetworking-plugins)"
  docker info >/dev/null 2>&1 || die "no docker daemon: the images come from it (run ./justw cluster-up or cluster/dockerd.sh up)"
}

# start NAME COMMAND...: a daemon inside the node's network namespace only
# (nsenter --net keeps the host's mounts, which the kubelet and containerd share)
start() {
  local name=$1; shift
  setsid nsenter --net="/run/netns/$ns" -- "$@" >"$logs/k8s-$name.log" 2>&1 </dev/null &
  echo $! >"$pids/k8s-$name"
  say "started $name (pid $!)"
}

stop_pid() { stop_pidfile "$pids/k8s-$1" "$1" TERM; }

# Paths some components write to whatever their flags say (the kubelet's
# device-plugins directory and container log links, libcni's cache): the ones
# that did not exist before k8s-up are removed by k8s-down.
fixed_paths="/var/lib/kubelet /var/log/containers /var/log/pods /var/lib/cni /run/netns"
note_created_paths() {
  : >"$k8s/created-paths"
  # ip netns add turns /run/netns into a mount point the first time; it
  # is listed first, since it must be unmounted before it can be removed
  mountpoint -q /run/netns 2>/dev/null || echo "mount /run/netns" >>"$k8s/created-paths"
  for p in $fixed_paths; do [ -e "$p" ] || echo "$p" >>"$k8s/created-paths"; done
}

# The kubelet tunes these host-wide sysctls for itself; k8s-down puts them back.
global_sysctls="vm.overcommit_memory kernel.panic kernel.panic_on_oops"
save_sysctls() {
  [ -f "$k8s/sysctl.orig" ] && return 0
  for s in $global_sysctls; do echo "$s=$(sysctl -n "$s")"; done >"$k8s/sysctl.orig"
}
restore_sysctls() {
  [ -f "$k8s/sysctl.orig" ] || return 0
  while IFS='=' read -r k v; do sysctl -qw "$k=$v" || true; done <"$k8s/sysctl.orig"
  rm -f "$k8s/sysctl.orig"
}

netns_up() {
  [ -e "/run/netns/$ns" ] || ip netns add "$ns"
  ip -n "$ns" link set lo up
  output_has "inet $node_ip/32 " ip -n "$ns" addr show dev lo || ip -n "$ns" addr add "$node_ip/32" dev lo
  # the node itself reaches Service addresses (kube-proxy's NAT rules send
  # them on to the pods); without a route the kernel refuses before NAT
  ip -n "$ns" route replace "$service_cidr" dev lo src "$node_ip"
  # routing between pods and services happens inside the namespace only
  nsx sysctl -qw net.ipv4.ip_forward=1
  nsx sysctl -qw net.bridge.bridge-nf-call-iptables=1 2>/dev/null || modprobe br_netfilter 2>/dev/null || true
  say "network namespace $ns: node address $node_ip on its loopback"
}

# pki: a CA of this cluster, the API server's serving certificate, the
# service-account key pair and one static token per client.
pki() {
  local d="$k8s/pki"
  mkdir -p "$d"
  [ -f "$d/ca.crt" ] && [ -f "$d/tokens.csv" ] && return 0
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=orchbench-kubernetes-ca" \
    -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" -keyout "$d/apiserver.key" -out "$d/apiserver.csr" 2>/dev/null
  printf 'subjectAltName=IP:%s,IP:10.96.0.1,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth\n' \
    "$node_ip" >"$d/apiserver.ext"
  openssl x509 -req -in "$d/apiserver.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 3650 \
    -extfile "$d/apiserver.ext" -out "$d/apiserver.crt" 2>/dev/null
  openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
  openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
  {
    echo "$(openssl rand -hex 16),admin,admin,system:masters"
    echo "$(openssl rand -hex 16),system:node:$node_name,kubelet,system:nodes"
    echo "$(openssl rand -hex 16),system:kube-proxy,kube-proxy"
  } >"$d/tokens.csv"
  chmod 600 "$d"/*.key "$d/tokens.csv"
  say "pki: a new CA, API server certificate and tokens in .state/kubernetes/pki"
}

kubeconfig() { # kubeconfig NAME USER
  local token; token=$(awk -F, -v u="$2" '$2 == u {print $1}' "$k8s/pki/tokens.csv")
  cat >"$k8s/$1.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: orchbench
  cluster:
    server: https://$node_ip:6443
    certificate-authority-data: $(base64 -w0 "$k8s/pki/ca.crt")
users:
- name: $2
  user:
    token: $token
contexts:
- name: orchbench
  context: {cluster: orchbench, user: "$2"}
current-context: orchbench
YAML
  chmod 600 "$k8s/$1.kubeconfig"
}

write_configs() {
  mkdir -p "$k8s/cni" "$k8s/containerd" "$k8s/kubelet" "$k8s/pod-logs" "$run" "$pids" "$logs"
  kubeconfig admin admin
  kubeconfig kubelet "system:node:$node_name"
  kubeconfig kube-proxy system:kube-proxy
  {
    containerd_cri_toml "$k8s/containerd/root" "$run/containerd" "$run/containerd.sock" "$run/runc" \
      docker.io/orchbench/pause:local "$k8s/cni" "$(command -v runc)"
    printf '[plugins."io.containerd.internal.v1.opt"]\n  path = "%s"\n' "$k8s/containerd/opt"
  } >"$k8s/containerd/config.toml"
  cat >"$k8s/cni/10-orchbench.conflist" <<JSON
{"cniVersion": "0.4.0", "name": "orchbench-k8s", "plugins": [
  {"type": "bridge", "bridge": "obk8s0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$pod_cidr", "gateway": "10.244.0.1"}]],
            "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$k8s/cni-ipam"}},
  {"type": "portmap", "capabilities": {"portMappings": true}, "snat": true}]}
JSON
  {
    kubelet_yaml "$run/containerd.sock" "$node_ip" "$dns_ip"
    printf 'podCIDR: %s\npodLogsDir: %s\n' "$pod_cidr" "$k8s/pod-logs"
  } >"$k8s/kubelet.yaml"
  kube_proxy_yaml "$k8s/kube-proxy.kubeconfig" "$node_name" 10.244.0.0/16 "$node_ip" >"$k8s/kube-proxy.yaml"
}

# images: every orchbench/*:local image of the docker daemon, imported into
# the cluster's containerd under the same name (pods never pull)
import_images() {
  local refs; refs=$(docker images --format '{{.Repository}}:{{.Tag}}' | grep -E '^orchbench/[^:]+:local$' | sort -u)
  [ -n "$refs" ] || die "step 'import images' failed: no orchbench/*:local image in docker (run ./justw images)"
  # shellcheck disable=SC2086
  docker save $refs | ctr -a "$run/containerd.sock" -n k8s.io images import - >"$logs/k8s-images.log" 2>&1 \
    || die "step 'import images' failed: $(tail -n 3 "$logs/k8s-images.log")"
  say "images imported: $(echo $refs)"
}

coredns_image() {
  local ref="orchbench/coredns:local" tag="orchbench/coredns:$COREDNS_VERSION"
  if ! docker image inspect "$tag" >/dev/null 2>&1; then
    local ctx; ctx=$(mktemp -d)
    cp "$bin/coredns" "$ctx/coredns"
    printf 'FROM scratch\nCOPY coredns /coredns\nUSER 65534:65534\nENTRYPOINT ["/coredns"]\n' >"$ctx/Dockerfile"
    DOCKER_BUILDKIT=0 docker build -q -t "$tag" "$ctx" >/dev/null || die "step 'coredns image' failed"
    rm -rf "$ctx"
  fi
  docker tag "$tag" "$ref"
}

etcd_healthy() { output_has true nsx curl -sf http://127.0.0.1:2379/health; }
api_ready() { kubectl_ get --raw /readyz >/dev/null; }
probe_ready() { [ "$(kubectl_ -n orchbench-system get daemonset node-probe -o 'jsonpath={.status.numberReady}')" = 1 ]; }
node_ready() { output_has True kubectl_ get node "$node_name" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'; }
metrics_ready() { kubectl_ get --raw /apis/metrics.k8s.io/v1beta1/nodes >/dev/null 2>&1; }
coredns_ready() { [ "$(kubectl_ -n kube-system get deploy coredns -o 'jsonpath={.status.availableReplicas}')" = 1 ]; }

deploy_coredns() {
  sed "s/\${DNS_IP}/$dns_ip/g" "$root/cluster/kubernetes/coredns.yaml" | kubectl_ apply -f - >"$logs/k8s-coredns.log" 2>&1 \
    || die "step 'deploy coredns' failed: $(tail -n 3 "$logs/k8s-coredns.log")"
}

# metrics_server: metrics-server, which the HorizontalPodAutoscaler reads
# pods' CPU from, started unless it answers (a cluster brought up before it
# existed gains it on the next k8s-up)
metrics_server() {
  metrics_ready && return 0
  alive metrics-server || start metrics-server "$bin/metrics-server" --kubeconfig="$k8s/admin.kubeconfig" \
    --authentication-kubeconfig="$k8s/admin.kubeconfig" --authorization-kubeconfig="$k8s/admin.kubeconfig" \
    --bind-address="$node_ip" --secure-port=4443 --cert-dir="$k8s/metrics-server" \
    --kubelet-insecure-tls --kubelet-preferred-address-types=InternalIP --metric-resolution=10s --kubelet-request-timeout=5s
  sed "s/\${NODE_IP}/$node_ip/g" "$root/cluster/kubernetes/metrics-server.yaml" | kubectl_ apply -f - >"$logs/k8s-metrics-server-apply.log" 2>&1 \
    || die "step 'deploy metrics-server' failed: $(tail -n 3 "$logs/k8s-metrics-server-apply.log")"
  wait_for 90 "pod metrics (metrics.k8s.io)" metrics_ready || die "step 'metrics-server' failed: the metrics API did not answer within 90 s; see .state/logs/k8s-metrics-server.log"
}

up() {
  need_tools
  if alive kubelet && alive apiserver && api_ready 2>/dev/null; then
    say "already up (api server pid $(cat "$pids/k8s-apiserver"), kubelet pid $(cat "$pids/k8s-kubelet"))"
    metrics_server
    return 0
  fi
  local n; for n in etcd apiserver controller-manager scheduler containerd kubelet kube-proxy; do
    alive "$n" && die "half up: $n is running but the cluster is not answering; run 'just k8s-down' first"
  done
  local t0; t0=$(date +%s)
  mkdir -p "$k8s" "$pids" "$logs"
  # the kubelet takes the kubepods cgroups as they are; ones an earlier node
  # left (no kubelet runs now) go before the snapshot, so that k8s-down
  # removes the ones this node makes
  pgrep -x kubelet >/dev/null || "$root/cluster/hoststate.sh" clean-cgroups '^kubepods'
  "$root/cluster/hoststate.sh" snapshot "$state/hoststate/kubernetes"
  note_created_paths
  save_sysctls
  netns_up
  pki
  front_proxy_pki "$k8s/pki"
  write_configs
  coredns_image
  start containerd containerd --config "$k8s/containerd/config.toml"
  wait_for 30 "containerd" ctr -a "$run/containerd.sock" version || die "step 'containerd' failed: see .state/logs/k8s-containerd.log"
  import_images
  start etcd etcd --name orchbench --data-dir "$k8s/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster orchbench=http://127.0.0.1:2380 --listen-metrics-urls http://127.0.0.1:2381
  wait_for 30 "etcd healthy" etcd_healthy || die "step 'etcd' failed: see .state/logs/k8s-etcd.log"
  local p="$k8s/pki" aggregator
  mapfile -t aggregator < <(aggregator_flags "$p")
  start apiserver "$bin/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
    --bind-address="$node_ip" --advertise-address="$node_ip" --secure-port=6443 \
    --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" --client-ca-file="$p/ca.crt" \
    --token-auth-file="$p/tokens.csv" --authorization-mode=Node,RBAC \
    --service-account-issuer=https://kubernetes.default.svc --service-account-key-file="$p/sa.pub" \
    --service-account-signing-key-file="$p/sa.key" --service-cluster-ip-range="$service_cidr" \
    --service-node-port-range=30000-32767 --kubelet-preferred-address-types=InternalIP \
    --allow-privileged=false "${aggregator[@]}"
  wait_for 60 "api server ready" api_ready || die "step 'api server' failed: see .state/logs/k8s-apiserver.log"
  start controller-manager "$bin/kube-controller-manager" --kubeconfig="$k8s/admin.kubeconfig" \
    --authentication-kubeconfig="$k8s/admin.kubeconfig" --authorization-kubeconfig="$k8s/admin.kubeconfig" \
    --bind-address=127.0.0.1 --leader-elect=false --service-account-private-key-file="$p/sa.key" \
    --root-ca-file="$p/ca.crt" --use-service-account-credentials=true --allocate-node-cidrs=false \
    --horizontal-pod-autoscaler-sync-period=10s
  start scheduler "$bin/kube-scheduler" --kubeconfig="$k8s/admin.kubeconfig" \
    --authentication-kubeconfig="$k8s/admin.kubeconfig" --authorization-kubeconfig="$k8s/admin.kubeconfig" \
    --bind-address=127.0.0.1 --leader-elect=false
  # --containerd: the kubelet's cAdvisor reads containers' CPU from their
  # cgroups only when it finds containerd there (it assumes the default
  # socket); containerd 1.6's own task metrics are empty here, so without it
  # metrics-server has no pod CPU and the HPA cannot scale (docs/autoscaling.md)
  start kubelet "$bin/kubelet" --config="$k8s/kubelet.yaml" --kubeconfig="$k8s/kubelet.kubeconfig" \
    --hostname-override="$node_name" --node-ip="$node_ip" --root-dir="$k8s/kubelet" --cert-dir="$k8s/kubelet/pki" \
    --containerd="$run/containerd.sock" --v=1
  wait_for 90 "node $node_name ready" node_ready || die "step 'kubelet' failed: node not ready within 90 s; see .state/logs/k8s-kubelet.log"
  start kube-proxy "$bin/kube-proxy" --config="$k8s/kube-proxy.yaml"
  wait_for 60 "default service account" kubectl_ get serviceaccount default || die "step 'controller manager' failed: see .state/logs/k8s-controller-manager.log"
  deploy_coredns
  wait_for 120 "coredns ready ($dns_ip)" coredns_ready || die "step 'coredns' failed: $(kubectl_ -n kube-system get pods 2>&1 | tail -n 3)"
  # the node probe the harness reads the node's tasks through (docs/node-probe.md)
  kubectl_ apply -f "$root/cluster/kubernetes/node-probe.yaml" >"$logs/k8s-node-probe.log" 2>&1 \
    || die "step 'deploy node-probe' failed: $(tail -n 3 "$logs/k8s-node-probe.log")"
  wait_for 60 "node probe ready" probe_ready || die "step 'node probe' failed: $(kubectl_ -n orchbench-system get pods 2>&1 | tail -n 3)"
  metrics_server
  say "up in $(( $(date +%s) - t0 )) s: node $node_name at $node_ip inside network namespace $ns; kubectl: just kubectl get pods -A"
}

status() {
  for n in containerd etcd apiserver controller-manager scheduler kubelet kube-proxy metrics-server; do
    if alive "$n"; then say "$n: running (pid $(cat "$pids/k8s-$n"))"; else say "$n: not running"; fi
  done
  if alive apiserver; then
    kubectl_ get nodes -o wide 2>&1 | sed 's/^/    /' || true
    kubectl_ get pods -A -o wide 2>&1 | sed 's/^/    /' || true
  fi
}

down() {
  if alive apiserver && alive kubelet; then
    # workloads first, so the CNI plugin releases their addresses and links
    local nss; nss=$(kubectl_ get ns -o 'jsonpath={.items[*].metadata.name}' 2>/dev/null || true)
    for n in $nss; do
      case $n in kube-system|kube-public|kube-node-lease) continue ;; esac
      kubectl_ -n "$n" delete deploy,statefulset,job,pod,service --all --wait=false >/dev/null 2>&1 || true
    done
    kubectl_ -n kube-system delete deploy coredns --wait=false >/dev/null 2>&1 || true
    for _ in $(seq 1 60); do
      [ -z "$(ctr -a "$run/containerd.sock" -n k8s.io tasks ls -q 2>/dev/null | grep -v '^$' || true)" ] && break
      sleep 0.5
    done
  fi
  stop_pid kube-proxy
  stop_pid kubelet
  if alive containerd; then
    local t; for t in $(ctr -a "$run/containerd.sock" -n k8s.io tasks ls -q 2>/dev/null || true); do
      ctr -a "$run/containerd.sock" -n k8s.io tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true
    done
  fi
  stop_pid containerd
  # shims outlive containerd by design; ours name our socket
  local left; left=$(pgrep -f -- "-address $run/containerd.sock" || true)
  if [ -n "$left" ]; then say "stopping leftover shims: $(echo $left)"; kill -9 $left 2>/dev/null || true; fi
  stop_pid metrics-server
  stop_pid controller-manager
  stop_pid scheduler
  stop_pid apiserver
  stop_pid etcd
  # pod volumes, rootfs overlays, the kubelet's self bind mount, sandbox namespaces
  grep -oE " ($k8s|$run|/run/netns/cni-)[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  local cn; for cn in $(ip netns list 2>/dev/null | awk '$1 ~ /^cni-/ {print $1}'); do
    grep -qx "netns $cn" "$state/hoststate/kubernetes/netns" 2>/dev/null || ip netns del "$cn" 2>/dev/null || true
  done
  # the namespace takes the bridge, the pods' links, and every iptables rule
  # the kubelet and kube-proxy made with it
  if [ -e "/run/netns/$ns" ]; then ip netns del "$ns"; say "network namespace $ns removed"; fi
  # the kubelet (cgroupfs driver) made kubepods in every hierarchy and leaves
  # it when it stops; the pods' processes are gone by now
  "$root/cluster/hoststate.sh" clean-cgroups '^kubepods' "$state/hoststate/kubernetes"
  restore_sysctls
  if [ -f "$k8s/created-paths" ]; then
    while read -r p; do
      case "$p" in
        # only when no namespace is left in it (another project's, or a test's)
        "mount /run/netns") if [ -z "$(ls -A /run/netns 2>/dev/null)" ]; then umount /run/netns 2>/dev/null || true; fi; continue ;;
        /run/netns) rmdir /run/netns 2>/dev/null || true; continue ;;
      esac
      rm -rf "$p"
    done <"$k8s/created-paths"
    rm -f "$k8s/created-paths"
  fi
  # a new cluster each time: only the PKI is kept
  rm -rf "$run" "$k8s/etcd" "$k8s/kubelet" "$k8s/containerd" "$k8s/cni-ipam" "$k8s/pod-logs"
  say "down"
}

case "${1:-}" in
  up) up ;;
  status) status ;;
  down) down ;;
  images) alive containerd || die "not up: run just k8s-up"; import_images ;;
  *) echo "usage: $0 up|status|down|images" >&2; exit 2 ;;
esac
