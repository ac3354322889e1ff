# A small sweep to check the whole chain: Taewa, baseline against vertical
# scaling, four offered rates, two repetitions each; and the baseline again at
# two rates with the node agent (log and metrics shipping) stopped, so the
# report sets the agent's CPU beside steps measured without it (20 steps,
# about 4.5 min of load).
sweep "demo" {
  description = "Taewa baseline vs vertical, a few rates"
  seed        = 42                  # randomised step order, recorded
  repetitions = 2
  deploy      = "per-configuration" # or "per-step"
  warmup      = "3s"
  duration    = "8s"
  cooldown    = "1s"
  early_stop  = true                # skip higher rates of a configuration once it broke
  orchestrators = ["nomad"]

  app "taewa" {
    pack     = "taewa"
    variants = ["baseline", "vertical"]
    vars     = { resource_scale = 0.25, difficulty = 100000 } # pack variables; n=100000 costs about 1.5 ms of CPU
    rates    = [50, 100, 200, 400]        # offered requests/s: baseline (0.25 core) saturates near 160

    threads      = 2
    connections  = 16
    distribution = "exp" # fixed|exp
    path         = ""    # default: the pack's orchbench_load_path meta
    workload     = ""    # optional named Go workload, e.g. "social-network:mixed@962"
    script       = ""    # optional wrk Lua script path
  }

  # The same baseline with shipping off: the node agent is stopped for these
  # steps (their log lines are shipped when it runs again).
  app "taewa-unshipped" {
    pack     = "taewa"
    variants = ["baseline"]
    vars     = { resource_scale = 0.25, difficulty = 100000 }
    rates    = [50, 100]
    shipping = "off" # "on" (default) | "off"

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
