# orchbench: a Nomad/Consul-native benchmark testbed for microservices.
# `./justw --list` (or `just --list`) is the manual; every recipe says what it does.

set shell := ["bash", "-euo", "pipefail", "-c"]
set positional-arguments

export GOSUMDB := "off"
export GOFLAGS := "-mod=mod"
export GOTOOLCHAIN := "local"
# the machine's Go module proxy (GOPROXY, else `go env GOPROXY`), never direct
export GOPROXY := `cluster/registries.sh goproxy`
# the embedded cluster's addresses unless the user points elsewhere (a
# remote cluster's exports, `eval "$(just remote-env FILE)"`)
export NOMAD_ADDR := env("NOMAD_ADDR", "http://127.0.0.1:4646")
export CONSUL_HTTP_ADDR := env("CONSUL_HTTP_ADDR", "http://127.0.0.1:8500")
export PATH := justfile_directory() + "/.tools/bin:" + env("PATH")

# List the recipes (this manual)
default:
    @{{just_executable()}} --justfile {{justfile()}} --list --unsorted

# The main job on a fresh machine: tools, cluster, images, the demo sweep, the report
demo: tools cluster-up images sweep

# Run the demo sweep (experiments/demo.hcl, Taewa baseline vs vertical) and print where the report and dashboards are
sweep spec="experiments/demo.hcl" *args: build
    .tools/bin/orchbench sweep -f {{spec}} "${@:2}"

# Continue a sweep that was interrupted, without repeating or losing a step
resume sweep_id: build
    .tools/bin/orchbench sweep --resume {{sweep_id}}

# Push an archived sweep to VictoriaMetrics again (idempotent)
results-push sweep_id: build
    .tools/bin/orchbench results push {{sweep_id}}

# Write the HTML report with plots for a sweep into reports/<sweep>/
report sweep_id: build
    .tools/bin/orchbench report {{sweep_id}}

# Run the wrk2-compatible load generator, e.g. `just load -t2 -c16 -d10s -R500 -L http://127.0.0.1:8080/`
load *args: build
    .tools/bin/orchbench load "$@"

# Benchmark the load generator against Debian's wrk on a loopback server and print the ratios
bench-loadgen *args: build
    go run ./harness/cmd/bench-loadgen --orchbench .tools/bin/orchbench "$@"

# CPU per request in rounds: closed loop against wrk, open loop against a reference build, e.g. `just bench-loadgen-cpu -reference /tmp/orchbench-before -syscalls`
bench-loadgen-cpu *args: build
    go run ./harness/cmd/bench-loadgen cpu --orchbench .tools/bin/orchbench "$@"

# Measure where a social-network request spends CPU: each workload at saturation on the unlimited variant (needs `just cluster-up images`), then the per-task table
bench-social *args: build
    .tools/bin/orchbench sweep -f experiments/social-network-cpu.hcl "$@"
    .tools/bin/orchbench results cpu social-network-cpu

# Where a social network request's CPU goes, without a cluster: the stores and services on loopback, each workload closed-loop, CPU per request per process (`--backend postgresql --postgres-bin DIR` for FerretDB on PostgreSQL)
bench-social-local *args: build
    go build -o .tools/bin/ferretdb ./deathstarbench/cmd/ferretdb && go build -o .tools/bin/socialnet ./deathstarbench/cmd/socialnet
    go run ./deathstarbench/cmd/socialbench --orchbench .tools/bin/orchbench --ferretdb .tools/bin/ferretdb --socialnet .tools/bin/socialnet "$@"

# Install the pinned tools (Debian packages, Nomad, Consul, levant, hashi-up, VictoriaMetrics) into .tools/bin, and study 000's vendored npm/PyPI packages for the exec driver
tools *targets:
    cluster/tools.sh "$@"

# Build the orchbench CLI into .tools/bin/orchbench
build:
    mkdir -p .tools/bin && go build -o .tools/bin/orchbench ./harness/cmd/orchbench

