# The quick form of orchestrators-social-network.hcl: the social network
# (baseline) under its mixed workload on Nomad, Docker Swarm and Kubernetes
# (just k8s-up first), with a 120-user dataset (3 posts each) that loads in
# about a minute per orchestrator instead of the 962 users' 20.
sweep "orchestrators-social-network-quick" {
  description = "Social network baseline on Nomad, Swarm and Kubernetes, mixed workload, 120 users"
  seed        = 13
  repetitions = 2
  deploy      = "per-configuration"
  warmup      = "3s"
  duration    = "12s"
  cooldown    = "2s"
  early_stop  = true
  orchestrators = ["nomad", "swarm", "kubernetes"]

  app "social-network" {
    pack     = "social-network"
    variants = ["baseline"]
    vars     = { resource_scale = 0.03, dataset_users = 120, dataset_posts_per_user = 3 }
    rates    = [5, 10, 20, 40, 80]

    threads      = 2
    connections  = 8
    distribution = "exp"
    workload     = "social-network:mixed@120"
  }

  slo {
    p99_ms             = 1000
    min_achieved_ratio = 0.95
    max_error_ratio    = 0.01
  }
}
