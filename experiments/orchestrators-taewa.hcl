# The comparison orchbench exists for, on Taewa: the same pack, limits and
# load on Nomad, Docker Swarm and Kubernetes, in one randomised sweep (bring
# Kubernetes up first: just k8s-up). One orchestrator's deployments are torn
# down before another's go up, so they never share the machine. The report puts them side by side and lists,
# in its parity table, everything that must be equal besides the
# orchestrator (enforced limits, entry kind, response sizes, images, node).
sweep "orchestrators-taewa" {
  description = "Taewa baseline vs vertical on Nomad, Swarm and Kubernetes"
  seed        = 11
  repetitions = 2
  deploy      = "per-configuration"
  warmup      = "3s"
  duration    = "8s"
  cooldown    = "1s"
  early_stop  = true
  orchestrators = ["nomad", "swarm", "kubernetes"]

  app "taewa" {
    pack     = "taewa"
    variants = ["baseline", "vertical"]
    vars     = { resource_scale = 0.25, difficulty = 100000 }
    rates    = [50, 100, 200, 400]

    threads      = 2
    connections  = 16
    distribution = "exp"
  }

  slo {
    p99_ms             = 250
    min_achieved_ratio = 0.95
    max_error_ratio    = 0.01
  }
}
