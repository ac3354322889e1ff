# VictoriaMetrics single-node for the embedded cluster: stores scraped cluster
# metrics, the node agent's host metrics and the results the harness pushes.
# raw_exec because it is infrastructure, not a measured service, and its data
# must survive restarts. A levant template (variables: jobs/cluster.vars.yml):
#   cluster/jobs.sh render && nomad job run .state/jobs/victoriametrics.nomad.hcl
job "victoriametrics" {
  type        = "service"
  datacenters = ["[[ .datacenter ]]"]

  meta {
    version = "[[ .versions.victoriametrics ]]"
  }

  group "victoriametrics" {
[[- if or .remote.enabled .infra.client_node_only ]]
    # on the client host, whose address it listens on
    constraint {
      attribute = "${node.class}"
      value     = "client"
    }
[[- end ]]
    network {
      port "http" {
        static = [[ .victoriametrics.port ]]
      }
    }

    service {
      name     = "victoriametrics"
      port     = "http"
      provider = "consul"
[[- if .remote.enabled ]]
      # its /metrics wants the password: not scraped as a service
      tags     = ["orchbench"]
[[- else ]]
      tags     = ["orchbench", "metrics"]
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

    task "victoria-metrics" {
      driver = "raw_exec"

      config {
        command = "[[ .root ]]/.tools/bin/victoria-metrics"
        args = [
[[- if .remote.enabled ]]
          "-httpListenAddr=[[ .remote.address ]]:[[ .victoriametrics.port ]]",
          "-tls", "-tlsCertFile=[[ .remote.tls_cert ]]", "-tlsKeyFile=[[ .remote.tls_key ]]",
          "-httpAuth.username=orchbench", "-httpAuth.password=file://[[ .remote.password_file ]]",
[[- else ]]
          "-httpListenAddr=[[ .infra.address ]]:[[ .victoriametrics.port ]]",
[[- end ]]
          "-storageDataPath=[[ .root ]]/[[ .victoriametrics.data_dir ]]",
          "-retentionPeriod=[[ .victoriametrics.retention ]]",
          "-promscrape.config=${NOMAD_TASK_DIR}/scrape.yml",
          # identical samples pushed twice (results push after a partial push) collapse into one
          "-dedup.minScrapeInterval=1ms",
          # results pushed by the harness are queryable at once instead of after 30 s
          "-search.latencyOffset=1s",
          # the node agent's OTLP metrics get Prometheus names (system_cpu_time_seconds_total,
          # label host_name) that PromQL and the dashboards can select without quoting
          "-opentelemetry.usePrometheusNaming",
          "-vmui.customDashboardsPath=[[ .root ]]/dashboards",
        ]
      }

      template {
        destination = "local/scrape.yml"
        data        = <<-YAML
          global:
            scrape_interval: [[ .victoriametrics.scrape_interval ]]
          scrape_configs:
[[- if .remote.enabled ]]
            # a remote cluster: every API with TLS and a read-only token
            - job_name: nomad
              metrics_path: /v1/metrics
              params: { format: [prometheus] }
              scheme: https
              tls_config: { ca_file: [[ .remote.nomad_ca ]] }
              bearer_token_file: [[ .remote.nomad_token_file ]]
              consul_sd_configs:
                - server: 127.0.0.1:8500
                  services: [nomad-client, nomad]
                  bearer_token_file: [[ .remote.consul_token_file ]]
              relabel_configs:
                # Nomad registers RPC and serf too: its metrics are on the http port
                - source_labels: [__meta_consul_service_port]
                  regex: "4646"
                  action: keep
            - job_name: consul
              metrics_path: /v1/agent/metrics
              params: { format: [prometheus] }
              scheme: https
              tls_config:
                ca_file: [[ .remote.consul_ca ]]
                cert_file: [[ .remote.consul_cert ]]
                key_file: [[ .remote.consul_key ]]
              bearer_token_file: [[ .remote.consul_token_file ]]
              consul_sd_configs:
                - server: 127.0.0.1:8500
                  services: [consul]
                  bearer_token_file: [[ .remote.consul_token_file ]]
              relabel_configs:
                - source_labels: [__meta_consul_address]
                  target_label: __address__
                  replacement: "$1:8501"
            - job_name: consul-services
              consul_sd_configs:
                - server: 127.0.0.1:8500
                  bearer_token_file: [[ .remote.consul_token_file ]]
              relabel_configs:
                - source_labels: [__meta_consul_tags]
                  regex: ".*,metrics,.*"
                  action: keep
                - source_labels: [__meta_consul_service]
                  target_label: service
[[- else ]]
            # the Nomad agent (server and client in one) registers itself in Consul
            - job_name: nomad
              metrics_path: /v1/metrics
              params: { format: [prometheus] }
              consul_sd_configs:
                - server: [[ .infra.address ]]:8500
                  services: [nomad-client]
            # Consul registers its servers on the RPC port; its metrics are on the HTTP port
            - job_name: consul
              metrics_path: /v1/agent/metrics
              params: { format: [prometheus] }
              consul_sd_configs:
                - server: [[ .infra.address ]]:8500
                  services: [consul]
              relabel_configs:
                - source_labels: [__meta_consul_address]
                  target_label: __address__
                  replacement: "$1:8500"
            # every Consul service tagged "metrics"
            - job_name: consul-services
              consul_sd_configs:
                - server: [[ .infra.address ]]:8500
              relabel_configs:
                - source_labels: [__meta_consul_tags]
                  regex: ".*,metrics,.*"
                  action: keep
                - source_labels: [__meta_consul_service]
                  target_label: service
            # every Nomad-native service tagged "metrics"
            - job_name: nomad-services
              nomad_sd_configs:
                - server: http://[[ .infra.address ]]:4646
              relabel_configs:
                - source_labels: [__meta_nomad_tags]
                  regex: ".*,metrics,.*"
                  action: keep
                - source_labels: [__meta_nomad_service]
                  target_label: service
[[- end ]]
          YAML
      }

      resources {
        cpu    = [[ .victoriametrics.cpu_mhz ]]
        memory = [[ .victoriametrics.memory_mib ]]
      }
    }
  }
}
