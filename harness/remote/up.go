package remote

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const dialTimeout = 15 * time.Second

// Options say where the pinned tools are.
type Options struct {
	// Bin holds the pinned consul, nomad and hashi-up (.tools/bin).
	Bin string
	// ConsulVersion and NomadVersion are the pinned versions (v1.22.3).
	ConsulVersion, NomadVersion string
	// Root is the checkout (cluster/jobs.sh, jobs/).
	Root string
	// Orchbench is the binary the node probes run (.tools/bin/orchbench).
	Orchbench string
	// Cache holds downloaded Debian packages (default ~/.cache/orchbench).
	Cache string
	Out   io.Writer
}

// HashiUp is the hashi-up binary's path.
func (o Options) hashiUp() string { return filepath.Join(o.Bin, "hashi-up") }

// Summary is what one run of Up did.
type Summary struct {
	// Changed lists "host: step what" for each change; empty when the
	// cluster was as the inventory says already.
	Changed []string
	// EnvFile holds the exports that point orchbench at the cluster.
	EnvFile string
}

// Up brings the inventory's cluster up, or checks that it is up: a second
// run with the same inventory changes nothing and says so.
func Up(ctx context.Context, inv *Inventory, opts Options) (*Summary, error) {
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	// the tls commands run in directories of their own
	if abs, err := filepath.Abs(opts.Bin); err == nil {
		opts.Bin = abs
	}
	for _, tool := range []string{"consul", "nomad", "hashi-up"} {
		if _, err := os.Stat(filepath.Join(opts.Bin, tool)); err != nil {
			return nil, fmt.Errorf("%s is missing from %s: run ./justw tools first", tool, opts.Bin)
		}
	}
	if err := os.MkdirAll(inv.StateDir, 0o700); err != nil {
		return nil, err
	}
	u := &upper{opts: opts, inv: inv, known: newKnownHosts(inv), out: opts.Out, dockerNew: map[string]bool{}}
	fmt.Fprintf(u.out, "[remote] preflight: %d hosts of %s\n", len(inv.Hosts), inv.Path)
	facts, err := Preflight(ctx, inv, u.known)
	if err != nil {
		return nil, fmt.Errorf("preflight failed, nothing was changed on any host:\n%w", err)
	}
	u.facts = facts
	if u.secrets, err = loadSecrets(inv.StateDir); err != nil {
		return nil, err
	}
	consul := product{name: "consul", bin: filepath.Join(opts.Bin, "consul"), version: strings.TrimPrefix(opts.ConsulVersion, "v"), dir: consulConfigDir}
	consul.pki = PKI{Product: "consul", Dir: filepath.Join(inv.StateDir, "tls", "consul"), Bin: consul.bin}
	nomad := product{name: "nomad", bin: filepath.Join(opts.Bin, "nomad"), version: strings.TrimPrefix(opts.NomadVersion, "v"), dir: nomadConfigDir}
	nomad.pki = PKI{Product: "nomad", Dir: filepath.Join(inv.StateDir, "tls", "nomad"), Bin: nomad.bin}
	for _, p := range []PKI{consul.pki, nomad.pki} {
		if err := p.ensure(inv); err != nil {
			return nil, err
		}
	}
	u.consulPKI = consul.pki
	u.docker = DockerPKI{Dir: filepath.Join(inv.StateDir, "tls", "docker")}
	if err := u.docker.ensure(inv); err != nil {
		return nil, err
	}
	others := append(append([]Host{}, inv.Workers()...), inv.Clients()...)
	registry := net.JoinHostPort(inv.Clients()[0].Address, registryPort)

	// Docker first: the Nomad clients fingerprint its driver when they start
	if err := u.installDocker(ctx, registry); err != nil {
		return nil, err
	}
	if err := u.formSwarm(ctx); err != nil {
		return nil, err
	}
	if err := u.startRegistry(ctx, registry); err != nil {
		return nil, err
	}

	// Consul: the servers first, so that clients join a cluster with a
	// leader; then the ACL objects whose secrets the agents already carry.
	renderConsul := func(h agentHost) string { return consulConfig(inv, h, u.secrets) }
	server := inv.Servers()[0]
	consulAPI, err := newAPIClient("https://"+net.JoinHostPort(server.Address, "8501"), consul.pki, "X-Consul-Token", u.secrets.ConsulManagement)
	if err != nil {
		return nil, err
	}
	// a restarted server is back when its own API names a leader again
	settle := func(api *apiClient, port string) func(Host) error {
		return func(h Host) error {
			own := api.at("https://" + net.JoinHostPort(h.Address, port))
			return waitFor(ctx, 60*time.Second, h.Name+" sees a leader", func() error { return own.leaderKnown(ctx) })
		}
	}
	if err := u.installAgents(ctx, consul, inv.Servers(), renderConsul, settle(consulAPI, "8501")); err != nil {
		return nil, err
	}
	if err := u.installAgents(ctx, consul, others, renderConsul, nil); err != nil {
		return nil, err
	}
	if err := waitFor(ctx, 90*time.Second, "Consul leader", func() error { return consulAPI.leaderKnown(ctx) }); err != nil {
		return nil, fmt.Errorf("%s: %w", server, err)
	}
	if err := waitFor(ctx, 60*time.Second, "Consul ACLs", func() error {
		changed, err := consulACL(ctx, consulAPI, u.secrets)
		if err == nil && changed {
			u.report(server, "consul", "ACL policies and tokens written")
		}
		return err
	}); err != nil {
		return nil, fmt.Errorf("%s: %w", server, err)
	}

	// Nomad: servers, their leader and ACLs, then the clients.
	renderNomad := func(h agentHost) string { return nomadConfig(inv, h, u.secrets, registry) }
	nomadAPI, err := newAPIClient("https://"+net.JoinHostPort(server.Address, "4646"), nomad.pki, "X-Nomad-Token", "")
	if err != nil {
		return nil, err
	}
	if err := u.installAgents(ctx, nomad, inv.Servers(), renderNomad, settle(nomadAPI, "4646")); err != nil {
		return nil, err
	}
	if err := waitFor(ctx, 90*time.Second, "Nomad leader", func() error { return nomadAPI.leaderKnown(ctx) }); err != nil {
		return nil, fmt.Errorf("%s: %w", server, err)
	}
	if err := waitFor(ctx, 60*time.Second, "Nomad ACLs", func() error {
		changed, err := nomadACL(ctx, nomadAPI, u.secrets)
		if err == nil && changed {
			u.report(server, "nomad", "ACL bootstrapped, harness policy and token written")
		}
		return err
	}); err != nil {
		return nil, fmt.Errorf("%s: %w", server, err)
	}
	if err := u.installAgents(ctx, nomad, others, renderNomad, nil); err != nil {
		return nil, err
	}
	if err := waitFor(ctx, 120*time.Second, fmt.Sprintf("%d Nomad clients ready", len(others)), func() error {
		var nodes []struct{ Name, Status string }
		if err := nomadAPI.with(u.secrets.NomadHarness).do(ctx, "GET", "/v1/nodes", nil, &nodes); err != nil {
			return err
		}
		ready := 0
		for _, n := range nodes {
			if n.Status == "ready" {
				ready++
			}
		}
		if ready < len(others) {
			return fmt.Errorf("%d of %d ready", ready, len(others))
		}
		return nil
	}); err != nil {
		return nil, err
	}
	nomadEnv := []string{
		"NOMAD_ADDR=https://" + net.JoinHostPort(server.Address, "4646"),
		"NOMAD_CACERT=" + nomad.pki.CA(), "NOMAD_TOKEN=" + u.secrets.NomadHarness,
	}
	u.nomadAPI = nomadAPI.with(u.secrets.NomadHarness)
	if err := u.deployInfra(ctx, nomadEnv); err != nil {
		return nil, err
	}
	env, err := writeEnv(inv, u.secrets, consul.pki, nomad.pki, u.docker)
	if err != nil {
		return nil, err
	}
	return &Summary{Changed: u.changed, EnvFile: env}, nil
}

