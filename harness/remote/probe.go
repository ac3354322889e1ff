package remote

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

const (
	probeTokenPath = "/etc/orchbench/probe.token"
	probePort      = "7070"
)

// deployProbes puts the orchbench binary and the probe's token on every
// Nomad client host and runs the node-probe system job there with levant
// (cluster/jobs.sh), as the embedded and emulated clusters do: the harness
// reads each task's limits through the probe of its host, showing the token.
func (u *upper) deployProbes(ctx context.Context, nomadEnv []string) error {
	bin, err := os.ReadFile(u.opts.Orchbench)
	if err != nil {
		return fmt.Errorf("the orchbench binary for the node probe: %w (just build)", err)
	}
	clients := append(append([]Host{}, u.inv.Workers()...), u.inv.Clients()...)
	if err := eachHost(clients, func(h Host) error {
		c, err := Dial(ctx, h, u.known, dialTimeout)
		if err != nil {
			return &HostError{Host: h, Step: "probe", Err: err}
		}
		defer c.Close()
		changed, _, err := syncFiles(c, "nomad", map[string]hostFile{
			orchbenchBin + "/orchbench": {bin, 0o755},
			probeTokenPath:              {[]byte(u.secrets.Probe + "\n"), 0o600},
		})
		if err != nil {
			return &HostError{Host: h, Step: "probe", Err: err}
		}
		if changed {
			u.report(h, "probe", "binary and token copied")
		}
		return nil
	}); err != nil {
		return err
	}
	vars := filepath.Join(u.inv.StateDir, "jobs.vars.yml")
	// the whole node_probe map: levant replaces a map, it does not merge it
	if err := os.WriteFile(vars, []byte(fmt.Sprintf(`# written by orchbench remote up for %s
datacenter: %s
node_probe:
  port: %s
  token_file: %s
  cpu_mhz: 50
  memory_mib: 64
`, u.inv.Path, u.inv.Datacenter, probePort, probeTokenPath)), 0o600); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(u.opts.Root, "cluster", "jobs.sh"), "deploy", "node-probe")
	cmd.Env = append(append(os.Environ(), nomadEnv...),
		"JOBS_VAR_FILE="+vars,
		"NODE_PROBE_BIN="+orchbenchBin+"/orchbench",
		"NODE_PROBE_SUM="+sum(bin)[:12])
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("node probe: cluster/jobs.sh deploy node-probe: %w\n%s", err, lastLines(out.String(), 6))
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	return eachHost(clients, func(h Host) error {
		url := "http://" + net.JoinHostPort(h.Address, probePort) + "/v1/identity"
		if err := waitFor(ctx, 60*time.Second, "node probe", func() error {
			// any answer is a probe up: a request naming no task is refused
			resp, err := hc.Post(url, "application/json", strings.NewReader("{}"))
			if err != nil {
				return err
			}
			resp.Body.Close()
			return nil
		}); err != nil {
			return &HostError{Host: h, Step: "probe", Err: fmt.Errorf("%w (nomad job status node-probe)", err)}
		}
		return nil
	})
}
