# Seed study 002's central comparison, on the embedded single-node cluster:
# DeathStarBench's social network (baseline) under its mixed workload on
# Nomad, Docker Swarm and Kubernetes (just k8s-up first). Each
# orchestrator's deployment loads the 962-user dataset before its first
# step, and is torn down before the next orchestrator's goes up. At
# resource_scale 0.03 the load is slow (the 37,624 follows alone took 8 to
# 12 min here): allow 20 minutes or more per orchestrator.
# orchestrators-social-network-quick.hcl is the same with 120 users.
sweep "orchestrators-social-network" {
  description = "Social network baseline on Nomad, Swarm and Kubernetes, mixed workload"
  seed        = 13
  repetitions = 3
  deploy      = "per-configuration"
  warmup      = "3s"
  duration    = "12s"
  cooldown    = "2s"
  early_stop  = true
  orchestrators = ["nomad", "swarm", "kubernetes"]

  app "social-network" {
    pack     = "social-network"
    variants = ["baseline"]
    vars     = { resource_scale = 0.03 }
    rates    = [5, 10, 20, 40, 80]

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
