package remote

import (
	"context"
	"fmt"
	"net"
	"strings"
)

// formSwarm makes the hosts one swarm as the emulated nodes are
// (cluster/nodes-agents.sh swarm_form): the first server initialises it,
// the other servers join as managers, workers and the client as workers;
// managers are drained and every node carries its role as labels. A host
// already in the swarm is left as it is.
func (u *upper) formSwarm(ctx context.Context) error {
	first := u.inv.Servers()[0]
	fc, err := Dial(ctx, first, u.known, dialTimeout)
	if err != nil {
		return &HostError{Host: first, Step: "swarm", Err: err}
	}
	defer fc.Close()
	state := func(c *Conn) (string, error) {
		out, err := c.Run("docker info --format '{{.Swarm.LocalNodeState}}'", nil)
		return strings.TrimSpace(out), err
	}
	st, err := state(fc)
	if err != nil {
		return &HostError{Host: first, Step: "swarm", Err: err}
	}
	if st != "active" {
		if _, err := fc.Run(fmt.Sprintf("docker swarm init --advertise-addr %s --listen-addr %s", first.Address, net.JoinHostPort(first.Address, "2377")), nil); err != nil {
			return &HostError{Host: first, Step: "swarm init", Err: err}
		}
		u.report(first, "swarm", "initialised")
	}
	tokens := map[string]string{}
	for _, kind := range []string{"manager", "worker"} {
		out, err := fc.Run("docker swarm join-token -q "+kind, nil)
		if err != nil {
			return &HostError{Host: first, Step: "swarm join-token", Err: err}
		}
		tokens[kind] = strings.TrimSpace(out)
	}
	var joined []Host
	if st != "active" {
		joined = append(joined, first)
	}
	for _, h := range u.inv.Hosts[1:] {
		if h.Name == first.Name {
			continue
		}
		c, err := Dial(ctx, h, u.known, dialTimeout)
		if err != nil {
			return &HostError{Host: h, Step: "swarm", Err: err}
		}
		hs, err := state(c)
		if err == nil && hs != "active" {
			kind := "worker"
			if h.Role == RoleServer {
				kind = "manager"
			}
			_, err = c.Run(fmt.Sprintf("docker swarm join --token %s --advertise-addr %s --listen-addr %s %s",
				tokens[kind], h.Address, net.JoinHostPort(h.Address, "2377"), net.JoinHostPort(first.Address, "2377")), nil)
			if err == nil {
				u.report(h, "swarm", "joined as "+kind)
				joined = append(joined, h)
			}
		}
		c.Close()
		if err != nil {
			return &HostError{Host: h, Step: "swarm join", Err: err}
		}
	}
	for _, h := range joined {
		args := []string{"docker node update"}
		for _, kv := range nodeMeta(u.agentHost(h)) {
			args = append(args, "--label-add", shellQuote(kv[0]+"="+kv[1]))
		}
		if h.Role == RoleServer {
			args = append(args, "--availability drain")
		}
		args = append(args, shellQuote(h.Name))
		if _, err := fc.Run(strings.Join(args, " ")+" >/dev/null", nil); err != nil {
			return &HostError{Host: h, Step: "swarm labels", Err: err}
		}
	}
	if len(joined) == 0 {
		u.report(first, "swarm", "unchanged")
	}
	return nil
}
