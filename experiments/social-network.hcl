# DeathStarBench's social network, baseline against vertical scaling, under
# DeathStarBench's mixed workload (60 % home timeline, 30 % user timeline,
# 10 % compose). Both configurations stay deployed during the sweep, so at
# resource_scale 0.03 they declare 18 + 36 cores x 0.03 x ~2600 MHz ~ 4200 MHz:
# with VictoriaMetrics (300) and the load job (500) that fits a 2-core node.
# A fresh deployment runs the pack's setup hook, which loads the 962-user
# dataset (several minutes at this scale) before the first step.
sweep "social-network" {
  description = "Social network baseline vs vertical, mixed workload, a few rates"
  seed        = 7
  repetitions = 1
  deploy      = "per-configuration"
  warmup      = "3s"
  duration    = "10s"
  cooldown    = "1s"
  early_stop  = true
  orchestrators = ["nomad"]

  app "social-network" {
    pack     = "social-network"
    variants = ["baseline", "vertical"]
    vars     = { resource_scale = 0.03 }
    rates    = [10, 20, 40, 60, 80]

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