// writeEnv writes the exports that point orchbench at the cluster, with
// the harness's scoped tokens (never the management ones): Nomad and
// Consul through the client host's agents, as on the emulated nodes, so
// that a lost server never cuts the harness off.
func writeEnv(inv *Inventory, s *Secrets, consul, nomad PKI, docker DockerPKI) (string, error) {
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	client := inv.Clients()[0]
	var b strings.Builder
	fmt.Fprintf(&b, "# the remote cluster of %s (orchbench remote env)\n", inv.Path)
	fmt.Fprintf(&b, "export NOMAD_ADDR=https://%s\n", net.JoinHostPort(client.Address, "4646"))
	fmt.Fprintf(&b, "export NOMAD_CACERT=%s\n", abs(nomad.CA()))
	fmt.Fprintf(&b, "export NOMAD_TOKEN=%s\n", s.NomadHarness)
	fmt.Fprintf(&b, "export CONSUL_HTTP_ADDR=https://%s\n", net.JoinHostPort(client.Address, "8501"))
	fmt.Fprintf(&b, "export CONSUL_HTTP_SSL=true\n")
	fmt.Fprintf(&b, "export CONSUL_CACERT=%s\n", abs(consul.CA()))
	fmt.Fprintf(&b, "export CONSUL_CLIENT_CERT=%s\n", abs(consul.Cert(CLIName)))
	fmt.Fprintf(&b, "export CONSUL_CLIENT_KEY=%s\n", abs(consul.Key(CLIName)))
	fmt.Fprintf(&b, "export CONSUL_HTTP_TOKEN=%s\n", s.ConsulHarness)
	// Swarm through the first server's engine (the harness reaches every
	// other node's at the same port, with the same certificate)
	fmt.Fprintf(&b, "export DOCKER_HOST=tcp://%s\n", net.JoinHostPort(inv.Servers()[0].Address, dockerPort))
	fmt.Fprintf(&b, "export DOCKER_TLS_VERIFY=1\n")
	fmt.Fprintf(&b, "export DOCKER_CERT_PATH=%s\n", abs(docker.CertPath()))
	fmt.Fprintf(&b, "export ORCHBENCH_REGISTRY=%s\n", net.JoinHostPort(client.Address, registryPort))
	fmt.Fprintf(&b, "export ORCHBENCH_PROBE_TOKEN_FILE=%s\n", abs(s.Path("probe.token")))
	// results pushed to the cluster's VictoriaMetrics (HTTPS, the password);
	// the report links to its VictoriaLogs
	fmt.Fprintf(&b, "export ORCHBENCH_VM_URL=https://orchbench:%s@%s\n", s.SinkPassword, net.JoinHostPort(client.Address, vmPort))
	fmt.Fprintf(&b, "export ORCHBENCH_VM_CACERT=%s\n", abs(docker.CA()))
	fmt.Fprintf(&b, "export ORCHBENCH_VL_URL=https://%s\n", net.JoinHostPort(client.Address, vlPort))
	path := filepath.Join(inv.StateDir, "env")
	return path, os.WriteFile(path, []byte(b.String()), 0o600)
}
