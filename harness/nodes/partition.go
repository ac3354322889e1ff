package nodes

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// The cut is iptables rules in the node's own network namespace, not
// `docker network disconnect`: a disconnected container loses its
// interface and address, its agents see the network vanish rather than go
// silent (they rebind, log other errors), and reconnecting must restore the
// fixed address by hand. A DROP on the node's cluster interface is what a
// failed switch port looks like: the address stays, packets vanish in both
// directions, and everything that rides that interface goes with them
// (Consul's and Nomad's gossip and RPC, Swarm's VXLAN, the tasks' published
// ports, forwarded through FORWARD). Its own chain makes the cut one thing
// to add and remove. The same rules work on a real host (issue 25).
const partitionChain = "OBN-PARTITION"

// cutScript finds the interface holding the node's address ($1) and sends
// everything through it to the chain, which drops it. The removal is
// scheduled in the node itself ($2 seconds later), so the cut ends even if
// the harness does not live to end it, as it must be on a real host whose
// SSH session the cut also severs.
const cutScript = `set -eu
addr=$1 secs=$2 chain=` + partitionChain + `
dev=$(ip -o -4 addr show | awk -v a="$addr" '{split($4, p, "/"); if (p[1] == a) {print $2; exit}}')
[ -n "$dev" ] || { echo "no interface holds $addr"; exit 3; }
iptables -w -N $chain 2>/dev/null || { echo "$chain exists: the node is partitioned already"; exit 4; }
iptables -w -A $chain -j DROP
iptables -w -I INPUT 1 -i "$dev" -j $chain
iptables -w -I OUTPUT 1 -o "$dev" -j $chain
iptables -w -I FORWARD 1 -i "$dev" -j $chain
iptables -w -I FORWARD 1 -o "$dev" -j $chain
echo "$dev" >/run/obn-partition-dev
nohup sh -c "sleep $secs; sh /run/obn-heal.sh" >/dev/null 2>&1 &
`

// healScript removes every jump to the chain and the chain; running it
// twice (the node's timer, then the harness) is harmless.
const healScript = `chain=` + partitionChain + `
iptables -w -S $chain >/dev/null 2>&1 || exit 0
dev=$(cat /run/obn-partition-dev)
while iptables -w -D INPUT -i "$dev" -j $chain 2>/dev/null; do :; done
while iptables -w -D OUTPUT -o "$dev" -j $chain 2>/dev/null; do :; done
while iptables -w -D FORWARD -i "$dev" -j $chain 2>/dev/null; do :; done
while iptables -w -D FORWARD -o "$dev" -j $chain 2>/dev/null; do :; done
iptables -w -F $chain && iptables -w -X $chain
`

// Partition cuts the node off for d. The cut is in place when it returns;
// restored reports the end of it, checked: the chain must be gone.
func (e *Emulated) Partition(ctx context.Context, name string, d time.Duration) (<-chan error, error) {
	n, err := e.node(ctx, name)
	if err != nil {
		return nil, err
	}
	if !n.Running {
		return nil, fmt.Errorf("partition node %s: the node is down", name)
	}
	if d <= 0 {
		return nil, fmt.Errorf("partition node %s: a duration above 0 is needed, got %s", name, d)
	}
	if _, err := e.docker(ctx, "exec", "-i", n.Name, "sh", "-c", "cat >/run/obn-heal.sh <<'EOF'\n"+healScript+"EOF\n"); err != nil {
		return nil, fmt.Errorf("partition node %s: %w", name, err)
	}
	// the node's own timer ends the cut a little after the harness's, so
	// that the harness's is the one measured and the node's the safety net
	secs := strconv.Itoa(int(d.Seconds()) + 5)
	if _, err := e.docker(ctx, "exec", n.Name, "sh", "-c", cutScript, "cut", n.Address, secs); err != nil {
		return nil, fmt.Errorf("partition node %s: %w", name, err)
	}
	restored := make(chan error, 1)
	go func() {
		defer close(restored)
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
		// the restoration runs even when the step was cancelled: a node
		// left cut off would spoil every later step
		heal, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if _, err := e.docker(heal, "exec", n.Name, "sh", "/run/obn-heal.sh"); err != nil {
			restored <- fmt.Errorf("partition node %s: restore: %w", name, err)
			return
		}
		if _, err := e.docker(heal, "exec", n.Name, "iptables", "-w", "-S", partitionChain); err == nil {
			restored <- fmt.Errorf("partition node %s: chain %s is still there after the restore", name, partitionChain)
		}
	}()
	return restored, nil
}
