package swarm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sync"
	"time"
)

// managerDialTimeout bounds a connection attempt to one manager's engine:
// a killed node's address does not refuse, it stays silent, and every API
// call would otherwise wait out the kernel's connect timeout before the
// next manager is tried.
const managerDialTimeout = 2 * time.Second

// managerDialer connects the adapter's one Docker client to whichever of
// the swarm's managers answers: the one DOCKER_HOST names first, then the
// others the swarm lists, each reached the way the first is (the same
// scheme and port, cluster/nodes.sh). Every manager serves the whole Swarm
// API (a follower forwards to the leader), so when the manager the harness
// was pointed at is killed the harness keeps the API the cluster still has,
// as a client of a real HA swarm with a load balancer in front of its
// managers would: the HA-on figures of kill-leader are then the cluster's
// loss, not the harness's. With one manager there is nothing to fail over
// to, and the record says the harness lost its API (APIEndpoint). The
// manager's own engine (NodeEngines' self) goes through the same client, so
// after a failover its containers are looked up on another manager: managers
// are drained here (as in study 002) and run no task to look up.
type managerDialer struct {
	primary string // host:port of the manager DOCKER_HOST names
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)

	mu      sync.Mutex
	others  []string // host:port of the other managers' engines
	current string   // the last address that answered
}

// newManagerDialer fails over from the engine at host (a DOCKER_HOST) when
// it is reached over TCP; nil for a local socket, where the manager is this
// machine's own engine and there is no other to reach.
func newManagerDialer(host string) *managerDialer {
	u, err := url.Parse(host)
	if err != nil || (u.Scheme != "tcp" && u.Scheme != "http") || u.Port() == "" {
		return nil
	}
	d := &net.Dialer{Timeout: managerDialTimeout, KeepAlive: 30 * time.Second}
	return &managerDialer{primary: u.Host, current: u.Host, dial: d.DialContext}
}

// DialContext is the transport's dialer: addr is always the primary's
// (the client's host), so it is replaced by the manager that answered last
// and, when that one does not answer, by each of the others in turn.
func (m *managerDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if addr != m.primary {
		return m.dial(ctx, network, addr)
	}
	var errs []error
	for _, a := range m.order() {
		conn, err := m.dial(ctx, network, a)
		if err == nil {
			m.mu.Lock()
			m.current = a
			m.mu.Unlock()
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("no swarm manager answers: %w", errors.Join(errs...))
}

// order is the last address that answered, then the primary, then the
// others, without repeats.
func (m *managerDialer) order() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []string{m.current}
	for _, a := range append([]string{m.primary}, m.others...) {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// noteManagers records the managers' swarm addresses (ip:2377, as the
// node list and docker info give them) as engine addresses on the
// primary's port. Called whenever the adapter reads them, so a manager
// added or removed since is followed.
func (m *managerDialer) noteManagers(swarmAddrs []string) {
	if m == nil {
		return
	}
	_, port, err := net.SplitHostPort(m.primary)
	if err != nil {
		return
	}
	var others []string
	for _, sa := range swarmAddrs {
		host := sa
		if h, _, err := net.SplitHostPort(sa); err == nil {
			host = h
		}
		if net.ParseIP(host) == nil {
			continue
		}
		a := net.JoinHostPort(host, port)
		if a != m.primary && !slices.Contains(others, a) {
			others = append(others, a)
		}
	}
	slices.Sort(others)
	m.mu.Lock()
	m.others = others
	m.mu.Unlock()
}

// canFailOver reports whether another manager is known.
func (m *managerDialer) canFailOver() bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.others) > 0
}
