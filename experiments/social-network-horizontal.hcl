# Seed study 002's experiment 14 on DeathStarBench's social network: two
# baseline-sized instances of each of the twelve services (FerretDB and Redis
# single, as their replicas would split the data), the same workload and
# rates as experiments/social-network.hcl, whose baseline and vertical
# results it is compared with. It is a sweep of its own because all three
# configurations deployed at once exceed a 2-core node at resource_scale
# 0.03 ((18 + 36 + 33) cores x 0.03 x ~2600 MHz ~ 6800 MHz).
#
# A fresh deployment starts its stores from the cached snapshot of the
# 962-user dataset (the pack's prepare hook makes it once, about 7 minutes)
# and is verified before the first step, in about 10 s.
sweep "social-network-horizontal" {
  description = "Social network horizontal x2 (seed 002 exp. 14), mixed workload, 5 repetitions"
  seed        = 7
  repetitions = 5
  deploy      = "per-configuration"
  warmup      = "3s"
  duration    = "12s"
  cooldown    = "2s"
  early_stop  = true
  orchestrators = ["nomad"]

  app "social-network" {
    pack     = "social-network"
    variants = ["horizontal"]
    vars     = { resource_scale = 0.03 }
    rates    = [5, 10, 20, 30, 40, 60, 80, 120]

    threads      = 2
    connections  = 8
    distribution = "exp"
    workload     = "social-network:mixed@962"
  }

  slo {
    p99_ms             = 1000
    min_achieved_ratio = 0.95
    max_error_ratio    = 0.01
  }
}
