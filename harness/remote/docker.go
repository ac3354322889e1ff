package remote

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// dockerPackages are Debian's Docker and the CNI plugins Nomad's bridge
// networking needs.
var dockerPackages = []string{"docker.io", "containernetworking-plugins"}

const (
	dockerTLSDir   = "/etc/docker/orchbench"
	dockerPort     = "2376"
	registryPort   = "5000"
	dockerDropIn   = "/etc/systemd/system/docker.service.d/orchbench.conf"
	dockerDaemonJS = "/etc/docker/daemon.json"
)

// dockerDaemonConfig: the engine on its socket (for the host's own Nomad
// agent) and on TCP with mutual TLS (for the harness); its cgroups under
// systemd's, so that a host that is a slice or a container keeps its
// tasks inside its own budget.
func dockerDaemonConfig(h Host) ([]byte, error) {
	cfg := map[string]any{
		"hosts":      []string{"fd://", "tcp://" + net.JoinHostPort(h.Address, dockerPort)},
		"tls":        true,
		"tlsverify":  true,
		"tlscacert":  dockerTLSDir + "/ca.pem",
		"tlscert":    dockerTLSDir + "/cert.pem",
		"tlskey":     dockerTLSDir + "/key.pem",
		"exec-opts":  []string{"native.cgroupdriver=systemd"},
		"log-driver": "json-file",
		"log-opts":   map[string]string{"max-size": "20m", "max-file": "3"},
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	return append(b, '\n'), err
}

// Debian's unit passes -H fd://, and dockerd refuses hosts given both as a
// flag and in daemon.json: the drop-in leaves them to daemon.json.
const dockerDropInText = `[Service]
ExecStart=
ExecStart=/usr/sbin/dockerd --containerd=/run/containerd/containerd.sock
`

// dockerFiles are a host's Docker configuration, remote path to content.
func (u *upper) dockerFiles(h Host, registry string) (map[string][]byte, error) {
	pem, err := readAll(map[string]string{"ca": u.docker.CA(), "cert": u.docker.Cert(h.Name), "key": u.docker.Key(h.Name)}, 0)
	if err != nil {
		return nil, err
	}
	ca, cert, key := pem["ca"].data, pem["cert"].data, pem["key"].data
	daemon, err := dockerDaemonConfig(h)
	if err != nil {
		return nil, err
	}
	// the engine trusts the registry's CA and shows its own certificate
	// to it (/etc/docker/certs.d/HOST:PORT, Docker's own convention)
	certsd := "/etc/docker/certs.d/" + registry
	return map[string][]byte{
		dockerTLSDir + "/ca.pem":   ca,
		dockerTLSDir + "/cert.pem": cert,
		dockerTLSDir + "/key.pem":  key,
		dockerDaemonJS:             daemon,
		dockerDropIn:               []byte(dockerDropInText),
		certsd + "/ca.crt":         ca,
		certsd + "/client.cert":    cert,
		certsd + "/client.key":     key,
	}, nil
}

// remoteSums returns sha256 sums of paths on the host and whether unit runs.
func remoteSums(c *Conn, unit string, paths []string) (map[string]string, bool, error) {
	script := "for f in"
	for _, p := range paths {
		script += " " + shellQuote(p)
	}
	script += `; do [ -f "$f" ] && sha256sum "$f"; done; echo "active=$(systemctl is-active ` + unit + `)"`
	out, err := c.Run(script, nil)
	if err != nil {
		return nil, false, err
	}
	sums := map[string]string{}
	active := false
	for _, line := range strings.Split(out, "\n") {
		if line == "active=active" {
			active = true
		}
		if sum, path, ok := strings.Cut(line, "  "); ok {
			sums[path] = sum
		}
	}
	return sums, active, nil
}

func sum(b []byte) string { return fmt.Sprintf("%x", sha256.Sum256(b)) }

// installDocker puts Debian's docker.io on every host that lacks it (the
// packages downloaded here, so a host needs no registry) and the engine's
// TLS configuration on each; the engine restarts only when that changed.
func (u *upper) installDocker(ctx context.Context, registry string) error {
	return eachHost(u.inv.Hosts, func(h Host) error {
		files, err := u.dockerFiles(h, registry)
		if err != nil {
			return err
		}
		c, err := Dial(ctx, h, u.known, dialTimeout)
		if err != nil {
			return &HostError{Host: h, Step: "docker", Err: err}
		}
		defer c.Close()
		changedConfig, active, err := syncFiles(c, "docker", asHostFiles(files))
		if err != nil {
			return &HostError{Host: h, Step: "docker config", Err: err}
		}
		if !u.facts[h.Name].Docker {
			if err := u.installDebs(ctx, c, h); err != nil {
				return &HostError{Host: h, Step: "docker install", Err: err}
			}
			u.report(h, "docker", "installed (Debian's "+strings.Join(dockerPackages, ", ")+")")
			u.mu.Lock()
			u.dockerNew[h.Name] = true
			u.mu.Unlock()
			active = false
		}
		if changedConfig || !active {
			if _, err := c.Run("systemctl daemon-reload && systemctl enable docker >/dev/null 2>&1; systemctl restart docker && systemctl is-active docker", nil); err != nil {
				out, _ := c.Run("journalctl -u docker --no-pager -n 12 2>&1 || true", nil)
				return &HostError{Host: h, Step: "docker start", Err: fmt.Errorf("%w\n%s", err, out)}
			}
			u.report(h, "docker", "configured (TLS on "+net.JoinHostPort(h.Address, dockerPort)+") and restarted")
			return nil
		}
		u.report(h, "docker", "unchanged")
		return nil
	})
}

// installDebs downloads here the packages the host lacks, resolved by apt
// against the host's own dpkg status (so nothing it has is replaced), and
// installs them there with dpkg.
func (u *upper) installDebs(ctx context.Context, c *Conn, h Host) error {
	status, err := c.Run("cat /var/lib/dpkg/status", nil)
	if err != nil {
		return err
	}
	dir, err := u.downloadDebs(ctx, []byte(status))
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	n := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".deb") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: e.Name(), Mode: 0o644, Size: int64(len(b))}); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
		n++
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("apt found nothing to download for %v in %s", dockerPackages, dir)
	}
	_, err = c.Run(`set -e
d=/var/cache/orchbench/debs; rm -rf "$d"; mkdir -p "$d"; tar -x -C "$d"
# what remote down purges again: only what was not on the host before
mkdir -p /var/lib/orchbench
for f in "$d"/*.deb; do dpkg-deb -f "$f" Package; done >/var/lib/orchbench/installed-packages
DEBIAN_FRONTEND=noninteractive dpkg -i "$d"/*.deb >/var/log/orchbench-docker-install.log 2>&1 || { tail -n 15 /var/log/orchbench-docker-install.log >&2; exit 1; }
rm -rf "$d"`, &buf)
	return err
}

