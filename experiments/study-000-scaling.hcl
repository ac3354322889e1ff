# Study 000's scaling stage (Grigoryev 2022, ../shared/STUDIES.md): from a
# reset to the minimum, the app under Fortio-style closed-loop load at full
# speed, and the time until the autoscaler had added its last instance.
# Published: 330-440 s on EKS (HPA at 70 %), 607-656 s on the ASGs. Here
# Taewa as a process (Nomad's exec driver, the ASG's form) and as a
# container (the docker driver, EKS's form), both scaled by the Nomad
# Autoscaler with the study's EKS policy (70 % CPU); the exec driver is
# Nomad's alone. experiments/autoscale.hcl compares the orchestrators'
# autoscalers on the same container.
#
# Miniature: a quarter core per instance (a fractional core is a
# reservation, not a cpuset, on the exec driver), 1 to 4 instances, 20
# users, which saturate every instance there is, so the autoscalers go to
# the maximum as the study's did. The stage's 14 x 60 s become 150 s: the
# study's time was mostly VMs booting, ours is the autoscalers' decisions
# and placement on nodes already up (the report's notes). 3 repetitions
# of each form: about 20 minutes.
sweep "study-000-scaling" {
  description = "Study 000's scaling stage: Taewa process vs container from a reset under full closed-loop load, 1-4 instances at 70% CPU"
  study       = "000"
  seed        = 2000
  repetitions = 3
  deploy      = "per-step"
  warmup      = "0s"
  duration    = "150s"
  cooldown    = "5s"
  orchestrators = ["nomad"]

  app_defaults {
    pack        = "taewa"
    variants    = ["baseline"]
    threads     = 2
    connections = 20
    closed_loop {
      users = 20
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

  app "taewa-container" {
    vars = { job_name = "s000-taewa-container", driver = "docker", resource_scale = 0.25 }
  }

  app "taewa-process" {
    vars = { job_name = "s000-taewa-process", driver = "exec", resource_scale = 0.25 }
  }

  slo {
    p99_ms             = 1000
    min_achieved_ratio = 0.95
    max_error_ratio    = 0.01
  }
}
