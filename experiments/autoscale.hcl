# Autoscalers compared (issue 29): the same Taewa, the same policy (1 to 4
# instances holding 70 % of each one's reserved CPU) and the same step of
# load on each orchestrator's autoscaler. The load holds a tenth of its rate
# for 30 s on one instance, then steps up to 600 requests a second, more than
# one quarter-core instance serves (it takes 60 a second at
# 30 %): the autoscaler must add instances, and the report shows when each
# decided, when the new instances ran and served, and when the p99 came
# back under the SLO, beside the errors users saw meanwhile.
#
# Every step deploys afresh, so each starts from one instance; each request
# takes a new connection, so the instances added reach load (an entry, the
# pack's tcp-balance, relays each to an instance passing its check).
sweep "autoscale" {
  description = "Taewa autoscaled 1-4 at 70% CPU under a step from 60 to 600 requests/s"
  seed        = 29
  repetitions = 3
  deploy      = "per-step"
  duration    = "180s"
  cooldown    = "5s"
  orchestrators = ["nomad"]

  app "taewa" {
    pack     = "taewa"
    variants = ["baseline"]
    vars     = { resource_scale = 0.25 }
    rates    = [600]
    threads     = 2
    connections = 64
    phases {
      phase {
        duration = "30s"
        rate     = 0.1
      }
      phase {
        duration = "150s"
        rate     = 1
      }
    }
    autoscale {
      min        = 1
      max        = 4
      target_cpu = 0.7
      cooldown   = "30s"
      evaluation = "10s"
      settle     = "120s"
    }
  }

  slo {
    p99_ms             = 250
    min_achieved_ratio = 0.95
    max_error_ratio    = 0.01
  }
}
