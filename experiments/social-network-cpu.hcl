# Where a request of the social network spends its CPU (`just bench-social`).
# Each built-in workload runs as a closed loop of 16 users against the
# unlimited variant: no task has a CPU cap, so the loop saturates whichever
# task the application's capacity is, and each task's cgroup says what one
# request cost it. The mixed workload runs with 64 users too: at 16 its
# requests queue behind composes and the machine's cores are not all busy. `orchbench results cpu social-network-cpu` prints the
# table. The four app blocks render the same job (one job_name, the same
# vars), so it is deployed and loaded from its snapshot once. Like every
# sweep its configurations run in a seeded random order, so a read may find
# the posts that compose-post and mixed added before it (a few thousand over
# the snapshot's 9,620).
sweep "social-network-cpu" {
  description   = "Social network CPU per request per task, unlimited variant, closed loop at saturation"
  seed          = 7
  repetitions   = 3
  deploy        = "per-configuration"
  warmup        = "3s"
  duration      = "15s"
  cooldown      = "2s"
  early_stop    = false
  orchestrators = ["nomad"]

  # what every app below shares
  app_defaults {
    pack        = "social-network"
    variants    = ["unlimited"]
    vars        = { job_name = "social-network-cpu", resource_scale = 0.05 }
    threads     = 2
    connections = 16
    closed_loop {
      users = 16
    }
  }

  app "read-home-timeline" {
    workload = "social-network:read-home-timeline@962"
  }

  app "read-user-timeline" {
    workload = "social-network:read-user-timeline@962"
  }

  app "mixed" {
    workload = "social-network:mixed@962"
  }

  app "mixed-u64" {
    workload    = "social-network:mixed@962"
    connections = 64
    closed_loop {
      users = 64
    }
  }

  app "compose-post" {
    workload = "social-network:compose-post@962"
  }

  slo {
    p99_ms          = 5000
    max_error_ratio = 0.01
  }
}
