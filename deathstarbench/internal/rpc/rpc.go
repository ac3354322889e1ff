// Package rpc carries the Thrift calls of the social network and the media
// microservices: binary protocol over framed transport, as DeathStarBench's
// C++ services use, so that per-call framing and serialisation cost stay
// comparable.
package rpc

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
)

func init() {
	// A pooled client keeps its connection open between calls, and
	// TSimpleServer.Stop otherwise waits for every such connection to go away.
	thrift.ServerStopTimeout = 2 * time.Second
}

// Options tune a client pool. DefaultOptions are DeathStarBench's where it
// has them: its ClientPool keeps up to 512 clients per target
// (service-config.json's "connections") and waits timeout_ms (10 s) for a
// free one. Its sockets bound neither the connect nor a call; here the
// connect waits as long as a free connection would, and a call up to the
// front end's 30 s budget for a whole request.
type Options struct {
	// Connections bounds the connections open to one address, idle and in
	// use together; idle ones are kept for reuse. Overload shows as waiting
	// for a connection, not as more connections.
	Connections int
	// WaitTimeout bounds the wait for a free connection when all
	// Connections are in use; ConnectTimeout bounds dialling; CallTimeout
	// bounds each socket read and write (and so each call, one write and
	// one read).
	WaitTimeout    time.Duration
	ConnectTimeout time.Duration
	CallTimeout    time.Duration
}

// DefaultOptions suit calls between services on one cluster.
func DefaultOptions() Options {
	return Options{Connections: 512, WaitTimeout: 10 * time.Second, ConnectTimeout: 10 * time.Second, CallTimeout: 30 * time.Second}
}

// withDefaults fills unset fields from DefaultOptions.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.Connections <= 0 {
		o.Connections = d.Connections
	}
	if o.WaitTimeout <= 0 {
		o.WaitTimeout = d.WaitTimeout
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = d.ConnectTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = d.CallTimeout
	}
	return o
}

// Client is a thrift.TClient backed by a pool of connections per upstream
// address. The generated clients are not safe for concurrent use on one
// connection; wrapping the pool instead of the connection makes them so.
type Client struct {
	opts Options
	set  atomic.Pointer[replicaSet]
	next atomic.Uint64

	mu sync.Mutex // serializes SetAddr and Close
}

// replicaSet is the addresses a client calls, one pool each.
type replicaSet struct {
	addr  string
	pools []*pool
}

// NewClient returns a pool for addr; connections are opened lazily, so a
// service can start before its upstreams do. A comma-separated addr (the
// replicas of a horizontally scaled upstream, as the pack's Consul
// templates list them) spreads calls round-robin over one pool per address,
// each bounded by opts.Connections.
func NewClient(addr string, opts Options) *Client {
	c := &Client{opts: opts.withDefaults()}
	c.set.Store(c.replicas(addr, nil))
	return c
}

// replicas builds the set for addr, reusing the pools of old whose address
// is still listed.
func (c *Client) replicas(addr string, old *replicaSet) *replicaSet {
	var parts []string
	for _, part := range strings.Split(addr, ",") {
		if part = strings.TrimSpace(part); part != "" {
			parts = append(parts, part)
		}
	}
	if len(parts) == 0 {
		parts = []string{addr}
	}
	set := &replicaSet{addr: addr}
	for _, part := range parts {
		var p *pool
		if old != nil {
			for _, o := range old.pools {
				if o.addr == part {
					p = o
				}
			}
		}
		if p == nil {
			p = newPool(part, c.opts)
		}
		set.pools = append(set.pools, p)
	}
	return set
}

// SetAddr points the client at addr from the next call on: pools of
// addresses still listed keep their connections, those of addresses no
// longer listed are closed (their calls in flight finish). The socialnet
// binary calls it when the orchestrator renders new upstream addresses,
// so that a moved replica costs its callers no restart.
func (c *Client) SetAddr(addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.set.Load()
	if old.addr == addr {
		return
	}
	set := c.replicas(addr, old)
	c.set.Store(set)
	for _, o := range old.pools {
		if !slices.Contains(set.pools, o) {
			o.close()
		}
	}
}

// Addr is the upstream address (or comma-separated addresses) this client calls.
func (c *Client) Addr() string { return c.set.Load().addr }

// Call implements thrift.TClient.
func (c *Client) Call(ctx context.Context, method string, args, result thrift.TStruct) (thrift.ResponseMeta, error) {
	set := c.set.Load()
	p := set.pools[0]
	if len(set.pools) > 1 {
		p = set.pools[c.next.Add(1)%uint64(len(set.pools))]
	}
	cn, err := p.get(ctx)
	if err != nil {
		return thrift.ResponseMeta{}, err
	}
	meta, err := cn.client.Call(ctx, method, args, result)
	if err != nil {
		// After a transport or protocol error the stream position is unknown.
		p.discard(cn)
		return meta, fmt.Errorf("%s %s: %w", p.addr, method, err)
	}
	p.put(cn)
	return meta, nil
}

// Close closes idle connections and fails calls waiting for one; calls in
// flight finish and close theirs.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.set.Load().pools {
		p.close()
	}
	return nil
}

// Listener is a bound Thrift server socket. Binding comes before serving so
// that ephemeral ports can be learnt and handed to dependants first.
type Listener struct {
	socket *thrift.TServerSocket

	mu     sync.Mutex
	server *thrift.TSimpleServer
	done   bool
}

// Listen binds addr; use port 0 for an ephemeral port.
func Listen(addr string) (*Listener, error) {
	socket, err := thrift.NewTServerSocket(addr)
	if err != nil {
		return nil, err
	}
	if err := socket.Listen(); err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	return &Listener{socket: socket}, nil
}

// Addr is the bound address.
func (l *Listener) Addr() net.Addr { return l.socket.Addr() }

// Serve handles calls with processor until Stop.
func (l *Listener) Serve(processor thrift.TProcessor) error {
	conf := &thrift.TConfiguration{}
	server := thrift.NewTSimpleServer4(processor, l.socket, serverTransports(conf), binaryProtocolFactory{conf})
	l.mu.Lock()
	if l.done {
		l.mu.Unlock()
		return nil
	}
	l.server = server
	l.mu.Unlock()
	return server.Serve()
}

// serverTransports stacks a server's transports as newConn does a client's.
func serverTransports(conf *thrift.TConfiguration) thrift.TTransportFactory {
	return thrift.NewTFramedTransportFactoryConf(thrift.NewTBufferedTransportFactory(frameWriteBuffer), conf)
}

// Stop closes the listener and waits briefly for connections to drain.
func (l *Listener) Stop() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done = true
	if l.server != nil {
		return l.server.Stop()
	}
	return l.socket.Close()
}
