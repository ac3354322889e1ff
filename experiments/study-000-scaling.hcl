# Study 000's scaling stage (Grigoryev 2022, ../shared/STUDIES.md): from a
# reset to the minimum, the app under Fortio-style closed-loop load at full
# speed, and the time until the autoscaler had added its last instance.
# Published: 330-440 s on EKS (HPA at 70 %), 607-656 s on the ASGs. Here
# Taewa as a container (the docker driver, EKS's form) scaled by the
# Nomad Autoscaler with the study's EKS policy (70 % CPU), on Nomad;
# experiments/autoscale.hcl compares the orchestrators' autoscalers on the
# same container.
#
# The process form (Nomad's exec driver, the ASG's) is not here: the exec
# driver caps CPU only as a cpuset of whole cores (a fractional core is a
# reservation the limits gate refuses: "the cap cannot hold and the step
# would run uncapped"), and a 2-core machine has no room for a second
# whole-core instance beside the entry, the load and the cluster's jobs.
# It needs nodes with whole cores to give (just nodes-up).
#
# Miniature: a quarter core per instance, 1 to 4 instances, 20 users, which
# saturate every instance there is, so the autoscaler goes to the maximum
# as the study's did. The stage's 14 x 60 s become 150 s: the study's time
# was mostly VMs booting, ours is the autoscaler's decisions and placement
# on a node already up (the report's notes). 3 repetitions: about 10
# minutes.
sweep "study-000-scaling" {
  description = "Study 000's scaling stage: Taewa as a container from a reset under full closed-loop load, 1-4 instances at 70% CPU"
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

  slo {
    p99_ms             = 1000
    min_achieved_ratio = 0.95
    max_error_ratio    = 0.01
  }
}
