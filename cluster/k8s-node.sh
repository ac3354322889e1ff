# shellcheck shell=bash
# Sourced by kubernetes.sh (the single-node cluster) and nodes-k8s.sh (the
# emulated nodes): the configs of a Kubernetes node's agents (containerd, the
# kubelet, kube-proxy), so a workaround for this kernel is made in one place
# and holds on both.

# containerd_cri_toml ROOT STATE SOCKET RUNC_ROOT SANDBOX_IMAGE CNI_CONF_DIR [RUNC_BINARY]:
# containerd's config on stdout. A caller appends its own tables (a registry
# mirror, the opt plugin's path) after it.
containerd_cri_toml() {
  local root=$1 state=$2 socket=$3 runc_root=$4 sandbox=$5 cni_conf=$6 runc_binary=${7:-}
  cat <<TOML
version = 2
root = "$root"
state = "$state"
[grpc]
  address = "$socket"
[plugins."io.containerd.grpc.v1.cri"]
  # no AppArmor in this kernel
  disable_apparmor = true
  # without CAP_SYS_RESOURCE runc cannot give the sandbox its oom_score_adj of -998
  restrict_oom_score_adj = true
  sandbox_image = "$sandbox"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$cni_conf"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
    Root = "$runc_root"
TOML
  if [ -n "$runc_binary" ]; then
    printf '    BinaryName = "%s"\n' "$runc_binary"
  fi
}

# kubelet_yaml SOCKET ADDRESS DNS_IP: the kubelet's config on stdout; a
# caller appends its own keys (podCIDR, cgroupRoot, podLogsDir).
kubelet_yaml() {
  local socket=$1 address=$2 dns_ip=$3
  cat <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# this kernel has cgroup v1 only, which 1.34 still runs with this set
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$socket
failSwapOn: false
address: $address
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
# pods get CoreDNS only, never the host's resolver
resolvConf: ""
clusterDNS: ["$dns_ip"]
clusterDomain: cluster.local
registerNode: true
serializeImagePulls: false
# images come from the project's own store: the kubelet must not collect them
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "2%", imagefs.available: "2%"}
YAML
}

# kube_proxy_yaml KUBECONFIG NODE_NAME CLUSTER_CIDR NODE_IP: kube-proxy's
# config on stdout.
kube_proxy_yaml() {
  cat <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $1}
mode: iptables
hostnameOverride: $2
clusterCIDR: $3
# NodePorts on the loopback and the node's own address, nothing else
nodePortAddresses: ["127.0.0.0/8", "$4/32"]
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
oomScoreAdj: 0
# the conntrack sysctls are the machine's, shared by every node: left alone
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: true, masqueradeAll: false}
YAML
}

# front_proxy_pki DIR: the aggregation layer's client CA and the API
# server's client certificate for it, with which it proxies to
# metrics-server; made once in DIR, beside the cluster's own PKI
front_proxy_pki() {
  local d=$1
  [ -f "$d/front-proxy-client.crt" ] && return 0
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=orchbench-front-proxy-ca" \
    -keyout "$d/front-proxy-ca.key" -out "$d/front-proxy-ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=front-proxy-client" \
    -keyout "$d/front-proxy-client.key" -out "$d/front-proxy-client.csr" 2>/dev/null
  printf 'extendedKeyUsage=clientAuth\n' >"$d/front-proxy-client.ext"
  openssl x509 -req -in "$d/front-proxy-client.csr" -CA "$d/front-proxy-ca.crt" -CAkey "$d/front-proxy-ca.key" -CAcreateserial \
    -days 3650 -extfile "$d/front-proxy-client.ext" -out "$d/front-proxy-client.crt" 2>/dev/null
  chmod 600 "$d"/front-proxy-*.key
}

# aggregator_flags PKI_DIR: the API server's flags for the aggregation
# layer, one a line, with front_proxy_pki's files at PKI_DIR (where the API server
# reads them); straight to the endpoint, as there is no pod network to a
# Service of metrics-server
aggregator_flags() {
  local p=$1
  printf '%s\n' "--requestheader-client-ca-file=$p/front-proxy-ca.crt" --requestheader-allowed-names=front-proxy-client \
    --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
    --requestheader-extra-headers-prefix=X-Remote-Extra- "--proxy-client-cert-file=$p/front-proxy-client.crt" \
    "--proxy-client-key-file=$p/front-proxy-client.key" --enable-aggregator-routing=true
}
