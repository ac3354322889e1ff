# Node faults through a whole sweep, cheaply: Taewa with 2 instances on 2
# of 3 workers (horizontal, placement spread), a steady step, then a worker
# killed, the leader's node killed and a worker cut off for 15 s, each 5 s
# into a 60 s step at 10 requests/s, on Nomad, Swarm and Kubernetes. Every
# step ends with a verdict; each fault step records the node hit, recovery,
# the load's errors before, during and after it, and the node is back
# before the next step. It runs on either shape (no ha); `nodes.sh env`
# points Nomad and Consul at the client node's agents, so that a killed
# server never cuts the harness off, and Kubernetes at the API balancer on
# the client node (docs/faults.md):
#
#   export NODES_NAME=obn
#   just nodes-up nodes=4 servers=3 node_cpus=0.4 k8s=1 k8s_grace=20 k8s_eviction=5
#   just nodes-images orchbench/taewa:local orchbench/pause:local orchbench/orchbench:local
#   eval "$(cluster/nodes.sh env)"
#   orchbench sweep -f experiments/taewa-node-faults.hcl
#
# Kubernetes moves a lost node's pods after its controller manager's grace
# (k8s_grace) and the pods' toleration of the not-ready and unreachable
# taints (k8s_eviction): at Kubernetes' own 50 s and 300 s a killed
# worker's pods would move long after the step; 20 s and 5 s let them move
# within it, but only just: grace, eviction, a new pod pulled and ready took
# more than the 35 s a 40 s step leaves after the fault, so the steps last
# 60 s. Each fault step records both as the cluster runs them
# (failure_detection).
# Eight connections, so that a lost instance holds some: through
# Kubernetes' Service each connection picks one of the 2 pods at random,
# and with 4 all landed on the surviving one once (no error while a worker
# was dead); with 8 that happens 1 time in 128.
# The generator runs on the client node, whose 0.4-core CFS quota stalls it
# for up to 60 ms of each 100 ms period once spent, and on this shared
# 2-core machine for longer (a p99 send lag of 366 ms was seen with three
# clusters up): max_generator_lag allows it, a latency measurement it
# spoils, but not the seconds of a recovery or the count of errors.
sweep "taewa-node-faults" {
  description   = "Taewa x2 across workers under node faults: kill-node, kill-leader, partition-node"
  seed          = 24
  repetitions   = 1
  deploy        = "per-configuration"
  warmup        = "3s"
  duration      = "60s"
  cooldown      = "3s"
  early_stop    = false
  orchestrators = ["nomad", "swarm", "kubernetes"]

  # every app below: Taewa x2 spread over the workers at 10 rps
  app_defaults {
    pack              = "taewa"
    variants          = ["horizontal"]
    vars              = { resource_scale = 0.05, difficulty = 20000, placement = "spread" }
    rates             = [10]
    threads           = 1
    connections       = 8
    shipping          = "off"
    max_generator_lag = "1s"
  }

  app "steady" {}

  app "kill-node" {
    fault {
      kind  = "kill-node"
      after = "5s"
    }
  }

  app "kill-leader" {
    fault {
      kind     = "kill-leader"
      duration = "20s"
      after    = "5s"
    }
  }

  app "partition-node" {
    fault {
      kind     = "partition-node"
      duration = "15s"
      after    = "5s"
    }
  }

  slo {
    p99_ms             = 2000
    min_achieved_ratio = 0.5
    max_error_ratio    = 0.5
  }
}
