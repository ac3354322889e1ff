# The HA comparison of experiments/ha-social-network.hcl with Taewa, which
# costs a fraction of it: 2 instances on 2 of 3 workers (horizontal,
# placement spread), steady state, a worker killed, the leader's node
# killed (back after 20 s), on Nomad, Swarm and Kubernetes, with the
# control plane at 3 servers (ha = "on") and at 1 (ha = "off"). One spec,
# both shapes: run it on one shape, re-shape, and --resume (docs/faults.md):
#
#   export NODES_NAME=obn
#   just nodes-up nodes=4 servers=3 node_cpus=0.4 k8s=1 k8s_grace=20 k8s_eviction=5
#   just nodes-images orchbench/taewa:local orchbench/pause:local orchbench/orchbench:local
#   eval "$(cluster/nodes.sh env)"
#   orchbench sweep -f experiments/ha-taewa.hcl
#   just nodes-down && just nodes-up nodes=4 servers=1 node_cpus=0.4 k8s=1 k8s_grace=20 k8s_eviction=5   # and the images again
#   eval "$(cluster/nodes.sh env)"
#   orchbench sweep --resume ha-taewa
#
# Kubernetes' node-loss settings (k8s_grace, k8s_eviction) are shortened
# from its own 50 s and 300 s so that a killed worker's pods move within
# the step, as in experiments/taewa-node-faults.hcl; the records show them.
# The generator on the 0.4-core client node is allowed a send lag of 1 s:
# a CPU-starved client spoils latency, not the recovery times and error
# counts compared here.
sweep "ha-taewa" {
  description   = "Taewa x2, HA on and off: steady state, kill-node and kill-leader under load, Nomad, Swarm and Kubernetes"
  seed          = 24
  repetitions   = 3
  deploy        = "per-configuration"
  warmup        = "3s"
  duration      = "40s"
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
    connections       = 4
    shipping          = "off"
    max_generator_lag = "1s"
  }

  app "on-steady" {
    ha       = "on"
  }

  app "on-kill-node" {
    ha       = "on"
    fault {
      kind  = "kill-node"
      after = "5s"
    }
  }

  app "on-kill-leader" {
    ha       = "on"
    fault {
      kind     = "kill-leader"
      duration = "20s"
      after    = "5s"
    }
  }

  app "off-steady" {
    ha       = "off"
  }

  app "off-kill-node" {
    ha       = "off"
    fault {
      kind  = "kill-node"
      after = "5s"
    }
  }

  app "off-kill-leader" {
    ha       = "off"
    fault {
      kind     = "kill-leader"
      duration = "20s"
      after    = "5s"
    }
  }

  slo {
    p99_ms             = 2000
    min_achieved_ratio = 0.5
    max_error_ratio    = 0.5
  }
}
