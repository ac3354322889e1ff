// Package rpc carries the social network's Thrift calls: binary protocol over
// framed transport, as DeathStarBench's C++ services use, so that per-call
// framing and serialisation cost stay comparable.
package rpc

import (
	"context"
	"fmt"
	"net"
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

// Client is a thrift.TClient backed by a pool of connections to one address.
// The generated clients are not safe for concurrent use on one connection;
// wrapping the pool instead of the connection makes them so.
type Client struct {
	addr string
	pool *pool

	replicas []*Client // one pool per address when addr lists several
	next     atomic.Uint64
}

// NewClient returns a pool for addr; connections are opened lazily, so a
// service can start before its upstreams do. A comma-separated addr (the
// replicas of a horizontally scaled upstream, as the pack's Consul
// templates list them) spreads calls round-robin over one pool per address,
// each bounded by opts.Connections.
func NewClient(addr string, opts Options) *Client {
	opts = opts.withDefaults()
	c := &Client{addr: addr}
	if parts := strings.Split(addr, ","); len(parts) > 1 {
		for _, part := range parts {
			if part = strings.TrimSpace(part); part != "" {
				c.replicas = append(c.replicas, NewClient(part, opts))
			}
		}
	}
	if len(c.replicas) == 0 {
		c.pool = newPool(addr, opts)
	}
	return c
}

// Addr is the upstream address this pool dials.
func (c *Client) Addr() string { return c.addr }

// Call implements thrift.TClient.
func (c *Client) Call(ctx context.Context, method string, args, result thrift.TStruct) (thrift.ResponseMeta, error) {
	if len(c.replicas) > 0 {
		return c.replicas[c.next.Add(1)%uint64(len(c.replicas))].Call(ctx, method, args, result)
	}
	cn, err := c.pool.get(ctx)
	if err != nil {
		return thrift.ResponseMeta{}, err
	}
	meta, err := cn.client.Call(ctx, method, args, result)
	if err != nil {
		// After a transport or protocol error the stream position is unknown.
		c.pool.discard(cn)
		return meta, fmt.Errorf("%s %s: %w", c.addr, method, err)
	}
	c.pool.put(cn)
	return meta, nil
}

// Close closes idle connections and fails calls waiting for one; calls in
// flight finish and close theirs.
func (c *Client) Close() error {
	for _, replica := range c.replicas {
		replica.Close()
	}
	if c.pool != nil {
		c.pool.close()
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
