# The quick form of media-microservices.hcl: the media microservices'
# baseline under DeathStarBench's compose-review workload on Nomad, Docker
# Swarm and Kubernetes (just k8s-up first), two repetitions of two low
# rates, short steps; a few minutes in all, most of them the dataset's load
# (about 36 s per deployment at resource_scale 0.03, the most that leaves
# room on a 2-core node for the cluster's own jobs and the load generator's
# 500 MHz; at 0.05 the generator could not be placed). test/integration's
# TestMediaMicroservices (Nomad, Swarm) and TestKubernetes run it.
sweep "media-microservices-quick" {
  description = "Media microservices baseline on Nomad, Swarm and Kubernetes, compose-review, quick"
  seed        = 27
  repetitions = 2
  deploy      = "per-configuration"
  warmup      = "2s"
  duration    = "6s"
  cooldown    = "1s"
  early_stop  = true
  orchestrators = ["nomad", "swarm", "kubernetes"]

  app "media-microservices" {
    pack     = "media-microservices"
    variants = ["baseline"]
    vars     = { resource_scale = 0.03 }
    rates    = [4, 8]

    threads      = 2
    connections  = 16
    distribution = "exp"
    workload     = "media-microservices:compose-review"
    # The node agent tails Nomad's task logs only: with it shipping, Nomad's
    # steps would carry work the others do not (parity's shipping row).
    shipping     = "off"
    # A short test on a 2-core machine shared with the cluster's own
    # agents; a tenth of the SLO's p99 still refuses a generator that
    # cannot keep the schedule.
    max_generator_lag = "100ms"
  }

  # Each service has 0.03 core: a call that outruns its quota waits for the
  # next 100 ms period at every hop (at 0.02 core, p99 290-650 ms at 8-10
  # rps here). The
  # quick form checks that the application answers on each orchestrator;
  # where it breaks is the full experiment's question.
  slo {
    p99_ms             = 2000
    min_achieved_ratio = 0.95
    max_error_ratio    = 0.01
  }
}
