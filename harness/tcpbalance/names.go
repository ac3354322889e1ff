package tcpbalance

import (
	"context"
	"net"
	"sync"
	"time"
)

// A backend given by name (an orchestrator's DNS name standing for every
// replica: a Swarm service in dnsrr mode, a Kubernetes Service) is looked
// up once a second, not once a connection: an entry taking a new
// connection per request would otherwise ask the cluster's DNS as often as
// it is asked for pages (a thousand a second here, times a pod's search
// domains), and fail the requests whose lookups the DNS server dropped.
// Each connection takes the next address of the latest answer, so replicas
// added are reached within a second.

// nameTTL is how long an answer is used.
const nameTTL = time.Second

type nameCache struct {
	mu      sync.Mutex
	entries map[string]*nameEntry
}

type nameEntry struct {
	addrs []string
	at    time.Time
	next  int
}

// pick returns host:port with the host's next address, or backend as it
// is when it names an address, or when it was never resolved (the dial
// then resolves it and says why it failed).
func (c *nameCache) pick(ctx context.Context, backend string) string {
	return c.addresses(ctx, backend)[0]
}

// addresses are host:port for each of the host's addresses, from the next
// in turn: a replica that is starting refuses, and the connection tries
// the others, as a dial of the name would. backend alone when it names an
// address or was never resolved.
func (c *nameCache) addresses(ctx context.Context, backend string) []string {
	host, port, err := net.SplitHostPort(backend)
	if err != nil || net.ParseIP(host) != nil {
		return []string{backend}
	}
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]*nameEntry{}
	}
	e := c.entries[host]
	stale := e == nil || time.Since(e.at) > nameTTL
	c.mu.Unlock()
	if stale {
		lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		addrs, err := net.DefaultResolver.LookupHost(lctx, host)
		cancel()
		c.mu.Lock()
		if e == nil {
			e = &nameEntry{}
			c.entries[host] = e
		}
		if err == nil && len(addrs) > 0 {
			e.addrs = addrs
		}
		// a failed lookup keeps the last answer for another second
		e.at = time.Now()
		c.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(e.addrs) == 0 {
		return []string{backend}
	}
	out := make([]string, 0, len(e.addrs))
	for i := range e.addrs {
		out = append(out, net.JoinHostPort(e.addrs[(e.next+i)%len(e.addrs)], port))
	}
	e.next++
	return out
}
