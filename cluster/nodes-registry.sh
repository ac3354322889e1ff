# shellcheck shell=bash
# nodes.sh sets the topology (nodes, roles, addrs), the names (label,
# cluster_name) and client_addr before it sources this file.
# shellcheck disable=SC2154
# The image registry on the client node (docs/cluster.md, "Images"): the
# distribution project's registry (cluster/tools.sh registry), its blobs on
# a volume of its own, served in plain HTTP at <client>:5000 on the nodes'
# network, which every node's dockerd trusts (--insecure-registry). The
# host's dockerd trusts only 127.0.0.0/8 for plain HTTP, so the client
# node also publishes the port on a loopback port of the host: images are
# pushed there, and the nodes pull the same repositories at <client>:5000.

registry_port=5000

# registry_config: served on every address of the client node (its nodes'
# network address and the published port's), blobs on the volume.
registry_config() {
  cat <<YML
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: /var/lib/registry
  delete:
    enabled: true
http:
  addr: :$registry_port
health:
  storagedriver:
    enabled: true
    interval: 10s
    threshold: 3
YML
}

registry_ready() { docker exec "$1" curl -sf "http://$client_addr:$registry_port/v2/" >/dev/null 2>&1; }

start_registry() {
  local node=$1
  registry_config | write_in "$node" /etc/obn/registry.yml
  start_in "$node" registry "/opt/obn/bin/registry serve /etc/obn/registry.yml"
  wait_for 30 "registry on $node at $client_addr:$registry_port" registry_ready "$node" \
    || die "step 'registry' on $node failed: $(docker exec "$node" tail -n 5 /var/log/obn/registry.log)"
}

# registry_host_port: the host's loopback address the client node publishes
# its registry on (the host's dockerd pushes there)
registry_host_port() {
  local client="$cluster_name-client" hp
  hp=$(docker port "$client" "$registry_port/tcp" 2>/dev/null | grep -m1 '^127\.') \
    || die "$client publishes no registry port: is the cluster up (just nodes-up)?"
  echo "$hp"
}

# push_images IMAGE...: every image tagged at the registry's loopback port
# and pushed by the host's dockerd; a worker then pulls it as
# <client>:5000/IMAGE. The loopback tag is removed again: it names a port
# that changes with every cluster.
push_images() {
  [ $# -gt 0 ] || die "usage: nodes.sh push-images IMAGE..."
  local img hp t0
  for img in "$@"; do docker image inspect "$img" >/dev/null 2>&1 || die "image $img is not in the project's dockerd (just images ...)"; done
  hp=$(registry_host_port)
  for img in "$@"; do
    t0=$(date +%s.%N)
    docker tag "$img" "$hp/$img"
    docker push -q "$hp/$img" >/dev/null || { docker rmi "$hp/$img" >/dev/null 2>&1; die "docker push $hp/$img (the registry on $cluster_name-client) failed"; }
    docker rmi "$hp/$img" >/dev/null
    say "pushed $img: pull it as $client_addr:$registry_port/$img ($(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s)"
  done
}

# prepull_images IMAGE...: every node that runs tasks (workers and the
# client) pulls the images from the registry now, into its dockerd (Nomad's
# and Swarm's tasks) and, where it runs Kubernetes, into its containerd.
# Otherwise the first instance of an image on a node waits for the pull
# (8.7-17.9 s to running instead of 1.3-2.9 s, docs/autoscaling.md), and
# as Nomad and Swarm share a node's dockerd, whichever orchestrator a
# sweep runs first pays for the others: the comparison would not be equal.
prepull_images() {
  local targets=() node img ref digest r k8s pids=() failed=0 t0 i
  while read -r node; do [ -n "$node" ] && targets+=("$node"); done < <(task_nodes)
  t0=$(date +%s.%N)
  for node in "${targets[@]}"; do
    (
      k8s=no
      docker exec "$node" test -S "$k8s_run/containerd.sock" && k8s=yes
      for img in "$@"; do
        ref="$client_addr:$registry_port/$img"
        docker exec "$node" docker pull -q "$ref" >/dev/null 2>&1 || { echo "$node: docker pull $ref failed" >&2; exit 1; }
        if [ $k8s = yes ]; then
          # by its digest too, as the kubelet pulls: the pods then report
          # the repository digest, which the Docker nodes' probes report
          # for the same image (a parity table compares them)
          digest=$(docker exec "$node" docker image inspect -f '{{index .RepoDigests 0}}' "$ref" 2>/dev/null) \
            || { echo "$node: no repository digest for $ref" >&2; exit 1; }
          for r in "$ref" "$digest"; do
            docker exec "$node" ctr -a "$k8s_run/containerd.sock" -n k8s.io images pull --plain-http "$r" >/dev/null 2>&1 \
              || { echo "$node: ctr pull $r into Kubernetes' containerd failed" >&2; exit 1; }
          done
        fi
      done
    ) &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed=1; done
  [ $failed = 0 ] || die "pre-pulling $* on the nodes failed (above); the images are in the registry, and the nodes would pull them when a task starts"
  say "pre-pulled on ${#targets[@]} nodes ($(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s): no task waits for a pull"
}
