# shellcheck shell=bash
# shellcheck disable=SC2154
# VictoriaMetrics and the Nomad Autoscaler on the emulated nodes' client node
# (sourced by nodes.sh, which sets nodes/roles/addrs, client_addr, bin, root
# and cluster_name): the same job templates as the embedded cluster's
# (jobs/victoriametrics.nomad.tpl, jobs/nomad-autoscaler.nomad.tpl), given
# the client node's address and pinned to it, as a real cluster's client host
# holds them. VictoriaMetrics scrapes the nodes' probes by Nomad's service
# discovery, so the autoscaler and the harness read every task's CPU where
# it runs; `nodes.sh env` points the harness's ORCHBENCH_VM_URL at it.

# where the programs sit on the client node: run_node mounts them there
# (jobs.sh's `root`, whose .tools/bin and dashboards the templates name)
node_infra_root=/opt/obn/infra

# infra_mounts: the client node's docker run arguments for those programs
infra_mounts() {
  local p
  for p in victoria-metrics nomad-autoscaler; do
    printf '%s\n' -v "$bin/$p:$node_infra_root/.tools/bin/$p:ro"
  done
  printf '%s\n' -v "$root/dashboards:$node_infra_root/dashboards:ro"
}

node_vm_healthy() { curl -sf -m 3 "http://$client_addr:8428/health" >/dev/null; }
node_autoscaler_healthy() { curl -sf -m 3 "http://$client_addr:7072/v1/health" >/dev/null; }

# a node probe's CPU series in VictoriaMetrics: the scrape reaches the nodes
node_vm_scrapes_probes() {
  output_has '"result":\[\{' curl -sf -m 3 "http://$client_addr:8428/api/v1/query" \
    --data-urlencode 'query=up{service="node-probe"} == 1'
}

deploy_node_infra() {
  local p
  for p in victoria-metrics nomad-autoscaler; do
    [ -x "$bin/$p" ] || die "step 'infrastructure' failed: $bin/$p is missing (./justw tools)"
  done
  local state="$root/.state/nodes/$cluster_name"
  mkdir -p "$state/jobs"
  # levant replaces a map it is given again: each block is whole. Their
  # memory is sized to leave the client node's load job its 256 MiB on the
  # smallest nodes (node_memory=1g: 768 MiB for allocations, the node probe
  # 64 of them); a few hundred series need far less than 320 MiB.
  cat >"$state/jobs/nodes.vars.yml" <<YML
# written by cluster/nodes.sh up for the nodes of $cluster_name
infra:
  address: $client_addr
  client_node_only: true
victoriametrics:
  port: 8428
  data_dir: .state/victoriametrics
  scrape_interval: 5s
  retention: 30d
  cpu_mhz: 300
  memory_mib: 320
autoscaler:
  port: 7072
  nomad_address: http://$client_addr:4646
  metrics_address: http://$client_addr:8428
  cpu_mhz: 100
  memory_mib: 64
YML
  NOMAD_ADDR="http://$client_addr:4646" JOBS_VAR_FILE="$state/jobs/nodes.vars.yml" JOBS_ROOT=$node_infra_root \
    JOBS_OUT="$state/jobs" "$root/cluster/jobs.sh" deploy victoriametrics nomad-autoscaler \
    || die "step 'deploy victoriametrics nomad-autoscaler' on the client node failed"
  wait_for 90 "victoriametrics on $client_addr:8428" node_vm_healthy \
    || die "step 'victoriametrics' failed: no answer on $client_addr:8428/health (NOMAD_ADDR=http://$client_addr:4646 nomad job status victoriametrics)"
  wait_for 60 "nomad autoscaler on $client_addr:7072" node_autoscaler_healthy \
    || die "step 'nomad autoscaler' failed: no answer on $client_addr:7072/v1/health (NOMAD_ADDR=http://$client_addr:4646 nomad alloc logs -stderr -job nomad-autoscaler)"
  wait_for 60 "victoriametrics scraping the node probes" node_vm_scrapes_probes \
    || die "step 'victoriametrics scrape' failed: no node probe is scraped (http://$client_addr:8428/targets)"
}
