package remote

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Secrets are what remote up generates once per inventory and keeps on the
// harness machine only (StateDir/secrets, each file 0600): a second run
// reads them back, so the hosts' configuration does not change.
type Secrets struct {
	dir string
	// ConsulGossip and NomadGossip encrypt the agents' gossip.
	ConsulGossip, NomadGossip string
	// ConsulManagement and NomadManagement are the management tokens:
	// Consul's is set as its initial_management token, Nomad's is the
	// operator-made bootstrap secret.
	ConsulManagement, NomadManagement string
	// ConsulAgent is every Consul agent's own token (node registration);
	// ConsulNomad the Nomad agents' token for Consul (services, checks).
	ConsulAgent, ConsulNomad string
	// ConsulHarness and NomadHarness are the harness's scoped tokens.
	ConsulHarness, NomadHarness string
	// Probe is the token the node probes want (ORCHBENCH_PROBE_TOKEN_FILE).
	Probe string
	// ConsulMetrics and NomadMetrics are read-only tokens for
	// VictoriaMetrics' scrapes and the node agent's lookups; SinkPassword
	// guards VictoriaMetrics and VictoriaLogs (user orchbench).
	ConsulMetrics, NomadMetrics, SinkPassword string
}

// secretFiles name each secret's file.
var secretFiles = []struct {
	file string
	get  func(*Secrets) *string
	make func() (string, error)
}{
	{"consul-gossip.key", func(s *Secrets) *string { return &s.ConsulGossip }, gossipKey},
	{"nomad-gossip.key", func(s *Secrets) *string { return &s.NomadGossip }, gossipKey},
	{"consul-management.token", func(s *Secrets) *string { return &s.ConsulManagement }, uuid},
	{"nomad-management.token", func(s *Secrets) *string { return &s.NomadManagement }, uuid},
	{"consul-agent.token", func(s *Secrets) *string { return &s.ConsulAgent }, uuid},
	{"consul-nomad.token", func(s *Secrets) *string { return &s.ConsulNomad }, uuid},
	{"consul-harness.token", func(s *Secrets) *string { return &s.ConsulHarness }, uuid},
	{"probe.token", func(s *Secrets) *string { return &s.Probe }, uuid},
	{"consul-metrics.token", func(s *Secrets) *string { return &s.ConsulMetrics }, uuid},
	{"sink.password", func(s *Secrets) *string { return &s.SinkPassword }, uuid},
	{"nomad-metrics.token", func(s *Secrets) *string { return &s.NomadMetrics }, nil},
	// Nomad makes a token's secret itself: written once the token exists
	{"nomad-harness.token", func(s *Secrets) *string { return &s.NomadHarness }, nil},
}

// loadSecrets reads the inventory's secrets, making the missing ones.
func loadSecrets(stateDir string) (*Secrets, error) {
	s := &Secrets{dir: filepath.Join(stateDir, "secrets")}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.Chmod(stateDir, 0o700); err != nil {
		return nil, err
	}
	for _, f := range secretFiles {
		path := filepath.Join(s.dir, f.file)
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			*f.get(s) = strings.TrimSpace(string(b))
		case os.IsNotExist(err) && f.make != nil:
			v, err := f.make()
			if err != nil {
				return nil, err
			}
			if err := writeSecret(path, v); err != nil {
				return nil, err
			}
			*f.get(s) = v
		case os.IsNotExist(err):
		default:
			return nil, err
		}
	}
	return s, nil
}

// Path is where the secret file named file is.
func (s *Secrets) Path(file string) string { return filepath.Join(s.dir, file) }

func (s *Secrets) setNomadHarness(secret string) error {
	s.NomadHarness = secret
	return writeSecret(s.Path("nomad-harness.token"), secret)
}

func (s *Secrets) setNomadMetrics(secret string) error {
	s.NomadMetrics = secret
	return writeSecret(s.Path("nomad-metrics.token"), secret)
}

func writeSecret(path, v string) error {
	return os.WriteFile(path, []byte(v+"\n"), 0o600)
}

// gossipKey is 32 random bytes in base64, what `consul keygen` and
// `nomad operator gossip keyring generate` print.
func gossipKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

func uuid() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:]), nil
}

// PKI is the CA and the certificates of one product (consul or nomad),
// made by the product's own `tls` commands in StateDir/tls/PRODUCT.
type PKI struct {
	Product string // "consul" or "nomad"
	Dir     string
	Bin     string
}

