[[- template "taewa.validate" . -]]
[[- $size := dict "ctx" . -]]
[[- template "taewa.sizing" $size -]]
[[- $variant := var "variant" . -]]
[[- $driver := var "driver" . -]]
[[- $as := var "autoscale" . -]]
[[- $entry_cores := float64 (var "entry_cores" .) -]]
[[- $names := dict "ctx" . -]]
[[- template "taewa.names" $names -]]
[[- $svc := $names.service -]]
[[- $web := $names.web -]]
[[- $query := $names.query -]]
job "[[ template "taewa.job_name" . ]]" {
  region      = [[ var "region" . | quote ]]
  datacenters = [[ var "datacenters" . | toStringList ]]
  type        = "service"

  # What the orchbench harness reads back from the job: app identity, the
  # sizing it must verify against the running containers, and how to probe
  # and load the service.
  meta {
    orchbench_app             = "taewa"
    orchbench_variant         = "[[ $variant ]]"
    orchbench_driver          = "[[ $driver ]]"
    orchbench_resource_scale  = "[[ var "resource_scale" . ]]"
    orchbench_count           = "[[ $size.count ]]"
    orchbench_cores           = "[[ $size.limit_cores ]]"
    orchbench_memory_mib      = "[[ $size.limit_memory ]]"
    orchbench_reserved_cores  = "[[ $size.cores ]]"
    orchbench_reserved_mib    = "[[ $size.memory ]]"
    orchbench_cpu_mhz         = "[[ $size.cpu ]]"
    orchbench_cpu_mode        = "[[ $size.cpu_mode ]]"
    orchbench_service         = "[[ template "taewa.service_name" . ]]"
    orchbench_probe_path      = "/?n=[[ var "difficulty" . ]]"
    orchbench_probe_min_bytes = "44"
    orchbench_probe_regex     = "^The result of this run is :  "
    orchbench_load_path       = "/?n=[[ var "difficulty" . ]]"
[[- if $as.enabled ]]
    # the measured service is the entry; the autoscaler sizes the instances
    # (its policy is the group's scaling block, which the harness reads)
    orchbench_scaled_service     = "[[ $web ]]"
[[- end ]]
  }
[[- if $as.enabled ]]

  # The balancer the load reaches: it learns the instances that pass their
  # health check from a file Nomad's template rewrites as the autoscaler
  # adds and removes them, so scaling never restarts it (a restart would
  # drop the connections in flight).
  group "entry" {
    count = 1

    network {
      mode = "host"
      port "http" {}
    }

    service {
      provider = "consul"
      name     = "[[ $svc ]]"
      port     = "http"
      tags     = ["orchbench", "measured", "variant-[[ $variant ]]"]

      check {
        name     = "entry-http"
        type     = "http"
        path     = "/?n=1"
        interval = "2s"
        timeout  = "1s"
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

    task "entry" {
      driver       = "docker"
      kill_timeout = "5s"

      # A managed balancer, as a cloud's: CPU shares, never capped, not
      # scaled; or, on nodes with a CPU budget, a quota of entry_cores.
      meta {
        orchbench_cores      = "[[ $entry_cores ]]"
        orchbench_memory_mib = "128"
        orchbench_cpu_mode   = "[[ if gt $entry_cores 0.0 ]]quota[[ else ]]shares[[ end ]]"
        orchbench_role       = "service"
      }

      config {
        image          = [[ var "entry_image" . | quote ]]
        network_mode   = "host"
        cpu_hard_limit = [[ gt $entry_cores 0.0 ]]
        args           = ["tcp-balance", "--listen", "${NOMAD_IP_http}:${NOMAD_PORT_http}", "--backend", "${WEB_INSTANCES}", "--backends-file", "/local/backends"]
      }

      # The instances when the entry starts; the file below supersedes it.
      template {
        destination = "local/web.env"
        env         = true
        change_mode = "noop"
        data        = <<EOT
WEB_INSTANCES={{ range $i, $web := service "[[ $web ]]|any" }}{{ if $i }},{{ end }}{{ .Address }}:{{ .Port }}{{ else }}127.0.0.1:1{{ end }}
EOT
      }

      # Every instance passing its check, one per line, rewritten as they change.
      template {
        destination = "local/backends"
        change_mode = "noop"
        data        = <<EOT
{{ range service "[[ $web ]]" }}{{ .Address }}:{{ .Port }}
{{ end }}
EOT
      }

      resources {
[[- if gt $entry_cores 0.0 ]]
        cpu    = [[ round (mulf $entry_cores (var "mhz_per_core" .)) 0 | int ]]
[[- else ]]
        cpu    = [[ max 20 (round (mulf 0.1 (var "mhz_per_core" .)) 0 | int) ]]
[[- end ]]
        memory = 128
      }
    }
  }
[[- end ]]

  group "taewa" {
    count = [[ $size.count ]]

    network {
[[- if eq $driver "docker" ]]
      mode = "bridge"

      port "http" {
        to = 8080
      }
[[- else ]]
      port "http" {}
[[- end ]]
    }

    service {
      provider = "consul"
      name     = "[[ $web ]]"
      port     = "http"
      tags     = ["orchbench", "variant-[[ $variant ]]"]

      check {
        name     = "taewa-http"
        type     = "http"
        path     = "/?n=1"
        interval = "2s"
        timeout  = "1s"
      }
    }

    # Roll all instances at once and judge health by the Consul check: a
    # benchmark wants the new shape quickly and never a slow canary dance.
[[- if $as.enabled ]]

    # The Nomad Autoscaler's policy (jobs/nomad-autoscaler.nomad.tpl runs it):
    # the mean CPU use of the instances, as a share of their reservation,
    # held at target by the target-value strategy.
    scaling {
      enabled = true
      min     = [[ $as.min ]]
      max     = [[ $as.max ]]

      policy {
        cooldown            = [[ $as.cooldown | quote ]]
        evaluation_interval = [[ $as.evaluation | quote ]]

        check "cpu" {
          source       = "prometheus"
          query        = [[ $query | quote ]]
          query_window = "30s"

          strategy "target-value" {
            target = [[ mulf $as.target_cpu 100 ]]
          }
        }
      }
    }
[[- end ]]

    update {
      max_parallel      = [[ $size.count ]]
      health_check      = "checks"
      min_healthy_time  = "3s"
      healthy_deadline  = "2m"
      progress_deadline = "3m"
      auto_revert       = false
    }

    # A crashing benchmark target should fail visibly, not flap: two quick
    # local restarts, then the allocation stays failed and is not
    # rescheduled elsewhere, so a measurement never silently moves nodes.
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

    task "taewa" {
      driver       = "[[ $driver ]]"
      kill_timeout = "5s"

      config {
[[- if eq $driver "docker" ]]
        image          = [[ var "image" . | quote ]]
        ports          = ["http"]
        cpu_hard_limit = [[ ne $variant "unlimited" ]]
[[- else ]]
        command = "node"
        args    = ["local/server.js"]
[[- end ]]
      }
[[- if ne $driver "docker" ]]

      # The source travels inside the job (no host bind mount); the odd
      # delimiters keep consul-template away from the JavaScript, and "$${"
      # keeps HCL from interpolating its template literals.
      template {
        destination     = "local/server.js"
        left_delimiter  = "[%%"
        right_delimiter = "%%]"
        data            = <<EOT
[[ fileContents (var "app_source" .) | replace "${" "$${" | replace "%{" "%%{" ]]
EOT
      }
[[- end ]]

      env {
[[- if eq $driver "docker" ]]
        PORT = "8080"
[[- else ]]
        PORT = "${NOMAD_PORT_http}"
[[- end ]]
      }

      resources {
[[- if eq $size.cpu_mode "cpuset" ]]
        cores  = [[ int $size.cores ]]
[[- else ]]
        cpu    = [[ $size.cpu ]]
[[- end ]]
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
