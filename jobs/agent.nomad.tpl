# The node agent: the OpenTelemetry Collector built for orchbench
# (cluster/otelcol/, `cluster/tools.sh otelcol`) on every client node. It tails
# every allocation's task logs from Nomad's data directory into VictoriaLogs
# (with the job, group, task and allocation as fields), sends the node's host
# metrics to VictoriaMetrics, and queues on disk what either cannot take yet.
# raw_exec: it must read the allocation directories Nomad owns. Its CPU and
# memory are measured in every step like a task's (the sweep's agent cost).
# A levant template (variables: jobs/cluster.vars.yml):
#   cluster/jobs.sh render && nomad job run .state/jobs/agent.nomad.hcl
job "orchbench-agent" {
  type        = "system"
  datacenters = ["[[ .datacenter ]]"]

  meta {
    version = "[[ .versions.otelcol ]]"
  }

  group "agent" {
    network {
      port "telemetry" {
        static = [[ .agent.telemetry_port ]]
      }
      port "health" {
        static = [[ .agent.health_port ]]
      }
    }

    # Not tagged "metrics": the agent pushes its own metrics (records
    # received, sent, queued, refused) to VictoriaMetrics itself.
    service {
      name     = "orchbench-agent"
      port     = "telemetry"
      provider = "consul"
      tags     = ["orchbench"]

      check {
        type     = "http"
        port     = "health"
        path     = "/"
        interval = "5s"
        timeout  = "1s"
      }
    }

    restart {
      attempts = 5
      interval = "5m"
      delay    = "2s"
      mode     = "delay"
    }

    task "otelcol" {
      driver = "raw_exec"

      config {
        command = "[[ .root ]]/.tools/bin/otelcol-orchbench"
[[- if .remote.enabled ]]
        # the remote sinks' address, CA and password over the defaults (collector config files merge)
        args    = ["--config=[[ .root ]]/cluster/otelcol/agent.yaml", "--config=[[ .remote.agent_config ]]"]
[[- else ]]
        args    = ["--config=[[ .root ]]/cluster/otelcol/agent.yaml"]
[[- end ]]
      }

      env {
[[- if .remote.enabled ]]
        NOMAD_DATA_DIR       = "[[ .remote.nomad_data_dir ]]"
        # the host's own agent, whose certificate names its address
        NOMAD_ADDR           = "https://${attr.unique.network.ip-address}:4646"
        NOMAD_CACERT         = "[[ .remote.nomad_ca ]]"
        NOMAD_TOKEN_FILE     = "[[ .remote.nomad_token_file ]]"
        VICTORIALOGS_URL     = "https://[[ .remote.address ]]:[[ .victorialogs.port ]]"
        VICTORIAMETRICS_URL  = "https://[[ .remote.address ]]:[[ .victoriametrics.port ]]"
[[- else ]]
        NOMAD_DATA_DIR       = "[[ .root ]]/.state/nomad/data"
        NOMAD_ADDR           = "http://127.0.0.1:4646"
        NOMAD_CACERT         = ""
        NOMAD_TOKEN_FILE     = ""
        VICTORIALOGS_URL     = "http://127.0.0.1:[[ .victorialogs.port ]]"
        VICTORIAMETRICS_URL  = "http://127.0.0.1:[[ .victoriametrics.port ]]"
[[- end ]]
        NODE_NAME            = "${node.unique.name}"
        OTELCOL_STORAGE_DIR  = "[[ .root ]]/[[ .agent.data_dir ]]"
        OTELCOL_METRICS_HOST = "127.0.0.1"
        OTELCOL_METRICS_PORT = "[[ .agent.telemetry_port ]]"
        OTELCOL_HEALTH_ADDR  = "127.0.0.1:[[ .agent.health_port ]]"
      }

      # SIGTERM lets it flush what it holds into the disk queue
      kill_timeout = "20s"

      resources {
        cpu    = [[ .agent.cpu_mhz ]]
        memory = [[ .agent.memory_mib ]]
      }
    }
  }
}
