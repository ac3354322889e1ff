# The remote cluster's short sweep (TestRemoteUpSweepDown): Taewa's
# baseline at two rates on Nomad and Swarm, every gate on, on the hosts
# `orchbench remote up` made. The rates stay far below Taewa's 0.25-core
# capacity at this difficulty: at 80 rps both steps once broke the SLO (p99
# 378 and 892 ms) on a machine busy with the rest of the tests.
sweep "remote-quick" {
  description   = "Taewa baseline on a remote cluster, Nomad and Swarm"
  seed          = 7
  repetitions   = 1
  deploy        = "per-configuration"
  warmup        = "2s"
  duration      = "6s"
  cooldown      = "1s"
  orchestrators = ["nomad", "swarm"]

  app "taewa" {
    pack         = "taewa"
    variants     = ["baseline"]
    vars         = { resource_scale = 0.25, difficulty = 100000 }
    rates        = [20, 40]
    threads      = 2
    connections  = 8
    distribution = "exp"
  }

  slo {
    p99_ms             = 250
    min_achieved_ratio = 0.95
    max_error_ratio    = 0.01
  }
}
