package remote

import (
	"fmt"
	"strings"
)

// Where hashi-up puts each product on a host; the uploaded certificates
// land beside the configuration under their own file names.
const (
	consulConfigDir = "/etc/consul.d"
	nomadConfigDir  = "/etc/nomad.d"
)

// agentHost is what one host's agent configuration needs.
type agentHost struct {
	Host
	Index     int // among the hosts of its role, from 1
	MemoryMiB int // the host's budget when its cgroup is smaller than its RAM; 0 leaves Nomad's fingerprint
}

func quoteList(items []string, suffix string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s+suffix)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func serverAddrs(inv *Inventory) []string {
	var a []string
	for _, h := range inv.Servers() {
		a = append(a, h.Address)
	}
	return a
}

// consulConfig is the agent's configuration: TLS on every RPC with the
// server's name checked, HTTPS on the host's address and plain HTTP on
// loopback only (for the host's own Nomad agent), gossip encrypted, ACLs
// denying by default. Servers carry the management token as
// initial_management, so no bootstrap call has to run, and run again.
func consulConfig(inv *Inventory, h agentHost, s *Secrets) string {
	var b strings.Builder
	fmt.Fprintf(&b, `datacenter           = %q
node_name            = %q
data_dir             = "/opt/consul"
bind_addr            = %q
advertise_addr       = %q
client_addr          = "127.0.0.1"
retry_join           = %s
encrypt              = %q
log_level            = "WARN"
# the checkpoint service is not an address this cluster may talk to
disable_update_check = true

addresses {
  https = "127.0.0.1 %s"
}
ports {
  http  = 8500
  https = 8501
  grpc  = -1
}

tls {
  defaults {
    ca_file         = "%s/ca.pem"
    cert_file       = "%s/%s.pem"
    key_file        = "%s/%s-key.pem"
    verify_outgoing = true
  }
  internal_rpc {
    verify_incoming        = true
    verify_server_hostname = true
  }
  # HTTPS answers only who shows a certificate of this CA (the harness's
  # is made with the agents'): an anonymous request is refused in the
  # handshake, not just given an empty, ACL-filtered answer
  https {
    verify_incoming = true
  }
}

acl {
  enabled                  = true
  default_policy           = "deny"
  enable_token_persistence = true
  tokens {
    agent = %q
`, inv.Datacenter, h.Name, h.Address, h.Address, quoteList(serverAddrs(inv), ""), s.ConsulGossip,
		h.Address, consulConfigDir, consulConfigDir, h.Name, consulConfigDir, h.Name, s.ConsulAgent)
	if h.Role == RoleServer {
		fmt.Fprintf(&b, "    initial_management = %q\n", s.ConsulManagement)
	}
	b.WriteString("  }\n}\n")
	if h.Role == RoleServer {
		fmt.Fprintf(&b, "\nserver           = true\nbootstrap_expect = %d\nui_config {\n  enabled = true\n}\n", len(inv.Servers()))
	}
	return b.String()
}

// nodeMeta is what placement constrains on, as on the emulated nodes
// (cluster/nodes-agents.sh node_meta): the role, a worker's index, and
// whether the host holds the front end (worker 1 does).
func nodeMeta(h agentHost) [][2]string {
	m := [][2]string{{"orchbench.role", string(h.Role)}}
	frontend := "false"
	if h.Role == RoleWorker {
		m = append(m, [2]string{"orchbench.worker", fmt.Sprint(h.Index)})
		if h.Index == 1 {
			frontend = "true"
		}
	}
	return append(m, [2]string{"orchbench.frontend", frontend}, [2]string{"orchbench.link_delay", "0"})
}

// nomadConfig: servers are servers only (study 002's managers run no
// application); workers and the client are clients, told apart by
// node_class as on the emulated nodes. TLS on HTTP and RPC with the
// server's name checked, gossip encrypted, ACLs on.
func nomadConfig(inv *Inventory, h agentHost, s *Secrets, registry string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `datacenter = %q
name       = %q
data_dir   = "/opt/nomad"
bind_addr  = %q
log_level  = "INFO"
# the checkpoint service is not an address this cluster may talk to
disable_update_check = true

advertise {
  http = %q
  rpc  = %q
  serf = %q
}

acl {
  enabled = true
}

tls {
  http                   = true
  rpc                    = true
  ca_file                = "%s/ca.pem"
  cert_file              = "%s/%s.pem"
  key_file               = "%s/%s-key.pem"
  verify_server_hostname = true
  verify_https_client    = false
}

consul {
  address = "127.0.0.1:8500"
  token   = %q
}

# what VictoriaMetrics scrapes (/v1/metrics?format=prometheus), as on the
# embedded cluster
telemetry {
  prometheus_metrics         = true
  publish_allocation_metrics = true
  publish_node_metrics       = true
  disable_hostname           = true
}
`, inv.Datacenter, h.Name, h.Address, h.Address, h.Address, h.Address,
		nomadConfigDir, nomadConfigDir, h.Name, nomadConfigDir, h.Name, s.ConsulNomad)
	if h.Role == RoleServer {
		fmt.Fprintf(&b, `
server {
  enabled          = true
  bootstrap_expect = %d
  encrypt          = %q
  server_join {
    retry_join = %s
  }
  # memory_max (the unlimited variant) needs it, as on the embedded cluster
  default_scheduler_config {
    memory_oversubscription_enabled = true
  }
}
`, len(inv.Servers()), s.NomadGossip, quoteList(serverAddrs(inv), ""))
		return b.String()
	}
	fmt.Fprintf(&b, `
client {
  enabled    = true
  node_class = %q
  servers    = %s
  # Debian's containernetworking-plugins, for bridge-mode groups
  cni_path   = "/usr/lib/cni"
`, h.Role, quoteList(serverAddrs(inv), ":4647"))
	if h.MemoryMiB > 0 {
		fmt.Fprintf(&b, "  # the host's own memory budget (its cgroup), below the RAM Nomad would fingerprint\n  memory_total_mb = %d\n", h.MemoryMiB)
	}
	// what the host's own agents and dockerd take, as the emulated nodes reserve
	b.WriteString("  reserved {\n    memory = 256\n  }\n")
	b.WriteString("  meta {\n")
	for _, kv := range nodeMeta(h) {
		fmt.Fprintf(&b, "    %q = %q\n", kv[0], kv[1])
	}
	fmt.Fprintf(&b, `  }
  options = {
    "fingerprint.denylist" = "env_aws,env_gce,env_azure,env_digitalocean"
  }
}

# the node probe (jobs/node-probe.nomad.tpl) runs as a process of the host
plugin "raw_exec" {
  config {
    enabled = true
  }
}

plugin "docker" {
  config {
    infra_image = "%s/orchbench/pause:local"
    volumes {
      enabled = false
    }
  }
}
`, registry)
	return b.String()
}
