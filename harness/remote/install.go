package remote

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// product is one HashiCorp agent hashi-up installs.
type product struct {
	name    string // consul, nomad
	bin     string // the pinned binary on the harness machine
	version string // without the v
	pki     PKI
	dir     string // its configuration directory on a host
}

// agentFiles are the files a host's agent is made of, remote path to
// local path: what a second run compares to decide nothing changed.
func (p product) agentFiles(h Host, config string) map[string]string {
	return map[string]string{
		"/usr/local/bin/" + p.name:        p.bin,
		p.dir + "/" + p.name + ".hcl":     config,
		p.dir + "/ca.pem":                 p.pki.CA(),
		p.dir + "/" + h.Name + ".pem":     p.pki.Cert(h.Name),
		p.dir + "/" + h.Name + "-key.pem": p.pki.Key(h.Name),
	}
}

// upToDate says whether every file of the agent on the host has the sum
// of its local copy and the service runs.
func upToDate(c *Conn, service string, files map[string]string) (bool, error) {
	remote := make([]string, 0, len(files))
	for r := range files {
		remote = append(remote, r)
	}
	sort.Strings(remote)
	script := "for f in"
	for _, r := range remote {
		script += " " + shellQuote(r)
	}
	script += `; do [ -f "$f" ] && sha256sum "$f"; done; echo "active=$(systemctl is-active ` + service + `)"`
	out, err := c.Run(script, nil)
	if err != nil {
		return false, err
	}
	have := map[string]string{}
	active := false
	for _, line := range strings.Split(out, "\n") {
		if line == "active=active" {
			active = true
		}
		if sum, path, ok := strings.Cut(line, "  "); ok {
			have[path] = sum
		}
	}
	if !active {
		return false, nil
	}
	for r, l := range files {
		sum, err := fileSum(l)
		if err != nil {
			return false, err
		}
		if have[r] != sum {
			return false, nil
		}
	}
	return true, nil
}

// hashiUp installs p on h with hashi-up: the pinned binary as its package
// (no host downloads anything), our configuration and the host's
// certificates; hashi-up writes the systemd unit and restarts the agent
// when something changed.
func (u *upper) hashiUp(ctx context.Context, p product, h Host, config string) error {
	pkg, err := zipPackage(p.bin, filepath.Join(u.inv.StateDir, "packages"))
	if err != nil {
		return err
	}
	args := []string{p.name, "install",
		"--ssh-target-addr", h.SSHAddr(), "--ssh-target-user", h.User, "--ssh-target-key", h.Key,
		"--version", p.version, "--package", pkg, "--config-file", config,
		"--file", p.pki.CA(), "--file", p.pki.Cert(h.Name), "--file", p.pki.Key(h.Name)}
	logPath := filepath.Join(u.inv.StateDir, "logs", h.Name+"-"+p.name+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return err
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, u.opts.hashiUp(), args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	_ = os.WriteFile(logPath, out.Bytes(), 0o600)
	if runErr != nil {
		return fmt.Errorf("hashi-up %s install: %w; last lines of %s:\n%s", p.name, runErr, logPath, lastLines(out.String(), 8))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}

// installAgents brings p up on hosts at once, each only when its files or
// its service differ from what it should be.
func (u *upper) installAgents(ctx context.Context, p product, hosts []Host, render func(agentHost) string) error {
	return eachHost(hosts, func(h Host) error {
		ah := u.agentHost(h)
		cfgDir := filepath.Join(u.inv.StateDir, "hosts", h.Name)
		if err := os.MkdirAll(cfgDir, 0o700); err != nil {
			return err
		}
		cfg := filepath.Join(cfgDir, p.name+".hcl")
		if err := os.WriteFile(cfg, []byte(render(ah)), 0o600); err != nil {
			return err
		}
		c, err := Dial(ctx, h, u.known, dialTimeout)
		if err != nil {
			return &HostError{Host: h, Step: p.name, Err: err}
		}
		ok, err := upToDate(c, p.name, p.agentFiles(h, cfg))
		c.Close()
		if err != nil {
			return &HostError{Host: h, Step: p.name, Err: err}
		}
		if ok && p.name == "nomad" && u.dockerNew[h.Name] {
			// its drivers and CNI plugins are fingerprinted when it starts
			if c, err := Dial(ctx, h, u.known, dialTimeout); err == nil {
				_, err = c.Run("systemctl restart nomad", nil)
				c.Close()
				if err != nil {
					return &HostError{Host: h, Step: p.name, Err: err}
				}
				u.report(h, p.name, "restarted (Docker and the CNI plugins are new)")
				return nil
			}
		}
		if ok {
			u.report(h, p.name, "unchanged")
			return nil
		}
		if err := u.hashiUp(ctx, p, h, cfg); err != nil {
			return &HostError{Host: h, Step: p.name, Err: err}
		}
		u.report(h, p.name, "installed")
		return nil
	})
}

// report logs one host's step and remembers whether anything changed.
func (u *upper) report(h Host, step, what string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if what != "unchanged" {
		u.changed = append(u.changed, h.Name+": "+step+" "+what)
	}
	fmt.Fprintf(u.out, "[remote] %-16s %-8s %s\n", h.Name, step, what)
}

type upper struct {
	opts    Options
	inv     *Inventory
	known   *knownHosts
	facts   map[string]Facts
	secrets *Secrets
	docker  DockerPKI
	debsMu  sync.Mutex
	// dockerNew names the hosts Docker was installed on in this run
	dockerNew map[string]bool
	out       io.Writer
	mu        sync.Mutex
	changed   []string
}

func (u *upper) agentHost(h Host) agentHost {
	ah := agentHost{Host: h}
	for _, o := range u.inv.Hosts {
		if o.Role == h.Role {
			ah.Index++
		}
		if o.Name == h.Name {
			break
		}
	}
	if f := u.facts[h.Name]; f.MemoryLimitMiB > 0 && f.MemoryLimitMiB < f.MemoryMiB {
		ah.MemoryMiB = f.MemoryLimitMiB
	}
	return ah
}
