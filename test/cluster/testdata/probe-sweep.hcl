# The smallest sweep whose every gate reads a task's node: one Taewa
# instance, one low rate, one repetition, no shipping (the emulated nodes
# run no node agent). test/cluster/probe_test.go runs it from the client
# node, whose own /proc holds none of the workers' tasks.
sweep "probe-nodes" {
  description = "Taewa baseline judged through the node probes"
  seed        = 1
  repetitions = 1
  deploy      = "per-configuration"
  warmup      = "2s"
  duration    = "5s"
  cooldown    = "1s"
  orchestrators = ["nomad"]

  app "taewa" {
    pack     = "taewa"
    variants = ["baseline"]
    vars     = { resource_scale = 0.1, difficulty = 1000 }
    rates    = [20]
    shipping = "off"

    threads      = 1
    connections  = 4
    distribution = "fixed"
    # the generator shares a node of 0.4 core with the app: its CFS quota
    # delays sends by up to a period's worth of throttling (about 50 ms
    # seen), which the default 5 ms bound would call saturation
    max_generator_lag = "200ms"
  }

  slo {
    p99_ms             = 2000
    min_achieved_ratio = 0.5
    max_error_ratio    = 0.5
  }
}