# Bring the embedded single-machine cluster up (Consul, Nomad, dockerd, VictoriaMetrics, VictoriaLogs, the node agent, the node probe; Kubernetes too with ORCHBENCH_K8S=1); when it is up, redeploys only what is missing. `cluster-up nodes=4 servers=3` brings up the emulated multi-node cluster instead (see nodes-up)
cluster-up *shape: tools build
    if [ $# -gt 0 ]; then cluster/nodes.sh up "$@"; else cluster/embedded.sh up; fi
    if [ $# -eq 0 ] && [ "${ORCHBENCH_K8S:-0}" = 1 ]; then cluster/tools.sh kubernetes coredns && cluster/images.sh pause orchbench && cluster/kubernetes.sh up; fi

# Render the infrastructure job templates (jobs/*.nomad.tpl, variables in jobs/cluster.vars.yml) into .state/jobs/ with levant; `nomad job run` takes the rendered files
jobs *names:
    cluster/jobs.sh render {{names}}

# Show what runs: the emulated nodes of NODES_NAME when up (as nodes-status: every node's role, address, agents and leaders; fails when one is missing), and the embedded cluster's agents, node, members, jobs, VictoriaMetrics, VictoriaLogs, node agent and web UIs when it runs or nothing else does
cluster-status:
    @if [ "$NOMAD_ADDR" != http://127.0.0.1:4646 ]; then cluster/remote-status.sh; exit; fi; \
      if cluster/nodes.sh present; then cluster/nodes.sh status; fi; \
      if ! cluster/nodes.sh present || cluster/embedded.sh running; then cluster/embedded.sh status; fi

# Stop everything the cluster recipes started: the emulated nodes of NODES_NAME when up (as nodes-down), Kubernetes when up, and every job, agent and daemon of the embedded cluster; --purge also removes .state/
cluster-down *flags:
    if cluster/nodes.sh present; then cluster/nodes.sh down; fi
    cluster/kubernetes.sh down
    cluster/embedded.sh down "$@"

# Bring up the emulated multi-node cluster beside the embedded one: `servers` (1 or 3) Nomad/Consul servers and drained Swarm managers, nodes-1 workers and a client node with the image registry, each a container with its own address on 10.77.0.0/24, dockerd, agents and budget, VictoriaMetrics and the Nomad Autoscaler on the client node (docs/cluster.md), e.g. `just nodes-up nodes=6 servers=3 node_cpus=0.25 link_delay=0.1ms`; `k8s=1` runs Kubernetes across them too (etcd and API servers on the servers, a kubelet on the workers and the client, metrics-server on the client)
nodes-up *shape:
    cluster/nodes.sh up "$@"

# List every emulated node with its role, address, Nomad/Consul server or client state and leader, and Swarm role; fails when one is missing
nodes-status:
    cluster/nodes.sh status

# Push images from the project's dockerd to the registry on the emulated client node, where every node pulls them as <client>:5000/IMAGE (`cluster/nodes.sh load-images IMAGE...` still copies them in without it), e.g. `just nodes-images orchbench/taewa:local`
nodes-images +images:
    cluster/nodes.sh push-images "$@"

# Start emulated nodes a node fault left stopped (an interrupted sweep's), with their agents, as the fault's end would, e.g. `just nodes-revive obn-worker2`
nodes-revive +nodes:
    cluster/nodes.sh revive "$@"

# Remove every emulated node, its volume, the obn-nodes network and the nodes' cgroups; safe to repeat
nodes-down:
    cluster/nodes.sh down

# The emulated multi-node cluster end to end: up 4 3, leaders, a job spread over the workers, a task's cgroup under its node's, the Nomad leader's node killed, down; then the registry, placement (spread, packed) on Nomad and Swarm, the load job on the client node, budgets and link delay (TestNodesPlacement); the Swarm adapter from the host with DOCKER_HOST at a manager (TestNodesSwarmAdapter); a sweep run from the client node judged through the workers' node probes, and made invalid by a mis-wired resolver and by silent probes; every validity row on the nodes (TestNodesEveryGateCanFail); a whole sweep with node faults on Nomad, Swarm and Kubernetes from the host (TestNodesSweepNodeFaults, experiments/taewa-node-faults.hcl, on nodes=4 servers=3 k8s=1); Kubernetes across the nodes (TestNodesKubernetes: up 4 3 k8s=1, Taewa spread over the workers from the client node, limits through the DaemonSet's probes, a worker killed and its pod rescheduled); then the node faults on both shapes (test-node-faults 1 and 3); two hours or more; needs `just images taewa orchbench pause fortio jmeter artillery` and the CoreDNS image `just k8s-up` makes
test-nodes:
    go test -tags multinode -count=1 -timeout 180m -v -run TestNodes ./test/cluster/
    {{just_executable()}} --justfile {{justfile()}} test-node-faults 1
    {{just_executable()}} --justfile {{justfile()}} test-node-faults 3

# Node faults (kill-node, partition-node, kill-leader, restart-agent) injected into Taewa on Nomad under a load from the client node, on an emulated cluster of `servers` servers (1: HA off, 2 workers; 3: HA on, 3 workers) brought up for it and removed after; NODES_NAME and NODES_SUBNET choose the cluster as for nodes-up (minutes; docs/faults.md)
test-node-faults servers="1":
    #!/usr/bin/env bash
    set -euo pipefail
    export NODES_NAME=${NODES_NAME:-obn}
    nodes=3; [ "{{servers}}" = 3 ] && nodes=4
    trap 'cluster/nodes.sh down' EXIT
    cluster/nodes.sh up nodes=$nodes servers={{servers}} node_memory=1g
    cluster/nodes.sh load-images orchbench/taewa:local orchbench/pause:local orchbench/orchbench:local
    go test -tags multinode -count=1 -timeout 30m -v -run TestNodeFaults ./harness/sweep/

# Build Kubernetes (control plane, kubelet, kube-proxy, kubectl), CoreDNS and metrics-server at their pinned versions into .tools/bin
tools-kubernetes:
    cluster/tools.sh kubernetes coredns metrics-server

# Check that the Nomad agent at ADDR serves its web UI and that headless Chromium renders the jobs page (JOB...: names the list must show)
nomad-ui-check addr="http://127.0.0.1:4646" *jobs:
    cluster/nomad-ui-check.sh "$@"

# Bring up the embedded single-node Kubernetes in its own network namespace (needs dockerd and the images); a no-op when it is up
k8s-up: tools-kubernetes
    cluster/dockerd.sh up
    cluster/images.sh pause orchbench
    cluster/kubernetes.sh up

# Show the Kubernetes processes, node and pods
k8s-status:
    cluster/kubernetes.sh status

# Stop Kubernetes and remove everything it added to the host (namespace, mounts, sysctls, pods)
k8s-down:
    cluster/kubernetes.sh down

# Import the images built since k8s-up into the cluster's containerd
k8s-images:
    cluster/kubernetes.sh images

# The pinned kubectl against the embedded cluster, inside its network namespace, e.g. `just kubectl get pods -A`
kubectl *args:
    nsenter --net=/run/netns/orchbench-k8s -- .tools/bin/kubectl --kubeconfig .state/kubernetes/admin.kubeconfig "$@"

# Build the container images locally (base taewa orchbench by default; riwai raupi apache for study 000; voting for study 001; frontier for study 003; books for study 004; fortio locust jmeter artillery as load tools; dsb for DeathStarBench)
images *targets:
    cluster/images.sh "$@"

# Make the social network's dataset snapshot and its FerretDB, Redis and memcached images (minutes once, then from ~/.cache/orchbench/snapshots in seconds), e.g. `just dsb-snapshot --users 962 --image-tag local`
dsb-snapshot *args: build
    .tools/bin/orchbench dsb social-network restore "$@"

# Render a pack, e.g. `just render taewa --var variant=vertical`
render pack *args: build
    .tools/bin/orchbench pack render "$@"

# Deploy a pack on the cluster, e.g. `just run taewa --var variant=vertical --var resource_scale=0.25`
run pack *args: build
    .tools/bin/orchbench pack run "$@"

# Stop and purge a deployed pack's job
destroy pack *args: build
    .tools/bin/orchbench pack destroy "$@"

# The pinned nomad CLI against the embedded cluster, e.g. `just nomad node status`
nomad *args:
    .tools/bin/nomad "$@"

# The pinned consul CLI against the embedded cluster, e.g. `just consul members`
consul *args:
    .tools/bin/consul "$@"

# Check packs against the conventions the harness relies on (every pack under packs/ when none is named)
pack-check *packs: build
    .tools/bin/orchbench pack check --nomad .tools/bin/nomad {{packs}}

# All tests: unit tests, then the integration tests on a real embedded cluster, then one multi-node test (test-nodes-ci) and the remote cluster on emulated hosts (test-remote); a test missing what it needs fails here, never skips
test: tools test-unit test-integration test-nodes-ci test-remote

# The multi-node test of CI (TestNodesKillNodeSweep; test-nodes runs it too): an emulated nodes=3 servers=1 brought up, Taewa pushed through the client node's registry, one sweep step with a worker killed under load (its record: recovery, errors during the fault; the next step valid), down leaving nothing; about 3.5 minutes; needs the images test-integration builds (its cluster is obci on 10.85.0.0/24 unless NODES_NAME and NODES_SUBNET say otherwise)
test-nodes-ci:
    #!/usr/bin/env bash
    # the integration tests stop the project's dockerd when they end and
    # the nodes run on it: start it if none answers, and stop only that one
    # (a running embedded cluster keeps its own)
    set -euo pipefail
    # a cluster of its own name and subnet, so that a user's nodes (obn,
    # 10.77.0.0/24) running beside it are neither refused nor removed
    export NODES_NAME=${NODES_NAME:-obci} NODES_SUBNET=${NODES_SUBNET:-10.85.0.0/24}
    started=no
    if ! docker info >/dev/null 2>&1; then cluster/dockerd.sh up; started=yes; fi
    trap 'cluster/nodes.sh down >/dev/null 2>&1 || true; if [ $started = yes ]; then cluster/dockerd.sh down; fi' EXIT
    ORCHBENCH_TEST_STRICT=1 go test -tags multinode -count=1 -timeout 20m -v -run '^TestNodesKillNodeSweep$' ./test/cluster/

# Your own hosts (`just remote-up lab.hcl`, or `inventory=lab.hcl`): install the pinned Consul and Nomad with hashi-up over SSH (TLS, gossip encryption, ACLs; secrets kept in .state/remote/ on this machine, 0600), Debian's Docker and a swarm, the registry and the node probes, on the hosts `inventory` names (cluster/inventory.example.hcl; docs/remote.md); every host is checked before any is changed, and a second run changes nothing and says so
remote-up inventory: tools build
    source cluster/versions.env && .tools/bin/orchbench remote up -i "${1#inventory=}" --consul-version "$CONSUL_VERSION" --nomad-version "$NOMAD_VERSION"

# Check every host of `inventory` (SSH address, key, passwordless sudo, systemd, Debian) without changing any
remote-check inventory: build
    .tools/bin/orchbench remote check -i "${1#inventory=}"

# Print the exports that point orchbench, nomad, consul and docker at the remote cluster with the harness's scoped tokens: `eval "$(just remote-env FILE)"`, then `just cluster-status` or `just sweep`
remote-env inventory: build
    @.tools/bin/orchbench remote env -i "${1#inventory=}"

# Push images from this machine's dockerd to the remote cluster's registry (on its client host), e.g. `just remote-images hosts.hcl orchbench/taewa:local orchbench/orchbench:local orchbench/pause:local`
remote-images inventory +images: build
    .tools/bin/orchbench remote images -i "${1#inventory=}" "${@:2}"

# Remove from every host of `inventory` what remote-up installed (agents, Docker when it installed it, the swarm, the registry, the probe), then this machine's secrets of it
remote-down inventory: build
    .tools/bin/orchbench remote down -i "${1#inventory=}"

# Emulated hosts to try remote-up on: `hosts` containers of plain Debian with systemd and sshd (servers, workers and a client; default 5 3) on 10.88.0.0/24, a key pair and an inventory in .state/hosts/obh/ (`cluster/hosts.sh inventory` prints its path)
hosts-up *shape:
    cluster/hosts.sh up "$@"

# Remove the emulated hosts, their volumes, network, cgroups and key pair
hosts-down:
    cluster/hosts.sh down

# The remote cluster end to end on emulated hosts (TestRemote*): hosts up, remote-up, a second run that changes nothing, anonymous requests refused, a short sweep on Nomad and Swarm with every gate, remote-down, hosts down; and a wrong key on one host that stops remote-up before any host changes; about 4 minutes (builds the images it needs when missing)
test-remote: build
    #!/usr/bin/env bash
    set -euo pipefail
    export HOSTS_NAME=${HOSTS_NAME:-obhci} HOSTS_SUBNET=${HOSTS_SUBNET:-10.87.0.0/24}
    started=no
    if ! docker info >/dev/null 2>&1; then cluster/dockerd.sh up; started=yes; fi
    trap 'cluster/hosts.sh down >/dev/null 2>&1 || true; if [ $started = yes ]; then cluster/dockerd.sh down; fi' EXIT
    cluster/images.sh host taewa orchbench pause
    ORCHBENCH_TEST_STRICT=1 go test -tags remote -count=1 -timeout 30m -v ./test/remote/

# Go, Node and Python unit tests (no cluster; needs `just tools` for VictoriaMetrics, redis, memcached and PostgreSQL 15; Riwai's, Frontier's, Raupi's and the voting app's packages come from cluster/vendor.sh)
test-unit:
    test -z "$(gofmt -l harness deathstarbench apps test 2>/dev/null)" || { echo "gofmt needed:"; gofmt -l harness deathstarbench apps test; exit 1; }
    go vet ./...
    go vet -tags integration,e2e,multinode,remote ./test/... ./deathstarbench/...
    ORCHBENCH_TEST_STRICT=1 go test ./...
    {{just_executable()}} --justfile {{justfile()}} fuzz
    node --test apps/taewa
    NODE_PATH="$(cluster/vendor.sh dir riwai)/node_modules" node --test apps/riwai
    PYTHONPATH="$(cluster/vendor.sh dir raupi)/site" PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -m unittest discover -s apps/raupi
    cd apps/voting && PYTHONPATH="$(../../cluster/vendor.sh dir voting)/site" PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -m unittest test_voting
    node --test apps/books-node
    NODE_PATH="$(cluster/vendor.sh dir frontier)/node_modules" PYTHON=/usr/bin/python3 node --test apps/frontier
    PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -m unittest discover -s apps/frontier/service
    cd cluster/otelcol/nomadattrs && test -z "$(gofmt -l .)" && go vet ./... && go test ./...
    cluster/jobs.sh render && nomad fmt -check .state/jobs/*.nomad.hcl && for f in .state/jobs/*.nomad.hcl; do nomad job validate "$f" >/dev/null 2>&1 || { nomad job validate "$f"; exit 1; }; done

# Fuzz every parser for `time` each (5 s in test-unit) past the seed corpora that `go test` replays; `just fuzz 60s` hunts longer, and a failing input lands in the package's testdata/fuzz/ to be fixed and committed
fuzz time="5s":
    cluster/fuzz.sh {{time}}

# Integration tests: bring up the embedded cluster, deploy, verify, measure, bring it down
test-integration: tools tools-kubernetes build
    cluster/images.sh pause base taewa riwai raupi apache frontier orchbench dsb fortio locust jmeter artillery books voting
    ORCHBENCH_TEST_STRICT=1 go test -tags e2e -count=1 -timeout 10m ./deathstarbench/socialnetwork/e2e/
    ORCHBENCH_TEST_STRICT=1 go test -tags e2e -count=1 -timeout 10m ./deathstarbench/hotelreservation/e2e/
    ORCHBENCH_TEST_STRICT=1 go test -tags e2e -count=1 -timeout 10m ./deathstarbench/mediamicroservices/e2e/
    ORCHBENCH_TEST_STRICT=1 go test -tags integration -count=1 -timeout 50m -v ./test/integration/

# gofmt, go vet, and shellcheck at warning level over every shell script
lint:
    test -z "$(gofmt -l harness deathstarbench apps test 2>/dev/null)" || { gofmt -l harness deathstarbench apps test; exit 1; }
    go vet ./...
    command -v shellcheck >/dev/null || { echo "shellcheck is missing: run ./justw tools"; exit 1; }
    git ls-files -z -- '*.sh' justw | xargs -0 shellcheck -S warning
