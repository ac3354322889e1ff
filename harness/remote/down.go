package remote

import (
	"context"
	"fmt"
	"io"
	"os"
)

// removeScript undoes what remote up installed on a host: the agents'
// services, binaries, configuration and data. Nomad's data directory may
// hold its tasks' mounts: they are unmounted first.
const removeScript = `set -u
for s in nomad consul; do
  systemctl disable --now "$s" >/dev/null 2>&1 || true
  rm -f "/etc/systemd/system/$s.service" "/usr/local/bin/$s"
  rm -rf "/etc/$s.d"
done
systemctl daemon-reload
if [ -d /opt/nomad ]; then
  awk '$2 ~ "^/opt/nomad/" {print $2}' /proc/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
fi
rm -rf /opt/nomad /opt/consul
id consul >/dev/null 2>&1 && userdel consul
true`

// Down removes what Up installed from every host it can reach, then this
// machine's secrets of the inventory. A host that cannot be reached is
// reported and its secrets kept, so a later down can finish it.
func Down(ctx context.Context, inv *Inventory, out io.Writer) error {
	known := newKnownHosts(inv)
	err := eachHost(inv.Hosts, func(h Host) error {
		c, err := Dial(ctx, h, known, dialTimeout)
		if err != nil {
			return &HostError{Host: h, Step: "ssh", Err: err}
		}
		defer c.Close()
		if _, err := c.Run(removeScript, nil); err != nil {
			return &HostError{Host: h, Step: "remove", Err: err}
		}
		fmt.Fprintf(out, "[remote] %-16s removed consul and nomad\n", h.Name)
		return nil
	})
	if err != nil {
		return fmt.Errorf("down did not finish; the secrets in %s are kept:\n%w", inv.StateDir, err)
	}
	if err := os.RemoveAll(inv.StateDir); err != nil {
		return err
	}
	fmt.Fprintf(out, "[remote] removed %s\n", inv.StateDir)
	return nil
}

// Check runs the preflight alone.
func Check(ctx context.Context, inv *Inventory) (map[string]Facts, error) {
	if err := os.MkdirAll(inv.StateDir, 0o700); err != nil {
		return nil, err
	}
	return Preflight(ctx, inv, newKnownHosts(inv))
}
