# Issue 24, item 7: the social network with the control plane highly
# available (3 servers: Nomad and Consul raft peers, Swarm managers) and
# not (1 server), on 4 workers either way: steady state in the baseline and
# horizontal variants, then a worker killed and the leader's node killed
# under a fixed rate. The report's "Faults and recovery" table compares
# recovery, errors, the scheduling probe after kill-leader and writes lost
# per orchestrator and shape.
#
# Each app block names its shape (ha). A sweep runs the steps of the shape
# that runs and leaves the others for `--resume` on the other shape, so one
# archive and one report hold both (docs/faults.md says why the sweep does
# not re-shape the cluster itself):
#
#   export NODES_NAME=obn
#   just nodes-up nodes=5 servers=3 node_cpus=0.5 node_memory=4096m k8s=1 k8s_grace=20 k8s_eviction=5
#   just nodes-images orchbench/socialnet:local orchbench/ferretdb:local orchbench/redis:local orchbench/memcached:local orchbench/orchbench:local \
#       orchbench/ferretdb:local-ds-u962-p10-s1 orchbench/redis:local-ds-u962-p10-s1 orchbench/memcached:local-ds-u962-p10-s1
#   eval "$(cluster/nodes.sh env)"
#   orchbench sweep -f experiments/ha-social-network.hcl           # the HA-on steps
#   just nodes-down && just nodes-up nodes=5 servers=1 node_cpus=0.5 node_memory=4096m k8s=1 k8s_grace=20 k8s_eviction=5   # and the images again
#   eval "$(cluster/nodes.sh env)"
#   orchbench sweep --resume ha-social-network                     # the HA-off steps, same archive
#
# Sized for a 2-core machine shared with other work: resource_scale 0.03,
# 10 requests/s of the mixed workload.
# The stores are capped at their declared CPU (datastore_cpu_limit): a store
# without a cap is capped by its worker's budget instead, which the limits
# gate refuses (what runs would not be what was declared). FerretDB is
# declared 10 cores before the scale (0.3 cores): at the default 1 (0.03
# cores) it was throttled in every period and the baseline broke at 10
# requests/s (5.5 achieved, p50 18 s), which says nothing about faults. The
# baseline then declares 0.81 cores and the horizontal variant 1.26, which
# 0.5-core workers hold after one is killed only when there are 4 (3 left:
# 1.5 cores; with 3 workers, Kubernetes left 11 of 27 pods pending after a
# kill-node). The dataset comes
# from the snapshot images, so the capped stores never load it through the
# API (which would take an hour at this scale).
# The generator on the 0.5-core client node is allowed a send lag of 1 s
# (max_generator_lag): a CPU-starved client spoils latency, not the
# recovery times and error counts compared here.
# Horizontal runs two instances of each stateless service, at most one per
# worker (placement spread), so a killed worker leaves one of each running;
# the node killed is the one running an instance of user-timeline (not the
# front end's worker: the front end stays on worker 1, as in study 002, and
# cannot move). The horizontal variant's memory (3 stores at 1 GiB, 24
# services at 256 MiB, 9 GiB) did not fit Nomad's bin packing on three
# 3584m workers (3.3 GiB each after Nomad's reserve: "memory exhausted");
# 4096m workers, 4 of them, hold it with one lost.
# Every socialnet instance takes the replica ID of its generated IDs from
# its host name (machine_id = "hostname"), as DeathStarBench's own services
# do: with the instance index instead, Kubernetes needs StatefulSets, whose
# pods on a lost node are not replaced until the node returns (seen: 6 of
# 27 pods missing 55 s after a kill-node, back only with the node, 88 s),
# while Nomad and Swarm place a lost index elsewhere at once.
#
# Kubernetes runs across the nodes with k8s=1; its node-loss settings
# (k8s_grace, k8s_eviction) are shortened from its own 50 s and 300 s so
# that a killed worker's pods move within the step, and every fault record
# shows them (failure_detection); its kill-leader kills the etcd leader's
# server.
sweep "ha-social-network" {
  description   = "Social network, HA on and off: steady state, kill-node and kill-leader under load, Nomad, Swarm and Kubernetes (issue 24)"
  seed          = 24
  repetitions   = 3
  deploy        = "per-configuration"
  warmup        = "3s"
  duration      = "60s"
  cooldown      = "5s"
  early_stop    = false
  orchestrators = ["nomad", "swarm", "kubernetes"]

  # every app below: the social network spread over the workers, mixed
  # workload at 10 rps; the steady apps add the baseline variant
  app_defaults {
    pack              = "social-network"
    variants          = ["horizontal"]
    vars = {
      resource_scale      = 0.03
      placement           = "spread"
      datastore_cpu_limit = true
      resources           = { ferretdb = { cores = 10, memory_mib = 1024 } }
      machine_id          = "hostname"
    }
    rates             = [10]
    threads           = 2
    connections       = 8
    workload          = "social-network:mixed@962"
    shipping          = "off"
    max_generator_lag = "1s"
  }

  app "on-steady" {
    ha       = "on"
    variants = ["baseline", "horizontal"]
  }

  app "on-kill-node" {
    ha       = "on"
    fault {
      kind    = "kill-node"
      service = "social-network-horizontal-user-timeline"
      after   = "5s"
    }
  }

  app "on-kill-leader" {
    ha       = "on"
    fault {
      kind     = "kill-leader"
      duration = "25s"
      after    = "5s"
    }
  }

  app "off-steady" {
    ha       = "off"
    variants = ["baseline", "horizontal"]
  }

  app "off-kill-node" {
    ha       = "off"
    fault {
      kind    = "kill-node"
      service = "social-network-horizontal-user-timeline"
      after   = "5s"
    }
  }

  # With one server the killed leader must come back within the step
  # (duration), or nothing is scheduled until the step ends.
  app "off-kill-leader" {
    ha       = "off"
    fault {
      kind     = "kill-leader"
      duration = "25s"
      after    = "5s"
    }
  }

  # Errors while a worker is lost are what is measured: the SLO only marks
  # a step broken; it is the fault table that compares them.
  slo {
    p99_ms             = 2000
    min_achieved_ratio = 0.5
    max_error_ratio    = 0.5
  }
}