// downloadDebs fetches what dpkg status lacks of dockerPackages into a
// cache directory keyed by the status and the list; hosts made alike share it.
func (u *upper) downloadDebs(ctx context.Context, status []byte) (string, error) {
	u.debsMu.Lock()
	defer u.debsMu.Unlock()
	key := sum(append(append([]byte{}, status...), []byte(strings.Join(dockerPackages, " "))...))[:12]
	cache := u.opts.Cache
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "orchbench")
	}
	dir := filepath.Join(cache, "debs", "remote-"+key)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(filepath.Dir(u.inv.StateDir), "debs-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(filepath.Join(tmp, "archives", "partial"), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, "status"), status, 0o644); err != nil {
		return "", err
	}
	args := []string{"-q", "-o", "Dir::State::status=" + filepath.Join(tmp, "status"),
		"-o", "Dir::Cache::archives=" + filepath.Join(tmp, "archives"), "-o", "Debug::NoLocking=1",
		"install", "--download-only", "-y", "--no-install-recommends"}
	args = append(args, dockerPackages...)
	run := func() ([]byte, error) { return exec.CommandContext(ctx, "apt-get", args...).CombinedOutput() }
	out, err := run()
	if err != nil {
		// stale package lists name versions the mirror no longer has
		if up, uerr := exec.CommandContext(ctx, "apt-get", "-q", "update").CombinedOutput(); uerr != nil {
			return "", fmt.Errorf("apt-get update on this machine: %w: %s", uerr, lastLines(string(up), 5))
		}
		if out, err = run(); err != nil {
			return "", fmt.Errorf("apt-get download of %v (this machine's apt, the host's dpkg status): %w:\n%s", dockerPackages, err, lastLines(string(out), 8))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	debs, _ := filepath.Glob(filepath.Join(tmp, "archives", "*.deb"))
	for _, d := range debs {
		if err := os.Rename(d, filepath.Join(dir, filepath.Base(d))); err != nil {
			return "", err
		}
	}
	return dir, os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644)
}
