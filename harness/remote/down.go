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
# Nomad first, so that it restarts no task while the rest goes
systemctl disable --now nomad >/dev/null 2>&1 || true
if command -v docker >/dev/null 2>&1 && systemctl is-active -q docker; then
  docker swarm leave --force >/dev/null 2>&1 || true
  ids=$(docker ps -aq)
  [ -z "$ids" ] || docker rm -f $ids >/dev/null 2>&1 || true
fi
systemctl disable --now orchbench-registry >/dev/null 2>&1 || true
rm -f /etc/systemd/system/orchbench-registry.service
for s in nomad consul; do
  systemctl disable --now "$s" >/dev/null 2>&1 || true
  rm -f "/etc/systemd/system/$s.service" "/usr/local/bin/$s"
  rm -rf "/etc/$s.d"
done
if [ -d /opt/nomad ]; then
  awk '$2 ~ "^/opt/nomad/" {print $2}' /proc/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
fi
rm -rf /opt/nomad /opt/consul
id consul >/dev/null 2>&1 && userdel consul
# Docker: purged when remote up installed it, else only our configuration goes
if [ -s /var/lib/orchbench/installed-packages ]; then
  systemctl stop docker docker.socket containerd >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive dpkg --purge $(cat /var/lib/orchbench/installed-packages) >/var/log/orchbench-docker-purge.log 2>&1 \
    || { tail -n 5 /var/log/orchbench-docker-purge.log >&2; exit 1; }
  find /var/lib/docker -mindepth 1 -maxdepth 1 -exec rm -rf {} + 2>/dev/null || true
  rm -rf /etc/docker
else
  rm -rf /etc/docker/orchbench /etc/docker/certs.d/*:5000 /etc/systemd/system/docker.service.d/orchbench.conf
  [ -f /etc/docker/daemon.json ] && rm -f /etc/docker/daemon.json && systemctl daemon-reload && systemctl restart docker >/dev/null 2>&1 || true
fi
rm -rf /etc/orchbench /opt/orchbench /var/lib/orchbench
systemctl daemon-reload
# units that were stopped hard would stay listed as failed
systemctl reset-failed >/dev/null 2>&1
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
		fmt.Fprintf(out, "[remote] %-16s removed nomad, consul, docker, the swarm, the registry and the probe\n", h.Name)
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
