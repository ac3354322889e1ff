package rpc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
)

// ErrPoolExhausted is wrapped by the error of a call that found every
// connection to its target in use for the whole wait.
var ErrPoolExhausted = errors.New("no free connection")

// ErrClientClosed is returned by calls on a closed Client.
var ErrClientClosed = errors.New("rpc client closed")

// checkIdleAfter is how long a connection must have been idle before it is
// checked for a peer's close when taken: the check costs a system call, and
// under load connections come back within milliseconds, while an upstream
// that restarted leaves its connections idle for the seconds it was away.
const checkIdleAfter = time.Second

// pool holds the connections to one address, at most opts.Connections of
// them, as DeathStarBench's ClientPool does: idle ones are reused, a caller
// finding all in use waits for one to come back, and a broken one is closed
// and its place given to the next caller.
type pool struct {
	addr string
	opts Options

	// slots holds one token per connection in use (or being dialled). Idle
	// connections hold none, and a slot's holder dials only when no idle
	// connection is left, so idle plus in use never exceeds its capacity.
	// Blocked senders on a channel are served in arrival order, so waiters
	// are too.
	slots chan struct{}
	// done is closed by close, waking every waiter.
	done chan struct{}
	// waiting counts callers blocked for a slot.
	waiting atomic.Int32
	// checkIdleAfter is the package's constant; tests shorten it.
	checkIdleAfter time.Duration

	mu     sync.Mutex
	idle   []*conn
	closed bool
}

type conn struct {
	socket    *thrift.TSocket
	transport thrift.TTransport
	client    *thrift.TStandardClient
	idleSince time.Time
}

func newPool(addr string, opts Options) *pool {
	return &pool{
		addr:           addr,
		opts:           opts,
		slots:          make(chan struct{}, opts.Connections),
		done:           make(chan struct{}),
		checkIdleAfter: checkIdleAfter,
	}
}

// get returns a connection for one call; the caller hands it back with put
// when the call succeeded, or with discard when the socket failed.
func (p *pool) get(ctx context.Context) (*conn, error) {
	if err := p.acquire(ctx); err != nil {
		return nil, err
	}
	if cn, err := p.popIdle(); cn != nil || err != nil {
		if err != nil {
			p.release()
		}
		return cn, err
	}
	cn, err := p.dial(ctx)
	if err != nil {
		p.release()
		return nil, err
	}
	return cn, nil
}

// acquire takes a slot, waiting up to opts.WaitTimeout for one.
func (p *pool) acquire(ctx context.Context) error {
	// The uncontended path allocates no timer.
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-p.done:
		return ErrClientClosed
	default:
	}
	p.waiting.Add(1)
	defer p.waiting.Add(-1)
	timer := time.NewTimer(p.opts.WaitTimeout)
	defer timer.Stop()
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-p.done:
		return ErrClientClosed
	case <-ctx.Done():
		return fmt.Errorf("%s: waiting for a free connection (all %d in use): %w", p.addr, p.opts.Connections, ctx.Err())
	case <-timer.C:
		return fmt.Errorf("%s: %w after waiting %s (all %d connections in use)", p.addr, ErrPoolExhausted, p.opts.WaitTimeout, p.opts.Connections)
	}
}

func (p *pool) release() { <-p.slots }

// popIdle returns the most recently used idle connection the peer has not
// closed, or nil when none is left. Connections an upstream closed while
// idle (it restarted, say) are dropped here rather than failing a call.
func (p *pool) popIdle() (*conn, error) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClientClosed
	}
	for n := len(p.idle); n > 0; n = len(p.idle) {
		cn := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		// IsOpen peeks without blocking: it sees the peer's FIN or a reset.
		if now.Sub(cn.idleSince) < p.checkIdleAfter || cn.socket.IsOpen() {
			return cn, nil
		}
		cn.transport.Close()
	}
	return nil, nil
}

func (p *pool) dial(ctx context.Context) (*conn, error) {
	dialer := net.Dialer{Timeout: p.opts.ConnectTimeout}
	nc, err := dialer.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, fmt.Errorf("connect %s (waited up to %s): %w", p.addr, p.opts.ConnectTimeout, err)
	}
	return newConn(nc, &thrift.TConfiguration{SocketTimeout: p.opts.CallTimeout}), nil
}

// newConn stacks the client's transports on nc: framed, buffered so that a
// frame leaves in one write (frameWriteBuffer), binary protocol.
func newConn(nc net.Conn, conf *thrift.TConfiguration) *conn {
	socket := thrift.NewTSocketFromConnConf(nc, conf)
	transport := thrift.NewTFramedTransportConf(thrift.NewTBufferedTransport(socket, frameWriteBuffer), conf)
	protocol := NewBinaryProtocol(transport, conf)
	return &conn{socket: socket, transport: transport, client: thrift.NewTStandardClient(protocol, protocol)}
}

// put returns a connection whose call succeeded. It goes back to the idle
// list before its slot is freed: the other way round, a caller taking the
// slot could find no idle connection and dial one too many.
func (p *pool) put(cn *conn) {
	cn.idleSince = time.Now()
	p.mu.Lock()
	if p.closed {
		cn.transport.Close()
	} else {
		p.idle = append(p.idle, cn)
	}
	p.mu.Unlock()
	p.release()
}

// discard closes a connection whose stream position is unknown after a
// transport or protocol error, freeing its slot for a new connection.
func (p *pool) discard(cn *conn) {
	cn.transport.Close()
	p.release()
}

// close closes the idle connections and fails waiters and later calls;
// calls in flight close theirs when they finish.
func (p *pool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	close(p.done)
	for _, cn := range p.idle {
		cn.transport.Close()
	}
	p.idle = nil
}
