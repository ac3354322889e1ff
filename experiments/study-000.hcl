# Study 000 (Grigoryev 2022, ../shared/STUDIES.md): the same four small HTTP
# apps as a process per VM (AWS ASG) and as containers (EKS). Here "process" is
# Nomad's exec driver (the runtime as a plain process on the node, no image,
# a cpuset of one whole core) and "container" the docker driver with a CFS
# quota of one core; everything else is equal, the runtime files included
# (the exec chroot is the base image's userland, cluster/embedded.sh).
#
# Load as the study ran it: Fortio-style closed loop at maximum rate, a fixed
# number of connections for a fixed time (the study: 15-25 connections, 60-70
# for Apache, 5-10 for the extra difficulty), reporting qps and qps per core
# the app actually used (the study's "weighted qps", qps / CPU %).
#
# The report regenerates the study's headline, container / process raw qps
# and efficiency per app and difficulty, beside the published EKS / ASG
# ratios (Apache 0.446 / 0.454, Taewa 1.077 / 0.576, Riwai 1.129 / 0.598,
# Raupi 1.731 / 1.602).
#
# Miniature: one 2-core machine; each app instance gets one core and the load
# generator the other. The study's stages (5 x 60 s control, 3 x 300 s
# performance) become 3 repetitions of 15 s after a 5 s warm-up. A
# configuration is stopped when its steps are done, so one core each fits;
# each app block names its own job, so the configurations never replace
# one another's deployment.
# About 30 minutes: 20 configurations x 3 repetitions. With Fortio in place of
# our generator: just sweep experiments/study-000.hcl --runner fortio
sweep "study-000" {
  description = "Study 000: VM-like process (exec) vs container (docker), four runtimes x three difficulties, closed loop at max rate"
  study       = "000"
  seed        = 2022
  repetitions = 3
  deploy      = "per-configuration"
  warmup      = "5s"
  duration    = "15s"
  cooldown    = "2s"
  early_stop  = false
  orchestrators = ["nomad"]

  app "apache-container" {
    pack        = "apache"
    variants    = ["baseline"]
    vars        = { job_name = "s000-apache-container", driver = "docker", resource_scale = 1 }
    threads     = 2
    connections = 64
    closed_loop {
      users = 64
    }
  }

  app "apache-process" {
    pack        = "apache"
    variants    = ["baseline"]
    vars        = { job_name = "s000-apache-process", driver = "exec", resource_scale = 1 }
    threads     = 2
    connections = 64
    closed_loop {
      users = 64
    }
  }

  app "taewa-lite-container" {
    pack        = "taewa"
    variants    = ["baseline"]
    vars        = { job_name = "s000-taewa-lite-container", driver = "docker", resource_scale = 1, difficulty = 1 }
    threads     = 2
    connections = 20
    closed_loop {
      users = 20
    }
  }

  app "taewa-lite-process" {
    pack        = "taewa"
    variants    = ["baseline"]
    vars        = { job_name = "s000-taewa-lite-process", driver = "exec", resource_scale = 1, difficulty = 1 }
    threads     = 2
    connections = 20
    closed_loop {
      users = 20
    }
  }

  app "taewa-normal-container" {
    pack        = "taewa"
    variants    = ["baseline"]
    vars        = { job_name = "s000-taewa-normal-container", driver = "docker", resource_scale = 1, difficulty = 20000 }
    threads     = 2
    connections = 20
    closed_loop {
      users = 20
    }
  }

  app "taewa-normal-process" {
    pack        = "taewa"
    variants    = ["baseline"]
    vars        = { job_name = "s000-taewa-normal-process", driver = "exec", resource_scale = 1, difficulty = 20000 }
    threads     = 2
    connections = 20
    closed_loop {
      users = 20
    }
  }

  app "taewa-extra-container" {
    pack        = "taewa"
    variants    = ["baseline"]
    vars        = { job_name = "s000-taewa-extra-container", driver = "docker", resource_scale = 1, difficulty = 80000 }
    threads     = 2
    connections = 8
    closed_loop {
      users = 8
    }
  }

  app "taewa-extra-process" {
    pack        = "taewa"
    variants    = ["baseline"]
    vars        = { job_name = "s000-taewa-extra-process", driver = "exec", resource_scale = 1, difficulty = 80000 }
    threads     = 2
    connections = 8
    closed_loop {
      users = 8
    }
  }

  app "riwai-lite-container" {
    pack        = "riwai"
    variants    = ["baseline"]
    vars        = { job_name = "s000-riwai-lite-container", driver = "docker", resource_scale = 1, difficulty = 1 }
    threads     = 2
    connections = 20
    closed_loop {
      users = 20
    }
  }

  app "riwai-lite-process" {
    pack        = "riwai"
    variants    = ["baseline"]
    vars        = { job_name = "s000-riwai-lite-process", driver = "exec", resource_scale = 1, difficulty = 1 }
    threads     = 2
    connections = 20
    closed_loop {
      users = 20
    }
  }

  app "riwai-normal-container" {
    pack        = "riwai"
    variants    = ["baseline"]
    vars        = { job_name = "s000-riwai-normal-container", driver = "docker", resource_scale = 1, difficulty = 20000 }
    threads     = 2
    connections = 20
    closed_loop {
      users = 20
    }
  }

  app "riwai-normal-process" {
    pack        = "riwai"
    variants    = ["baseline"]
    vars        = { job_name = "s000-riwai-normal-process", driver = "exec", resource_scale = 1, difficulty = 20000 }
    threads     = 2
    connections = 20
    closed_loop {
      users = 20
    }
  }

  app "riwai-extra-container" {
    pack        = "riwai"
    variants    = ["baseline"]
    vars        = { job_name = "s000-riwai-extra-container", driver = "docker", resource_scale = 1, difficulty = 80000 }
    threads     = 2
    connections = 8
    closed_loop {
      users = 8
    }
  }

  app "riwai-extra-process" {
    pack        = "riwai"
    variants    = ["baseline"]
    vars        = { job_name = "s000-riwai-extra-process", driver = "exec", resource_scale = 1, difficulty = 80000 }
    threads     = 2
    connections = 8
    closed_loop {
      users = 8
    }
  }

  app "raupi-lite-container" {
    pack        = "raupi"
    variants    = ["baseline"]
    vars        = { job_name = "s000-raupi-lite-container", driver = "docker", resource_scale = 1, difficulty = 1 }
    threads     = 2
    connections = 20
    closed_loop {
      users = 20
    }
  }

  app "raupi-lite-process" {
    pack        = "raupi"
    variants    = ["baseline"]
    vars        = { job_name = "s000-raupi-lite-process", driver = "exec", resource_scale = 1, difficulty = 1 }
    threads     = 2
    connections = 20
    closed_loop {
      users = 20
    }
  }

  app "raupi-normal-container" {
    pack        = "raupi"
    variants    = ["baseline"]
    vars        = { job_name = "s000-raupi-normal-container", driver = "docker", resource_scale = 1, difficulty = 20000 }
    threads     = 2
    connections = 20
    closed_loop {
      users = 20
    }
  }

  app "raupi-normal-process" {
    pack        = "raupi"
    variants    = ["baseline"]
    vars        = { job_name = "s000-raupi-normal-process", driver = "exec", resource_scale = 1, difficulty = 20000 }
    threads     = 2
    connections = 20
    closed_loop {
      users = 20
    }
  }

  app "raupi-extra-container" {
    pack        = "raupi"
    variants    = ["baseline"]
    vars        = { job_name = "s000-raupi-extra-container", driver = "docker", resource_scale = 1, difficulty = 80000 }
    threads     = 2
    connections = 8
    closed_loop {
      users = 8
    }
  }

  app "raupi-extra-process" {
    pack        = "raupi"
    variants    = ["baseline"]
    vars        = { job_name = "s000-raupi-extra-process", driver = "exec", resource_scale = 1, difficulty = 80000 }
    threads     = 2
    connections = 8
    closed_loop {
      users = 8
    }
  }

  # Closed loop at maximum rate has no offered rate to fall short of: the
  # verdict rests on errors and tail latency.
  slo {
    p99_ms             = 2000
    min_achieved_ratio = 0
    max_error_ratio    = 0.01
  }
}
