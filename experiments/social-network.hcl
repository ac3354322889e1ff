# Seed study 002's experiments 12-14 on DeathStarBench's social network,
# scaled to the embedded single-node cluster: baseline against vertical
# scaling under DeathStarBench's mixed workload (60 % home timeline, 30 % user
# timeline, 10 % compose), from a low rate to past the breaking point, five
# repetitions.
#
# Sizes: both configurations stay deployed during the sweep, so at
# resource_scale 0.03 they declare (18 + 36) cores x 0.03 x ~2600 MHz ~ 4200
# MHz; with VictoriaMetrics (300) and the load job (500) that fits a 2-core
# node. Seed 002 drove load with 8 wrk2 threads from a 16-core client; two
# threads is this machine's equivalent (one per core, shared with the apps).
# The horizontal variant (experiment 14) is experiments/social-network-horizontal.hcl:
# all three at once would not fit.
#
# A fresh deployment starts its stores from the cached snapshot of the
# 962-user dataset (the pack's prepare hook makes it once, about 7 minutes)
# and is verified before the first step, in about 10 s.
sweep "social-network" {
  description = "Social network baseline vs vertical (seed 002 exp. 12-13), mixed workload, 5 repetitions"
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
    variants = ["baseline", "vertical"]
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
