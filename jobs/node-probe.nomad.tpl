# The node probe (docs/node-probe.md) on every Nomad client: the harness
# reads each task's limits, CPU, process and acceptor through the probe of
# the task's node, and finds the probes from this job's allocations (the
# node's name and the address of the "probe" port).
#
# raw_exec, not docker: the probe must see the node's whole process table,
# its cgroup tree and its network namespaces. The docker driver gives the
# host's PID namespace (pid_mode) but its plugin config here refuses host
# bind mounts (volumes disabled, for every job) and added capabilities
# beyond allow_caps (the probe needs SYS_PTRACE for other processes' fd
# links and SYS_ADMIN to enter a namespace), and privileged containers fail
# on this kernel (no CAP_SYS_RESOURCE in the bounding set). A raw_exec task
# is a process of the node, like its Nomad agent.
#
# The binary is the static orchbench (the orchbench image's); variables:
# node_probe_binary (cluster/jobs.sh passes NODE_PROBE_BIN, default the
# checkout's .tools/bin/orchbench) and node_probe (jobs/cluster.vars.yml).
job "node-probe" {
  type        = "system"
  datacenters = ["[[ .datacenter ]]"]
  # before the application jobs: a node's tasks cannot be judged without it
  priority = 90

  meta {
    # a new binary is a new version of the job: its allocations restart
    binary_sha256 = "[[ .node_probe_sum ]]"
  }

  group "node-probe" {
    network {
      # on the node's fingerprinted address: 127.0.0.1 on the embedded
      # cluster (network_interface "lo"), the node's own on emulated nodes
      port "probe" {
        static = [[ .node_probe.port ]]
      }
    }

    # GET /metrics: every task container's CPU time from its cgroup, which
    # VictoriaMetrics scrapes (Nomad-native services tagged "metrics") for
    # the Nomad Autoscaler's policies
    service {
      provider = "nomad"
      name     = "node-probe"
      port     = "probe"
      tags     = ["orchbench", "metrics"]
    }

    restart {
      attempts = 10
      interval = "5m"
      delay    = "2s"
      mode     = "delay"
    }

    task "node-probe" {
      driver = "raw_exec"

      config {
        command = "[[ .node_probe_binary ]]"
        args = [
          "node-probe",
          "--listen", "${NOMAD_ADDR_probe}",
          "--name", "${node.unique.name}",
[[- if .node_probe.token_file ]]
          "--token-file", "[[ .node_probe.token_file ]]",
[[- end ]]
        ]
      }

      resources {
        cpu    = [[ .node_probe.cpu_mhz ]]
        memory = [[ .node_probe.memory_mib ]]
      }
    }
  }
}
