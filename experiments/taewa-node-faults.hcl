# Taewa on the emulated cluster with HA on (3 servers): a worker killed, a
# worker cut off for 15 s, the Nomad leader's node killed, and the Consul
# agent of a worker restarted, each 5 s into a 60 s step at a fixed rate.
# Each step records the node hit, the load's errors before/during/after,
# the time until every instance runs healthy again on the nodes still up,
# and, for kill-leader, whether a job submitted after the kill is placed
# (docs/faults.md). Bring the shape up first, and name it:
#   NODES_NAME=obn just nodes-up nodes=4 servers=3 node_memory=1g
#   NODES_NAME=obn just nodes-images orchbench/taewa:local orchbench/pause:local orchbench/orchbench:local
#   NODES_NAME=obn NOMAD_ADDR=http://10.77.0.10:4646 CONSUL_HTTP_ADDR=http://10.77.0.10:8500 orchbench sweep -f experiments/taewa-node-faults.hcl
# With ha = "off" the same steps need `just nodes-up nodes=3 servers=1`.
sweep "taewa-node-faults" {
  description = "Taewa x2 under node faults, HA on"
  seed        = 24
  repetitions = 1
  deploy      = "per-configuration"
  warmup      = "3s"
  duration    = "60s"
  cooldown    = "5s"
  early_stop  = false
  orchestrators = ["nomad"]
  ha          = "on"

  app "kill-node" {
    pack     = "taewa"
    variants = ["horizontal"]
    vars     = { resource_scale = 0.1 }
    rates    = [20]
    fault {
      kind  = "kill-node"
      after = "5s"
    }
  }

  app "partition-node" {
    pack     = "taewa"
    variants = ["horizontal"]
    vars     = { resource_scale = 0.1 }
    rates    = [20]
    fault {
      kind     = "partition-node"
      duration = "15s"
      after    = "5s"
    }
  }

  app "kill-leader" {
    pack     = "taewa"
    variants = ["horizontal"]
    vars     = { resource_scale = 0.1 }
    rates    = [20]
    fault {
      kind  = "kill-leader"
      after = "5s"
    }
  }

  app "restart-consul" {
    pack     = "taewa"
    variants = ["horizontal"]
    vars     = { resource_scale = 0.1 }
    rates    = [20]
    fault {
      kind  = "restart-agent"
      agent = "consul"
      after = "5s"
    }
  }

  slo {
    p99_ms             = 1000
    min_achieved_ratio = 0.5
    max_error_ratio    = 0.5
  }
}
