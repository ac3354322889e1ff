# The Nomad Autoscaler (issue 29): evaluates every job's scaling block and
# scales its group through Nomad. Its metric source is VictoriaMetrics'
# Prometheus API, which scrapes Nomad's per-allocation CPU series, so the
# autoscaler and the harness read the same numbers. raw_exec like the other
# infrastructure: not a measured service.
#   cluster/jobs.sh render && nomad job run .state/jobs/nomad-autoscaler.nomad.hcl
job "nomad-autoscaler" {
  type        = "service"
  datacenters = ["[[ .datacenter ]]"]

  meta {
    version = "[[ .versions.nomad_autoscaler ]]"
  }

  group "autoscaler" {
[[- if or .remote.enabled .infra.client_node_only ]]
    constraint {
      attribute = "${node.class}"
      value     = "client"
    }
[[- end ]]
    network {
      port "http" {
        static = [[ .autoscaler.port ]]
      }
    }

    service {
      name     = "nomad-autoscaler"
      port     = "http"
      provider = "consul"
      tags     = ["orchbench"]

      check {
        type     = "http"
        path     = "/v1/health"
        interval = "5s"
        timeout  = "2s"
      }
    }

    restart {
      attempts = 3
      interval = "1m"
      delay    = "2s"
      mode     = "fail"
    }

    task "autoscaler" {
      driver = "raw_exec"

      config {
        command = "[[ .root ]]/.tools/bin/nomad-autoscaler"
        args    = ["agent", "-config", "${NOMAD_TASK_DIR}/agent.hcl"]
      }

      template {
        destination = "local/agent.hcl"
        data        = <<-HCL
          log_level  = "INFO"
          # every plugin it uses is built in
          plugin_dir = "{{ env "NOMAD_TASK_DIR" }}/plugins"

          http {
            bind_address = "[[ if .remote.enabled ]][[ .remote.address ]][[ else ]][[ .infra.address ]][[ end ]]"
            bind_port    = [[ .autoscaler.port ]]
          }

          nomad {
            address = "[[ .autoscaler.nomad_address ]]"
          }

          policy {
            default_cooldown            = "30s"
            default_evaluation_interval = "10s"
          }

          apm "prometheus" {
            driver = "prometheus"
            config = {
              address = "[[ .autoscaler.metrics_address ]]"
            }
          }

          strategy "target-value" {
            driver = "target-value"
          }
        HCL
      }

      resources {
        cpu    = [[ .autoscaler.cpu_mhz ]]
        memory = [[ .autoscaler.memory_mib ]]
      }
    }
  }
}
