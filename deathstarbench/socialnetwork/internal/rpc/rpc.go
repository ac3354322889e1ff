// Package rpc carries the social network's Thrift calls: binary protocol over
// framed transport, as DeathStarBench's C++ services use, so that per-call
// framing and serialisation cost stay comparable.
package rpc

import (
	"context"
	"errors"
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

// Options tune a client pool.
type Options struct {
	// MaxIdle is how many idle connections are kept for reuse; more
	// concurrent calls than that open extra connections that are closed
	// after use, so bursts never queue behind the pool.
	MaxIdle int
	// ConnectTimeout bounds dialling; CallTimeout bounds each socket
	// read/write (and so each call, since a call is one write and one read).
	ConnectTimeout time.Duration
	CallTimeout    time.Duration
}

// DefaultOptions suit calls between services on one cluster.
func DefaultOptions() Options {
	return Options{MaxIdle: 64, ConnectTimeout: 2 * time.Second, CallTimeout: 10 * time.Second}
}

func (o Options) conf() *thrift.TConfiguration {
	return &thrift.TConfiguration{
		ConnectTimeout: o.ConnectTimeout,
		SocketTimeout:  o.CallTimeout,
	}
}

// Client is a thrift.TClient backed by a pool of connections to one address.
// The generated clients are not safe for concurrent use on one connection;
// wrapping the pool instead of the connection makes them so.
type Client struct {
	addr string
	opts Options

	mu     sync.Mutex
	idle   []*conn
	closed bool

	replicas []*Client // one pool per address when addr lists several
	next     atomic.Uint64
}

type conn struct {
	transport thrift.TTransport
	client    *thrift.TStandardClient
}

// NewClient returns a pool for addr; connections are opened lazily, so a
// service can start before its upstreams do. A comma-separated addr (the
// replicas of a horizontally scaled upstream, as the pack's Consul
// templates list them) spreads calls round-robin over one pool per address.
func NewClient(addr string, opts Options) *Client {
	if opts.MaxIdle <= 0 {
		opts.MaxIdle = DefaultOptions().MaxIdle
	}
	c := &Client{addr: addr, opts: opts}
	if parts := strings.Split(addr, ","); len(parts) > 1 {
		for _, part := range parts {
			if part = strings.TrimSpace(part); part != "" {
				c.replicas = append(c.replicas, NewClient(part, opts))
			}
		}
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
	cn, err := c.get()
	if err != nil {
		return thrift.ResponseMeta{}, err
	}
	meta, err := cn.client.Call(ctx, method, args, result)
	if err != nil {
		// After a transport or protocol error the stream position is unknown.
		cn.transport.Close()
		return meta, fmt.Errorf("%s %s: %w", c.addr, method, err)
	}
	c.put(cn)
	return meta, nil
}

func (c *Client) get() (*conn, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errors.New("rpc client closed")
	}
	if n := len(c.idle); n > 0 {
		cn := c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		return cn, nil
	}
	c.mu.Unlock()

	conf := c.opts.conf()
	socket := thrift.NewTSocketConf(c.addr, conf)
	transport := thrift.NewTFramedTransportConf(socket, conf)
	if err := transport.Open(); err != nil {
		return nil, fmt.Errorf("connect %s: %w", c.addr, err)
	}
	protocol := thrift.NewTBinaryProtocolConf(transport, conf)
	return &conn{transport: transport, client: thrift.NewTStandardClient(protocol, protocol)}, nil
}

func (c *Client) put(cn *conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || len(c.idle) >= c.opts.MaxIdle {
		cn.transport.Close()
		return
	}
	c.idle = append(c.idle, cn)
}

// Close closes idle connections; calls in flight finish and close theirs.
func (c *Client) Close() error {
	for _, replica := range c.replicas {
		replica.Close()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, cn := range c.idle {
		cn.transport.Close()
	}
	c.idle = nil
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
	server := thrift.NewTSimpleServer4(processor, l.socket,
		thrift.NewTFramedTransportFactoryConf(thrift.NewTTransportFactory(), conf),
		thrift.NewTBinaryProtocolFactoryConf(conf))
	l.mu.Lock()
	if l.done {
		l.mu.Unlock()
		return nil
	}
	l.server = server
	l.mu.Unlock()
	return server.Serve()
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
