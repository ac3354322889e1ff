package remote

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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

// configFiles are the agent's configuration and certificates on a host.
// remote up writes them itself, over its SSH connection whose host key
// it checked: hashi-up, which does not check host keys, carries only the
// public binary and writes the systemd unit.
func (p product) configFiles(h Host, config string) (map[string]hostFile, error) {
	files := map[string]hostFile{p.dir + "/" + p.name + ".hcl": {[]byte(config), 0o640}}
	for remote, local := range map[string]string{
		p.dir + "/ca.pem":                 p.pki.CA(),
		p.dir + "/" + h.Name + ".pem":     p.pki.Cert(h.Name),
		p.dir + "/" + h.Name + "-key.pem": p.pki.Key(h.Name),
	} {
		b, err := os.ReadFile(local)
		if err != nil {
			return nil, err
		}
		files[remote] = hostFile{b, secretMode(remote)}
	}
	return files, nil
}

// hashiUp installs p's binary and systemd unit on h with hashi-up: the
// pinned binary as its package (no host downloads anything), the
// configuration left as remote up wrote it; hashi-up starts the agent, or
// restarts it when the binary changed.
func (u *upper) hashiUp(ctx context.Context, p product, h Host) error {
	pkg, err := zipPackage(p.bin, filepath.Join(u.inv.StateDir, "packages"))
	if err != nil {
		return err
	}
	args := []string{p.name, "install",
		"--ssh-target-addr", h.SSHAddr(), "--ssh-target-user", h.User, "--ssh-target-key", h.Key,
		"--version", p.version, "--package", pkg, "--skip-config"}
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

// installAgents brings p up on hosts at once: the configuration written
// where it differs, the binary installed with hashi-up where it differs
// or no unit exists, the agent restarted when only its configuration
// changed; nothing when all is as it should be.
//
// Servers go one at a time, each waited for (settle) before the next
// restarts: a raft of three keeps its quorum through a configuration
// change. settle is nil for the other hosts, which go all at once.
func (u *upper) installAgents(ctx context.Context, p product, hosts []Host, render func(agentHost) string, settle func(Host) error) error {
	binSum, err := fileSum(p.bin)
	if err != nil {
		return err
	}
	each := eachHost
	if settle != nil {
		each = oneHostAtATime
	}
	return each(hosts, func(h Host) error {
		files, err := p.configFiles(h, render(u.agentHost(h)))
		if err != nil {
			return err
		}
		c, err := Dial(ctx, h, u.known, dialTimeout)
		if err != nil {
			return &HostError{Host: h, Step: p.name, Err: err}
		}
		defer c.Close()
		changedConfig, active, err := syncFiles(c, p.name, files)
		if err != nil {
			return &HostError{Host: h, Step: p.name + " configuration", Err: err}
		}
		if changedConfig && p.name == "consul" {
			// the agent runs as the user hashi-up makes, and reads these
			if _, err := c.Run("if id consul >/dev/null 2>&1; then chown -R consul:consul "+p.dir+"; fi", nil); err != nil {
				return &HostError{Host: h, Step: p.name + " configuration", Err: err}
			}
		}
		binPath, unitPath := "/usr/local/bin/"+p.name, "/etc/systemd/system/"+p.name+".service"
		have, _, err := remoteSums(c, p.name, []string{binPath, unitPath})
		if err != nil {
			return &HostError{Host: h, Step: p.name, Err: err}
		}
		switch {
		case have[binPath] != binSum || have[unitPath] == "":
			if err := u.hashiUp(ctx, p, h); err != nil {
				return &HostError{Host: h, Step: p.name, Err: err}
			}
			if changedConfig && have[binPath] == binSum {
				// hashi-up restarts only for a new binary
				if _, err := c.Run("systemctl restart "+p.name, nil); err != nil {
					return &HostError{Host: h, Step: p.name, Err: err}
				}
			}
			u.report(h, p.name, "installed")
		case changedConfig || !active:
			if _, err := c.Run("systemctl restart "+p.name, nil); err != nil {
				return &HostError{Host: h, Step: p.name, Err: err}
			}
			u.report(h, p.name, "configuration written, restarted")
			if settle != nil {
				if err := settle(h); err != nil {
					return &HostError{Host: h, Step: p.name + " back in its raft", Err: err}
				}
			}
		case p.name == "nomad" && u.dockerNew[h.Name]:
			// its drivers and CNI plugins are fingerprinted when it starts
			if _, err := c.Run("systemctl restart nomad", nil); err != nil {
				return &HostError{Host: h, Step: p.name, Err: err}
			}
			u.report(h, p.name, "restarted (Docker and the CNI plugins are new)")
		default:
			u.report(h, p.name, "unchanged")
		}
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
	// consulPKI makes VictoriaMetrics' scrape certificate
	consulPKI PKI
	// nomadAPI reaches the first server with the harness's token
	nomadAPI *apiClient
	debsMu   sync.Mutex
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
