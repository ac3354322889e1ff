# VictoriaLogs single-node for the embedded cluster: every task's log lines,
# shipped by the node agent (jobs/agent.nomad.tpl), queried with LogsQL or in
# its web UI at /select/vmui/. raw_exec for the reasons VictoriaMetrics is;
# loopback only. A levant template (variables: jobs/cluster.vars.yml):
#   cluster/jobs.sh render && nomad job run .state/jobs/victorialogs.nomad.hcl
job "victorialogs" {
  type        = "service"
  datacenters = ["[[ .datacenter ]]"]

  meta {
    version = "[[ .versions.victorialogs ]]"
  }

  group "victorialogs" {
[[- if .remote.enabled ]]
    constraint {
      attribute = "${node.class}"
      value     = "client"
    }
[[- end ]]
    network {
      port "http" {
        static = [[ .victorialogs.port ]]
      }
    }

    # tagged "metrics": VictoriaMetrics scrapes its /metrics (ingestion rates, storage)
    service {
      name     = "victorialogs"
      port     = "http"
      provider = "consul"
[[- if .remote.enabled ]]
      tags     = ["orchbench", "logs"]
[[- else ]]
      tags     = ["orchbench", "metrics", "logs"]
[[- end ]]

      check {
        type     = "http"
        path     = "/health"
[[- if .remote.enabled ]]
        protocol        = "https"
        tls_skip_verify = true
[[- end ]]
        interval = "2s"
        timeout  = "1s"
      }
    }

    restart {
      attempts = 3
      interval = "1m"
      delay    = "2s"
      mode     = "fail"
    }

    task "victoria-logs" {
      driver = "raw_exec"

      config {
        command = "[[ .root ]]/.tools/bin/victoria-logs"
        args = [
[[- if .remote.enabled ]]
          "-httpListenAddr=[[ .remote.address ]]:[[ .victorialogs.port ]]",
          "-tls", "-tlsCertFile=[[ .remote.tls_cert ]]", "-tlsKeyFile=[[ .remote.tls_key ]]",
          "-httpAuth.username=orchbench", "-httpAuth.password=file://[[ .remote.password_file ]]",
[[- else ]]
          "-httpListenAddr=127.0.0.1:[[ .victorialogs.port ]]",
[[- end ]]
          "-storageDataPath=[[ .root ]]/[[ .victorialogs.data_dir ]]",
          "-retentionPeriod=[[ .victorialogs.retention ]]",
        ]
      }

      # SIGINT flushes its in-memory parts to disk before it exits
      kill_signal  = "SIGINT"
      kill_timeout = "20s"

      resources {
        cpu    = [[ .victorialogs.cpu_mhz ]]
        memory = [[ .victorialogs.memory_mib ]]
      }
    }
  }
}
