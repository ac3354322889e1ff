# The social network's datastores killed under load: Redis (the timelines),
# then FerretDB (users, graph, posts), each SIGKILLed 4 s into a step of the
# mixed workload. Both keep their files in the allocation's data directory
# (Redis with an append-only file, fsync every second), so the restarted task
# keeps its data: each step records the kill, the orchestrator's events and
# the recovery time, and the dataset check before the next step (which runs
# because a task restarted) shows whether the timelines survived. A step
# without a fault measures the same deployment; the seed orders the three.
sweep "social-network-faults" {
  description = "Social network: Redis and FerretDB killed during load; the data must survive"
  seed        = 7
  repetitions = 1
  deploy      = "per-configuration"
  warmup      = "2s"
  duration    = "12s"
  cooldown    = "2s"
  early_stop  = false
  orchestrators = ["nomad"]

  # what every app below shares
  app_defaults {
    pack        = "social-network"
    variants    = ["baseline"]
    vars        = { resource_scale = 0.03 }
    rates       = [20]
    threads     = 2
    connections = 8
    workload    = "social-network:mixed@962"
  }

  app "kill-redis" {
    fault {
      kind    = "kill-task"
      service = "social-network-baseline-redis"
      after   = "4s"
    }
  }

  app "kill-ferretdb" {
    fault {
      kind    = "kill-task"
      service = "social-network-baseline-ferretdb"
      after   = "4s"
    }
  }

  app "after-kills" {}

  slo {
    p99_ms             = 1000
    min_achieved_ratio = 0.95
    max_error_ratio    = 0.01
  }
}
