package remote

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

const (
	orchbenchBin     = "/opt/orchbench/bin"
	registryUnitPath = "/etc/systemd/system/orchbench-registry.service"
)

// registryConfig: the distribution project's registry on the client
// host's address, TLS with the host's Docker certificate and mutual: only
// an engine of this cluster (its certificate of the Docker CA, shown from
// /etc/docker/certs.d) pulls or pushes.
func registryConfig(addr string) string {
	return fmt.Sprintf(`version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: /var/lib/orchbench/registry
  delete:
    enabled: true
http:
  addr: %s
  tls:
    certificate: %s/cert.pem
    key: %s/key.pem
    clientcas:
      - %s/ca.pem
`, addr, dockerTLSDir, dockerTLSDir, dockerTLSDir)
}

const registryUnit = `[Unit]
Description=orchbench image registry (orchbench remote up)
After=network-online.target
Wants=network-online.target

[Service]
ExecStart=/opt/orchbench/bin/registry serve /etc/orchbench/registry.yml
Restart=on-failure
RestartSec=2

[Install]
WantedBy=multi-user.target
`

// startRegistry runs the pinned registry on the client host as a systemd
// service; it restarts only when its binary or configuration changed.
func (u *upper) startRegistry(ctx context.Context, registry string) error {
	h := u.inv.Clients()[0]
	bin, err := os.ReadFile(filepath.Join(u.opts.Bin, "registry"))
	if err != nil {
		return fmt.Errorf("the registry binary: %w (./justw tools registry)", err)
	}
	c, err := Dial(ctx, h, u.known, dialTimeout)
	if err != nil {
		return &HostError{Host: h, Step: "registry", Err: err}
	}
	defer c.Close()
	changed, active, err := syncFiles(c, "orchbench-registry", map[string]hostFile{
		orchbenchBin + "/registry":    {bin, 0o755},
		"/etc/orchbench/registry.yml": {[]byte(registryConfig(registry)), 0o644},
		registryUnitPath:              {[]byte(registryUnit), 0o644},
	})
	if err != nil {
		return &HostError{Host: h, Step: "registry", Err: err}
	}
	if !changed && active {
		u.report(h, "registry", "unchanged")
		return nil
	}
	if _, err := c.Run("systemctl daemon-reload && systemctl enable orchbench-registry >/dev/null 2>&1 && systemctl restart orchbench-registry", nil); err != nil {
		return &HostError{Host: h, Step: "registry", Err: err}
	}
	// what an engine's pull does: TLS to our CA, a certificate of it shown
	hc, err := u.docker.httpClient()
	if err != nil {
		return err
	}
	if err := waitFor(ctx, 30*time.Second, "registry", func() error {
		resp, err := hc.Get("https://" + registry + "/v2/")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("GET /v2/: %s", resp.Status)
		}
		return nil
	}); err != nil {
		out, _ := c.Run("journalctl -u orchbench-registry --no-pager -n 10 2>&1 || true", nil)
		return &HostError{Host: h, Step: "registry", Err: fmt.Errorf("%w\n%s", err, out)}
	}
	u.report(h, "registry", "serving https://"+registry+" (mutual TLS)")
	return nil
}