// CA is the CA certificate's path.
func (p PKI) CA() string { return filepath.Join(p.Dir, "ca.pem") }

// Cert and Key are host's certificate and key.
func (p PKI) Cert(host string) string { return filepath.Join(p.Dir, host+".pem") }
func (p PKI) Key(host string) string  { return filepath.Join(p.Dir, host+"-key.pem") }

// ensure makes the CA once and a certificate for every host that lacks
// one: a server certificate for servers (it answers to the product's
// server name, which verify_server_hostname checks), a client one for the
// others, each also valid for the host's address and name.
func (p PKI) ensure(inv *Inventory) error {
	if err := os.MkdirAll(p.Dir, 0o700); err != nil {
		return err
	}
	if _, err := os.Stat(p.CA()); os.IsNotExist(err) {
		tmp, err := os.MkdirTemp(p.Dir, "ca-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		if err := p.run(tmp, "tls", "ca", "create"); err != nil {
			return err
		}
		if err := moveOne(tmp, "-agent-ca-key.pem", filepath.Join(p.Dir, "ca-key.pem")); err != nil {
			return err
		}
		if err := moveOne(tmp, "-agent-ca.pem", p.CA()); err != nil {
			return err
		}
	}
	// the harness's, and VictoriaMetrics' for its scrapes
	for _, name := range []string{CLIName, MetricsCertName} {
		if err := p.ensureCLI(inv, name); err != nil {
			return err
		}
	}
	for _, h := range inv.Hosts {
		if _, err := os.Stat(p.Cert(h.Name)); err == nil {
			continue
		}
		tmp, err := os.MkdirTemp(p.Dir, "cert-")
		if err != nil {
			return err
		}
		kind := "-client"
		if h.Role == RoleServer {
			kind = "-server"
		}
		args := []string{"tls", "cert", "create", kind, "-ca", p.CA(), "-key", filepath.Join(p.Dir, "ca-key.pem"),
			"-additional-dnsname", h.Name, "-days", "825"}
		if p.Product == "consul" {
			args = append(args, "-dc", inv.Datacenter)
			if h.Role == RoleServer {
				args = append(args, "-node", h.Name)
			}
		}
		if ipLike(h.Address) {
			args = append(args, "-additional-ipaddress", h.Address)
		} else {
			args = append(args, "-additional-dnsname", h.Address)
		}
		err = p.run(tmp, args...)
		if err == nil {
			err = moveOne(tmp, "-key.pem", p.Key(h.Name))
		}
		if err == nil {
			err = moveOne(tmp, ".pem", p.Cert(h.Name))
		}
		os.RemoveAll(tmp)
		if err != nil {
			return fmt.Errorf("%s certificate for %s: %w", p.Product, h.Name, err)
		}
	}
	return nil
}

// CLIName names the harness's own certificate, the one a client of the
// product's HTTPS API shows (Consul's requires one).
const CLIName = "harness"

// MetricsCertName names the certificate VictoriaMetrics scrapes with.
const MetricsCertName = "metrics"

func (p PKI) ensureCLI(inv *Inventory, name string) error {
	if _, err := os.Stat(p.Cert(name)); err == nil {
		return nil
	}
	tmp, err := os.MkdirTemp(p.Dir, "cli-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	args := []string{"tls", "cert", "create", "-cli", "-ca", p.CA(), "-key", filepath.Join(p.Dir, "ca-key.pem"), "-days", "825"}
	if p.Product == "consul" {
		args = append(args, "-dc", inv.Datacenter)
	}
	if err := p.run(tmp, args...); err != nil {
		return err
	}
	if err := moveOne(tmp, "-key.pem", p.Key(name)); err != nil {
		return err
	}
	return moveOne(tmp, ".pem", p.Cert(name))
}

func (p PKI) run(dir string, args ...string) error {
	cmd := exec.Command(p.Bin, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", p.Bin, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// moveOne renames the one file in dir whose name ends in suffix to dst.
func moveOne(dir, suffix, dst string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var found []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), suffix) && !(suffix == ".pem" && strings.HasSuffix(e.Name(), "-key.pem")) {
			found = append(found, e.Name())
		}
	}
	if len(found) != 1 {
		return fmt.Errorf("expected one file ending in %s in %s, found %v", suffix, dir, found)
	}
	return os.Rename(filepath.Join(dir, found[0]), dst)
}
