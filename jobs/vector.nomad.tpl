# The node agent with Vector instead of the OpenTelemetry Collector, for nodes
# that have a `vector` binary (cluster/embedded.sh deploys this template
# instead of agent.nomad.tpl when `vector` is on the PATH). Vector is on none
# of the package registries this project can reach, so this file has never
# run here: it is kept small, and the collector is the tested agent.
# Differences from the collector: the job and group are not looked up in
# Nomad (Vector has no Nomad enrichment): lines carry the allocation ID and
# task, from which `nomad alloc status` gives the job; no error counter.
# Same job name, ports and data directory, so the sweep measures and pauses it
# like the collector. A levant template (variables: jobs/cluster.vars.yml):
#   cluster/jobs.sh render && nomad job run .state/jobs/vector.nomad.hcl
job "orchbench-agent" {
  type        = "system"
  datacenters = ["[[ .datacenter ]]"]

  group "agent" {
    network {
      port "telemetry" {
        static = [[ .agent.telemetry_port ]]
      }
    }

    task "vector" {
      driver = "raw_exec"

      config {
        command = "vector"
        args    = ["--config", "${NOMAD_TASK_DIR}/vector.yaml"]
      }

      template {
        destination = "local/vector.yaml"
        data        = <<-YAML
          data_dir: [[ .root ]]/[[ .agent.data_dir ]]/vector
          sources:
            task_logs:
              type: file
              include:
                - [[ .root ]]/.state/nomad/data/alloc/*/alloc/logs/*.stdout.*
                - [[ .root ]]/.state/nomad/data/alloc/*/alloc/logs/*.stderr.*
              read_from: beginning
            host:
              type: host_metrics
              scrape_interval_secs: 5
            own:
              type: internal_metrics
          transforms:
            fields:
              type: remap
              inputs: [task_logs]
              source: |
                parts = parse_regex!(.file, r'/alloc/(?P<alloc>[0-9a-f-]{36})/alloc/logs/(?P<task>.+)\.(?P<stream>stdout|stderr)\.\d+$')
                ."nomad.alloc_id" = parts.alloc
                ."nomad.task" = parts.task
                ."log.stream" = parts.stream
                ts, err = parse_timestamp(slice!(.message, 0, 24), "%+")
                if err == null { .timestamp = ts }
          sinks:
            victorialogs:
              type: elasticsearch
              inputs: [fields]
              endpoints: ["http://127.0.0.1:[[ .victorialogs.port ]]/insert/elasticsearch/"]
              api_version: v8
              compression: gzip
              query:
                _msg_field: message
                _time_field: timestamp
                _stream_fields: nomad.alloc_id,nomad.task,log.stream
              buffer:
                type: disk
                max_size: [[ .agent.queue_mib ]]000000
                when_full: block
            victoriametrics:
              type: prometheus_remote_write
              inputs: [host]
              endpoint: http://127.0.0.1:[[ .victoriametrics.port ]]/api/v1/write
            telemetry:
              type: prometheus_exporter
              inputs: [own]
              address: 127.0.0.1:[[ .agent.telemetry_port ]]
          YAML
      }

      kill_timeout = "20s"

      resources {
        cpu    = [[ .agent.cpu_mhz ]]
        memory = [[ .agent.memory_mib ]]
      }
    }
  }
}
