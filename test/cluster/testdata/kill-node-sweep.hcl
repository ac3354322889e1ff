# The one multi-node sweep of CI (test/cluster/nodes_ci_test.go): Taewa's
# two instances on two workers, a worker killed 5 s into a 70 s load at a
# fixed rate; then a short step of the same deployment, so the sweep is
# seen to go on after the node's return. The nodes run no node agent,
# hence shipping = "off"; the nodes share the machine with the harness,
# hence the lenient lag bound.
sweep "ci-kill-node" {
  description = "a worker killed under load on nodes=3 servers=1"
  seed        = 4 # runs kill-node first (orchbench sweep --dry-run)
  repetitions = 1
  deploy      = "per-configuration"
  warmup      = "2s"
  duration    = "70s"
  cooldown    = "0s"
  early_stop  = false
  orchestrators = ["nomad"]
  ha          = "off"

  app "kill-node" {
    pack     = "taewa"
    variants = ["horizontal"]
    vars     = { resource_scale = 0.1, difficulty = 1000 }
    rates    = [20]
    shipping = "off"

    threads           = 1
    connections       = 4
    distribution      = "fixed"
    max_generator_lag = "200ms"

    fault {
      kind  = "kill-node"
      after = "5s"
    }
  }

  app "after" {
    pack     = "taewa"
    variants = ["horizontal"]
    vars     = { resource_scale = 0.1, difficulty = 1000 }
    shipping = "off"

    # requests of a few ms of CPU each (300,000 products: 24 ms here under
    # a load average of 25), tens of ms under the instance's 0.1 core: the
    # generator's own delays (15 ms seen on this loaded machine) stay a
    # small share of each user's cycle, as the closed-loop gate wants
    iterations {
      threads = 2
      loops   = 10
      request {
        path = "/?n=300000"
      }
    }
  }

  slo {
    p99_ms             = 2000
    min_achieved_ratio = 0.5
    max_error_ratio    = 0.6
  }
}
