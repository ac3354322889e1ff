[[- template "raupi.validate" . -]]
[[- $size := dict "ctx" . -]]
[[- template "raupi.sizing" $size -]]
[[- $variant := var "variant" . -]]
[[- $driver := var "driver" . -]]
job "[[ template "raupi.job_name" . ]]" {
  region      = [[ var "region" . | quote ]]
  datacenters = [[ var "datacenters" . | toStringList ]]
  type        = "service"

  # What the orchbench harness reads back from the job: app identity, the
  # sizing it must verify against the running containers, and how to probe
  # and load the service.
  meta {
    orchbench_app             = "raupi"
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
    orchbench_service         = "[[ template "raupi.service_name" . ]]"
    orchbench_probe_path      = "/?n=[[ var "difficulty" . ]]"
    orchbench_probe_min_bytes = "44"
    orchbench_probe_regex     = "^The result of this run is :  [0-9][0-9.e-]*$"
    orchbench_load_path       = "/?n=[[ var "difficulty" . ]]"
  }

  group "raupi" {
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
      name     = "[[ template "raupi.service_name" . ]]"
      port     = "http"
      tags     = ["orchbench", "variant-[[ $variant ]]"]

      check {
        name     = "raupi-http"
        type     = "http"
        path     = "/?n=1"
        interval = "2s"
        timeout  = "1s"
      }
    }

    # Roll all instances at once and judge health by the Consul check: a
    # benchmark wants the new shape quickly and never a slow canary dance.
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

    task "raupi" {
      driver       = "[[ $driver ]]"
      kill_timeout = "5s"

      config {
[[- if eq $driver "docker" ]]
        image          = [[ var "image" . | quote ]]
        ports          = ["http"]
        cpu_hard_limit = [[ ne $variant "unlimited" ]]
[[- else ]]
        command = "/usr/bin/python3"
        args    = ["local/server.py"]
[[- end ]]
      }
[[- if ne $driver "docker" ]]

      # The source travels inside the job (no host bind mount); the odd
      # delimiters keep consul-template away from the Python, and "$${" and
      # "%%{" keep HCL from interpolating.
      template {
        destination     = "local/server.py"
        left_delimiter  = "[%%"
        right_delimiter = "%%]"
        data            = <<EOT
[[ fileContents (var "app_source" .) | replace "${" "$${" | replace "%{" "%%{" ]]
EOT
      }
[[- end ]]

      env {
        PYTHONUNBUFFERED        = "1"
        PYTHONDONTWRITEBYTECODE = "1"
[[- if eq $driver "docker" ]]
        PORT = "8080"
[[- else ]]
        PORT = "${NOMAD_PORT_http}"
        # Flask and Waitress, vendored on the host by cluster/tools.sh apps:
        # the exec chroot maps the host's /usr/local/lib/orchbench (cluster/embedded.sh)
        PYTHONPATH = "[[ var "vendor_dir" . ]]/site"
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
