# Study 000's load (Fortio's closed loop at its maximum rate, `-qps -1`) on
# Taewa, generated three ways: by orchbench's own closed loop, by Fortio and
# by Locust, each in a Nomad batch job capped at the same CPU, against the
# same pack and limits. The report's "rps per core used" column is study
# 000's weighted qps (qps per core the service used). Images: cluster/images.sh
# orchbench fortio locust.
sweep "taewa-load-tools" {
  description = "Taewa closed loop at max rate: orchbench vs fortio vs locust"
  seed        = 13
  repetitions = 2
  warmup      = "3s"
  duration    = "15s"
  cooldown    = "1s"
  orchestrators = ["nomad"]

  app "taewa-orchbench" {
    pack            = "taewa"
    variants        = ["baseline"]
    vars            = { job_name = "taewa-orchbench", resource_scale = 0.25, difficulty = 1000 }
    generator_cores = 0.5
    closed_loop {
      users = [5, 15]
    }
  }

  app "taewa-fortio" {
    pack            = "taewa"
    variants        = ["baseline"]
    vars            = { job_name = "taewa-fortio", resource_scale = 0.25, difficulty = 1000 }
    runner          = "fortio"
    generator_cores = 0.5
    closed_loop {
      users = [5, 15]
    }
  }

  app "taewa-locust" {
    pack            = "taewa"
    variants        = ["baseline"]
    vars            = { job_name = "taewa-locust", resource_scale = 0.25, difficulty = 1000 }
    runner          = "locust"
    generator_cores = 0.5
    closed_loop {
      users = [5, 15]
    }
  }

  slo {
    p99_ms             = 500
    min_achieved_ratio = 0.95
    max_error_ratio    = 0.01
  }
}
