# Seed study 002's central comparison, on the embedded single-node cluster:
# DeathStarBench's social network (baseline) under its mixed workload on
# Nomad and on Docker Swarm. Each orchestrator's deployment loads the
# 962-user dataset before its first step, and is torn down before the other
# orchestrator's goes up. At resource_scale 0.03 the load is slow (the
# 37,624 follows alone took 9 min on Nomad here): allow 20 minutes or more
# per orchestrator. For a quick look, set dataset_users = 120,
# dataset_posts_per_user = 3 and workload = "social-network:mixed@120".
sweep "orchestrators-social-network" {
  description = "Social network baseline on Nomad and Swarm, mixed workload"
  seed        = 13
  repetitions = 3
  deploy      = "per-configuration"
  warmup      = "3s"
  duration    = "12s"
  cooldown    = "2s"
  early_stop  = true
  orchestrators = ["nomad", "swarm"]

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
