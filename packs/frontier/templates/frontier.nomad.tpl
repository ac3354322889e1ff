[[- template "frontier.validate" . -]]
[[- $size := dict "ctx" . -]]
[[- template "frontier.sizing" $size -]]
[[- $probe := dict "route" (var "route" .) -]]
[[- template "frontier.probe" $probe -]]
[[- $job := var "job_name" . -]]
[[- if eq $job "" ]][[ $job = printf "%s-%s" (meta "pack.name" .) (var "variant" .) ]][[ end -]]
[[- $app := meta "pack.name" . -]]
[[- $variant := var "variant" . -]]
[[- $capped := ne $variant "unlimited" -]]
[[- $support_cpu := max 1 (round (mulf (float64 (var "support_cores" .)) (var "mhz_per_core" .)) 0 | int) -]]
job "[[ $job ]]" {
  region      = [[ var "region" . | quote ]]
  datacenters = [[ var "datacenters" . | toStringList ]]
  type        = "service"

  # What the orchbench harness reads back from the job. The limits each task
  # must show (orchbench_cores, orchbench_memory_mib) are in its own meta:
  # the web tier's follow the variant; Redis's, the remote service's and
  # the pool's never do.
  meta {
    orchbench_app             = "[[ $app ]]"
    orchbench_variant         = "[[ $variant ]]"
    orchbench_driver          = "docker"
    orchbench_resource_scale  = "[[ var "resource_scale" . ]]"
    orchbench_count           = "[[ $size.count ]]"
    orchbench_reserved_cores  = "[[ $size.cores ]]"
    orchbench_reserved_mib    = "[[ $size.memory ]]"
    orchbench_service         = "[[ $job ]]"
    # the entry balances over the web tier, which the variant and scale size
    orchbench_scaled_service  = "[[ $job ]]-web"
    # The route under load (variable route) and its right answer: hello,
    # the remote service's or a pool instance's JSON. An empty body, an
    # upstream's error message or another route's answer fails the probe,
    # so a passing probe proves the tier answers through that route.
    orchbench_probe_path      = "[[ var "route" . ]]"
    orchbench_probe_min_bytes = "[[ $probe.min_bytes ]]"
    orchbench_probe_regex     = [[ $probe.regex | quote ]]
    orchbench_load_path       = "[[ var "route" . ]]"
  }

  # Study 003's ElastiCache: the cache of /cached, its hit and miss counters.
  group "redis" {
    count = 1

    network {
      mode = "host"
      port "rpc" {}
    }

    service {
      provider = "consul"
      name     = "[[ $job ]]-redis"
      port     = "rpc"
      tags     = ["orchbench-internal", "variant-[[ $variant ]]"]

      check {
        name     = "redis-tcp"
        type     = "tcp"
        interval = "3s"
        timeout  = "2s"
      }
    }

    update {
      max_parallel      = 1
      health_check      = "checks"
      min_healthy_time  = "3s"
      healthy_deadline  = "2m"
      progress_deadline = "3m"
      auto_revert       = false
    }

    # Fail visibly instead of flapping or moving nodes mid-measurement.
    restart {
      attempts = 2
      interval = "1m"
      delay    = "2s"
      mode     = "fail"
    }

    reschedule {
      attempts  = 0
      unlimited = false
    }

    task "redis" {
      driver       = "docker"
      kill_timeout = "5s"

      # A managed cache in the study: CPU shares, never capped, not scaled.
      meta {
        orchbench_cores      = "0"
        orchbench_memory_mib = "[[ var "redis_memory_mib" . ]]"
        orchbench_cpu_mode   = "shares"
        orchbench_role       = "datastore"
      }

      config {
        image          = [[ var "redis_image" . | quote ]]
        network_mode   = "host"
        cpu_hard_limit = false
        # A cache: nothing persisted; keys past maxmemory are evicted, least recently used first.
        args = ["--bind", "${NOMAD_IP_rpc}", "--port", "${NOMAD_PORT_rpc}", "--dir", "/alloc/data/redis",
                "--appendonly", "no", "--maxmemory", "[[ div (mul (var "redis_memory_mib" .) 3) 4 ]]mb", "--maxmemory-policy", "allkeys-lru"]
      }

      resources {
        cpu    = [[ $support_cpu ]]
        memory = [[ var "redis_memory_mib" . ]]
      }
    }
  }

  # The single-worker service behind /remote and /cached: exactly one
  # instance, one request at a time (apps/frontier/service/remote.py).
  group "remote" {
    count = 1

    network {
      mode = "host"
      port "http" {}
    }

    service {
      provider = "consul"
      name     = "[[ $job ]]-remote"
      port     = "http"
      tags     = ["orchbench-internal", "variant-[[ $variant ]]"]

      # A TCP check: an HTTP one would take the only worker for
      # remote_seconds every few seconds, a share of its capacity.
      check {
        name     = "remote-tcp"
        type     = "tcp"
        interval = "3s"
        timeout  = "2s"
      }
    }

    update {
      max_parallel      = 1
      health_check      = "checks"
      min_healthy_time  = "3s"
      healthy_deadline  = "2m"
      progress_deadline = "3m"
      auto_revert       = false
    }

    restart {
      attempts = 2
      interval = "1m"
      delay    = "2s"
      mode     = "fail"
    }

    reschedule {
      attempts  = 0
      unlimited = false
    }

    task "remote" {
      driver       = "docker"
      kill_timeout = "5s"

      # Its 0.75 s is a wait, so CPU shares are enough, never capped.
      meta {
        orchbench_cores      = "0"
        orchbench_memory_mib = "64"
        orchbench_cpu_mode   = "shares"
        orchbench_role       = "service"
      }

      config {
        image          = [[ var "image" . | quote ]]
        network_mode   = "host"
        cpu_hard_limit = false
        command        = "python3"
        args           = ["/opt/frontier/service/remote.py"]
      }

      env {
        HOST           = "${NOMAD_IP_http}"
        PORT           = "${NOMAD_PORT_http}"
        REMOTE_SECONDS = "[[ var "remote_seconds" . ]]"
        REMOTE_BACKLOG = "[[ var "remote_backlog" . ]]"
      }

      resources {
        cpu    = [[ $support_cpu ]]
        memory = 64
      }
    }
  }

  # The function pool behind /alternate, the study's Lambda
  # (apps/frontier/service/pool.py): one process whose instances are its
  # execution environments.
  group "pool" {
    count = 1

    network {
      mode = "host"
      port "http" {}
    }

    service {
      provider = "consul"
      name     = "[[ $job ]]-pool"
      port     = "http"
      tags     = ["orchbench-internal", "variant-[[ $variant ]]"]

      check {
        name     = "pool-http"
        type     = "http"
        path     = "/healthz"
        interval = "3s"
        timeout  = "2s"
      }
    }

    update {
      max_parallel      = 1
      health_check      = "checks"
      min_healthy_time  = "3s"
      healthy_deadline  = "2m"
      progress_deadline = "3m"
      auto_revert       = false
    }

    restart {
      attempts = 2
      interval = "1m"
      delay    = "2s"
      mode     = "fail"
    }

    reschedule {
      attempts  = 0
      unlimited = false
    }

    task "pool" {
      driver       = "docker"
      kill_timeout = "5s"

      # Lambda gives every instance its own CPU: shares, never capped. A
      # thread per invocation in flight, each with a 512 KiB stack.
      meta {
        orchbench_cores      = "0"
        orchbench_memory_mib = "256"
        orchbench_cpu_mode   = "shares"
        orchbench_role       = "service"
      }

      config {
        image          = [[ var "image" . | quote ]]
        network_mode   = "host"
        cpu_hard_limit = false
        command        = "python3"
        args           = ["/opt/frontier/service/pool.py"]
      }

      env {
        HOST             = "${NOMAD_IP_http}"
        PORT             = "${NOMAD_PORT_http}"
        POOL_SECONDS     = "[[ var "remote_seconds" . ]]"
        POOL_CONCURRENCY = "[[ var "pool_concurrency" . ]]"
        POOL_COLD_START  = "[[ var "pool_cold_start" . ]]"
        POOL_IDLE_REAP   = "[[ var "pool_idle_reap" . ]]"
      }

      resources {
        cpu    = [[ $support_cpu ]]
        memory = 256
      }
    }
  }

  # The study's ELB: the one address the load tool is given, relaying each
  # connection to the next web tier instance in turn (orchbench
  # tcp-balance). Artillery and Locust take one URL; without it they would
  # load one of three instances. The web tier keeps the idle timeout.
  group "entry" {
    count = 1

    network {
      mode = "host"
      port "http" {}
    }

    service {
      provider = "consul"
      name     = "[[ $job ]]"
      port     = "http"
      tags     = ["orchbench", "measured", "variant-[[ $variant ]]"]

      # / through the balancer: passing once a web tier instance answers.
      check {
        name     = "entry-http"
        type     = "http"
        path     = "/"
        interval = "3s"
        timeout  = "2s"
      }
    }

    update {
      max_parallel      = 1
      health_check      = "checks"
      min_healthy_time  = "3s"
      healthy_deadline  = "3m"
      progress_deadline = "4m"
      auto_revert       = false
    }

    restart {
      attempts = 2
      interval = "1m"
      delay    = "2s"
      mode     = "fail"
    }

    reschedule {
      attempts  = 0
      unlimited = false
    }

    task "entry" {
      driver       = "docker"
      kill_timeout = "5s"

      # A managed balancer in the study: CPU shares, never capped, not scaled.
      meta {
        orchbench_cores      = "0"
        orchbench_memory_mib = "128"
        orchbench_cpu_mode   = "shares"
        orchbench_role       = "service"
      }

      config {
        image          = [[ var "entry_image" . | quote ]]
        network_mode   = "host"
        cpu_hard_limit = false
        args           = ["tcp-balance", "--listen", "${NOMAD_IP_http}:${NOMAD_PORT_http}", "--backend", "${WEB_INSTANCES}"]
      }

      # Every web tier instance's host:port (registered, healthy or not: a
      # dead one is skipped by the balancer), an unreachable placeholder
      # before any registers; the task restarts when the set changes, once
      # it has been still for wait.min.
      template {
        destination = "local/web.env"
        env         = true
        change_mode = "restart"
        splay       = "1s"
        wait {
          min = "2s"
          max = "10s"
        }
        data = <<EOT
WEB_INSTANCES={{ range $i, $web := service "[[ $job ]]-web|any" }}{{ if $i }},{{ end }}{{ .Address }}:{{ .Port }}{{ else }}127.0.0.1:1{{ end }}
EOT
      }

      resources {
        cpu    = [[ $support_cpu ]]
        memory = 128
      }
    }
  }

  # The measured web tier: 1 or 3 instances (scale), each sized by the
  # variant, reached through the entry.
  group "[[ $app ]]" {
    count = [[ $size.count ]]

    network {
      mode = "host"
      port "http" {}
    }

    service {
      provider = "consul"
      name     = "[[ $job ]]-web"
      port     = "http"
      tags     = ["orchbench", "web-tier", "variant-[[ $variant ]]"]

      # / alone: a check through /remote would queue behind the load.
      check {
        name     = "[[ $app ]]-http"
        type     = "http"
        path     = "/"
        interval = "3s"
        timeout  = "2s"
      }
    }

    # All instances at once, judged by the Consul check.
    update {
      max_parallel      = [[ $size.count ]]
      health_check      = "checks"
      min_healthy_time  = "3s"
      healthy_deadline  = "3m"
      progress_deadline = "4m"
      auto_revert       = false
    }

    restart {
      attempts = 2
      interval = "1m"
      delay    = "2s"
      mode     = "fail"
    }

    reschedule {
      attempts  = 0
      unlimited = false
    }

    task "[[ $app ]]" {
      driver       = "docker"
      kill_timeout = "5s"

      meta {
        orchbench_cores      = "[[ $size.limit_cores ]]"
        orchbench_memory_mib = "[[ $size.limit_memory ]]"
        orchbench_cpu_mhz    = "[[ $size.cpu ]]"
        orchbench_cpu_mode   = "[[ $size.cpu_mode ]]"
      }

      config {
        image          = [[ var "image" . | quote ]]
        network_mode   = "host"
        cpu_hard_limit = [[ $capped ]]
      }

      env {
        HOST             = "${NOMAD_IP_http}"
        PORT             = "${NOMAD_PORT_http}"
        CACHE_KEYS       = "[[ var "cache_keys" . ]]"
        CACHE_TTL        = "[[ var "cache_ttl" . ]]"
        IDLE_TIMEOUT     = "[[ var "idle_timeout" . ]]"
        UPSTREAM_TIMEOUT = "[[ var "upstream_timeout" . ]]"
      }

      # The upstreams' host:port from Consul (registered, healthy or not).
      # Before one registers an unreachable placeholder renders (its route
      # answers 502 meanwhile), and the task restarts once it does.
      template {
        destination = "local/upstreams.env"
        env         = true
        change_mode = "restart"
        splay       = "1s"
        data        = <<EOT
REMOTE_ADDR=[[ template "frontier.address" (printf "%s-remote" $job) ]]
POOL_ADDR=[[ template "frontier.address" (printf "%s-pool" $job) ]]
REDIS_ADDR=[[ template "frontier.address" (printf "%s-redis" $job) ]]
EOT
      }

      resources {
        cpu = [[ $size.cpu ]]
[[- if gt $size.memory_max 0 ]]
        memory     = [[ $size.memory ]]
        memory_max = [[ $size.memory_max ]]
[[- else ]]
        memory = [[ $size.memory ]]
[[- end ]]
      }
    }
  }
}
