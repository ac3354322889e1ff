# DeathStarBench's media microservices on Nomad, Docker Swarm and
# Kubernetes: baseline, vertical (every container x2) and horizontal (two
# instances of every stateless service) under the original's compose-review
# workload, five repetitions, so each orchestrator's breaking point comes
# with an interval. Study 002 (../shared/STUDIES.md) found this application
# broke first, near 500 req/s at baseline with a core per service; at
# resource_scale 0.02 the miniature's services have 0.02 core each, so the
# same shape should break near 10 req/s. 0.02 is the most that fits a
# 2-core node (5192 MHz here) in every variant beside the cluster's own
# jobs (750 MHz) and the load generator (500 MHz): vertical declares 70
# cores, 3634 MHz. Just k8s-up first; 83 minutes here.
#
# Measured 2026-11-29 (media-microservices-20261129T114643Z; details in
# packs/media-microservices/README.md): highest rate held, median of five,
# baseline 16 rps on Nomad and Swarm, 12 on Kubernetes; horizontal 24, 24,
# 16; vertical at least 32 on all three (the ladder's top); every response
# a 200; parity clean.
sweep "media-microservices" {
  description = "Media microservices baseline vs vertical vs horizontal on Nomad, Swarm and Kubernetes, compose-review, 5 repetitions"
  seed        = 27
  repetitions = 5
  deploy      = "per-configuration"
  warmup      = "3s"
  duration    = "10s"
  cooldown    = "1s"
  early_stop  = true
  orchestrators = ["nomad", "swarm", "kubernetes"]

  app "media-microservices" {
    pack     = "media-microservices"
    variants = ["baseline", "vertical", "horizontal"]
    vars     = { resource_scale = 0.02 }
    rates    = [4, 8, 12, 16, 24, 32]

    # A compose crosses up to six services of 0.02 core each: a call that
    # outruns its quota waits for the next 100 ms period, so answers take
    # hundreds of milliseconds near the breaking point and the connections
    # must carry the highest rate at a second's latency (Little's law).
    threads      = 2
    connections  = 64
    distribution = "exp"
    workload     = "media-microservices:compose-review"
    # The node agent tails Nomad's task logs only: with it shipping, Nomad's
    # steps would carry work the others do not (parity's shipping row).
    shipping     = "off"
  }

  slo {
    p99_ms             = 1000
    min_achieved_ratio = 0.95
    max_error_ratio    = 0.01
  }
}
