# Study 003 (FIUBA 75.73 TP2, ../shared/STUDIES.md): the highest arrival
# rate each route of a Node web tier holds, with 1 and 3 instances, under
# Artillery's phases (a pad with no arrivals, a ramp to the rate, a hold at
# it, a pad) at the study's rates 10, 50, 100 and 500 a second. Routes:
# root (hello), remote (a Python service answering one request at a time,
# 0.75 s each), alternate (a function pool, the study's Lambda), cached
# (remote through Redis with 1, 10 or 20 keys). The root route runs by
# orchbench's generator too, on the same phases.
#
# Miniature, in time: the study's phases are 30 s pad, 60 s ramp, 30 s
# hold, 30 s pad (2.5 min a step); here 5 s, 20 s, 10 s, 5 s, so the
# matrix fits a working session. Restore them for the study's exact shape.
# In CPU: each web tier instance has a quarter core; the remote service,
# the pool and Redis stand for managed services and are uncapped. The load
# job has half a core, the most Nomad can still place beside the 3-instance
# shape (its reservations: 0.75 core of web tier, 0.4 of entry, remote
# service, pool and Redis, 0.29 of the cluster's own jobs, of 2 cores).
# Artillery spends about 2 ms of CPU on each arrival, so it sends about 200
# a second there: at the study's 500 its tool gate called every step
# invalid (0.4 cores used, throttled in 71 % of its periods). So Artillery
# runs 10, 50 and 100 a second, and our generator, which sends 500 on a
# few hundredths of a core, runs the root route at all four rates.
#
# early_stop: a route's higher rates are skipped once a rate broke, as the
# study stopped at the first rate a route failed. At most 132 steps of 42 s
# (about 1.5 hours); the early stops leave less.
sweep "study-003" {
  description = "Study 003: root, remote, alternate, cached with 1 and 3 instances, Artillery phases at 10-500/s"
  study       = "003"
  seed        = 3
  repetitions = 3
  deploy      = "per-configuration"
  # the phases' length: with phases, what every step measures
  duration    = "40s"
  cooldown    = "2s"
  early_stop  = true
  orchestrators = ["nomad"]

  app_defaults {
    pack            = "frontier"
    variants        = ["baseline"]
    vars            = { resource_scale = 0.25 }
    rates           = [10, 50, 100]
    runner          = "artillery"
    generator_cores = 0.5
    # Artillery's own default; the tier answers 504 after 60 s upstream
    timeout         = "10s"
    phases {
      phase { duration = "5s" }
      phase {
        duration = "20s"
        from     = 0
        to       = 1
      }
      phase {
        duration = "10s"
        rate     = 1
      }
      phase { duration = "5s" }
    }
  }

  app "root-1" {
    vars = { route = "/", scale = 1, job_name = "s003-root-1" }
  }

  app "remote-1" {
    vars = { route = "/remote", scale = 1, job_name = "s003-remote-1" }
  }

  app "alternate-1" {
    vars = { route = "/alternate", scale = 1, job_name = "s003-alternate-1" }
  }

  app "cached-1-k1" {
    vars = { route = "/cached", scale = 1, job_name = "s003-cached-1-k1", cache_keys = 1 }
  }

  app "cached-1-k10" {
    vars = { route = "/cached", scale = 1, job_name = "s003-cached-1-k10", cache_keys = 10 }
  }

  app "cached-1-k20" {
    vars = { route = "/cached", scale = 1, job_name = "s003-cached-1-k20", cache_keys = 20 }
  }

  app "root-3" {
    vars = { route = "/", scale = 3, job_name = "s003-root-3" }
  }

  app "remote-3" {
    vars = { route = "/remote", scale = 3, job_name = "s003-remote-3" }
  }

  app "alternate-3" {
    vars = { route = "/alternate", scale = 3, job_name = "s003-alternate-3" }
  }

  app "cached-3-k1" {
    vars = { route = "/cached", scale = 3, job_name = "s003-cached-3-k1", cache_keys = 1 }
  }

  app "cached-3-k10" {
    vars = { route = "/cached", scale = 3, job_name = "s003-cached-3-k10", cache_keys = 10 }
  }

  app "cached-3-k20" {
    vars = { route = "/cached", scale = 3, job_name = "s003-cached-3-k20", cache_keys = 20 }
  }

  # the same phases by orchbench's generator, on the route both can hold

  app "root-1-orchbench" {
    vars = { route = "/", scale = 1, job_name = "s003-root-1-orchbench" }
    runner = "orchbench"
    rates  = [10, 50, 100, 500]
  }

  app "root-3-orchbench" {
    vars = { route = "/", scale = 3, job_name = "s003-root-3-orchbench" }
    runner = "orchbench"
    rates  = [10, 50, 100, 500]
  }

  # Held: answered on time and in full. The study read its Artillery
  # reports for errors and timeouts; a p99 of 5 s over the whole run
  # (ramps included, as Artillery reports it) and 1 % errors say the same.
  slo {
    p99_ms             = 5000
    min_achieved_ratio = 0.95
    max_error_ratio    = 0.01
  }
}
