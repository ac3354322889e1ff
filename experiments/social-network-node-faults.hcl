# The social network on the emulated cluster with HA on (3 servers), its
# ha variant (instances spread over the workers): a worker killed, a
# worker cut off for 15 s, the Nomad leader's node killed, and the Consul
# agent of a worker restarted, each 5 s into a 60 s step at a fixed rate.
# Each step records the node hit, the load's errors before/during/after,
# the time until every instance runs healthy again on the nodes still up,
# and, for kill-leader, whether a job submitted after the kill is placed
# (docs/faults.md). Bring the shape up first, and name it:
#   NODES_NAME=obn just nodes-up nodes=4 servers=3 node_memory=1g
#   NODES_NAME=obn just nodes-images orchbench/socialnet:local orchbench/ferretdb:local orchbench/redis:local orchbench/memcached:local orchbench/pause:local orchbench/orchbench:local
#   NODES_NAME=obn NOMAD_ADDR=http://10.77.0.10:4646 CONSUL_HTTP_ADDR=http://10.77.0.10:8500 orchbench sweep -f experiments/social-network-node-faults.hcl
# (The social network, not Taewa: the Taewa pack uses Nomad's bridge
# networking, and the nodes have no CNI plugins yet; the social network
# uses host networking. The dataset verification after each step shows
# whether writes were lost.)
# With ha = "off" the same steps need `just nodes-up nodes=3 servers=1`.
sweep "social-network-node-faults" {
  description = "Social network (ha variant) under node faults, HA on"
  seed        = 24
  repetitions = 1
  deploy      = "per-configuration"
  warmup      = "3s"
  duration    = "60s"
  cooldown    = "5s"
  early_stop  = false
  orchestrators = ["nomad"]
  ha          = "on"

  # what every app below shares
  app_defaults {
    pack        = "social-network"
    variants    = ["ha"]
    vars        = { resource_scale = 0.03 }
    rates       = [20]
    threads     = 2
    connections = 8
    workload    = "social-network:mixed@962"
  }

  app "kill-node" {
    fault {
      kind  = "kill-node"
      after = "5s"
    }
  }

  app "partition-node" {
    fault {
      kind     = "partition-node"
      duration = "15s"
      after    = "5s"
    }
  }

  app "kill-leader" {
    fault {
      kind  = "kill-leader"
      after = "5s"
    }
  }

  app "restart-consul" {
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
