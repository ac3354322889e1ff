# shellcheck shell=bash
# shellcheck disable=SC2154
# metrics-server across the emulated nodes (sourced by nodes.sh after
# nodes-k8s.sh): the pods' CPU the HorizontalPodAutoscaler scales on. It
# runs as a process on the client node, like the balancer, and the API
# servers reach it through the aggregation layer straight at its address
# (cluster/kubernetes/metrics-server.yaml), as on the single-node cluster;
# the front-proxy certificates are made with the cluster's PKI.

k8s_metrics_dir=/var/lib/obn-metrics-server

# k8s_front_proxy: the aggregation layer's CA and client certificate, made
# on the host beside the cluster's PKI (k8s_pki)
k8s_front_proxy() { front_proxy_pki "$(k8s_state)/pki"; }

# k8s_front_proxy_copy NODE: a server's copy of them, where its API server's
# flags (k8s_aggregator_flags) read them
k8s_front_proxy_copy() {
  local f; for f in front-proxy-ca.crt front-proxy-client.crt front-proxy-client.key; do
    docker cp -q "$(k8s_state)/pki/$f" "$1:$k8s_etc/pki/$f"
  done
}

k8s_aggregator_flags() { aggregator_flags "$k8s_etc/pki" | paste -sd' '; }

k8s_metrics_mounts() { printf '%s\n' -v "$bin/metrics-server:$k8s_tools/metrics-server:ro"; }

k8s_metrics_ready() { kubectl_in "${nodes[0]}" get --raw /apis/metrics.k8s.io/v1beta1/nodes >/dev/null 2>&1; }

# k8s_metrics_server: metrics-server on the client node, its APIService, and
# a wait until it reports every node
k8s_metrics_server() {
  local client=$cluster_name-client kc=$k8s_etc/admin-client.kubeconfig
  k8s_agent "$client" metrics-server "$k8s_tools/metrics-server --kubeconfig=$kc \
--authentication-kubeconfig=$kc --authorization-kubeconfig=$kc --bind-address=$client_addr --secure-port=4443 \
--cert-dir=$k8s_metrics_dir --kubelet-insecure-tls --kubelet-preferred-address-types=InternalIP \
--metric-resolution=10s --kubelet-request-timeout=5s"
  sed "s/\${NODE_IP}/$client_addr/g" "$root/cluster/kubernetes/metrics-server.yaml" | kubectl_in "${nodes[0]}" apply -f - >/dev/null \
    || die "step 'deploy metrics-server' failed"
  wait_for 120 "pod metrics (metrics.k8s.io) from $client" k8s_metrics_ready \
    || die "step 'metrics-server' failed: the metrics API did not answer within 120 s: $(docker exec "$client" tail -n 3 /var/log/obn/metrics-server.log)"
}
