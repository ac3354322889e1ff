package hotelreservation

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
)

// reresolveEvery is how long a resolution of an upstream's names is
// trusted: Swarm's dnsrr names a task only while it runs, and a replaced
// task comes back at a new address.
const reresolveEvery = 5 * time.Second

// unresolvedRetry is how soon a resolution that found no address at all
// is tried again: a name of an upstream that is not running yet (Swarm
// adds a task's name once it runs) must not leave the channels without
// an address for a whole reresolveEvery after it appears.
const unresolvedRetry = 250 * time.Millisecond

// upstream is the gRPC channels to one upstream service. Its address is a
// comma-separated list of host:port: instance addresses from Consul on
// Nomad, or one DNS name on Swarm and Kubernetes. Names are resolved here,
// again every few seconds and whenever a connection fails, so every
// instance a name lists gets calls (round robin). Several channels are
// kept because a Kubernetes ClusterIP is one address: kube-proxy picks an
// instance per TCP connection, and one HTTP/2 connection would pin every
// call to one pod.
type upstream struct {
	name   string
	logger *slog.Logger
	lookup func(ctx context.Context, host string) ([]string, error)

	channels []*grpc.ClientConn
	next     atomic.Uint64

	mu        sync.Mutex
	addrs     []string
	resolvers []*manual.Resolver
	resolved  []resolver.Address
	at        time.Time
	refresh   chan struct{}
	stop      context.CancelFunc
}

// lookupHost resolves an upstream's name (a test replaces it).
var lookupHost = net.DefaultResolver.LookupHost

// serviceConfig spreads calls over every resolved address.
const serviceConfig = `{"loadBalancingConfig":[{"round_robin":{}}]}`

func newUpstream(name, addrs string, channels int, logger *slog.Logger) (*upstream, error) {
	u := &upstream{name: name, logger: logger, lookup: lookupHost, refresh: make(chan struct{}, 1)}
	u.addrs = splitAddrs(addrs)
	if len(u.addrs) == 0 {
		return nil, fmt.Errorf("no address for upstream %s (--%s-addr or %s)", name, name, AddrEnv(name))
	}
	initial := u.resolve()
	for i := range max(channels, 1) {
		r := manual.NewBuilderWithScheme(fmt.Sprintf("hotel-%s-%d", strings.ReplaceAll(name, "-", ""), i))
		r.InitialState(resolver.State{Addresses: initial})
		r.ResolveNowCallback = func(resolver.ResolveNowOptions) { u.poke() }
		cc, err := grpc.NewClient(r.Scheme()+":///"+name,
			grpc.WithResolvers(r),
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultServiceConfig(serviceConfig),
			// The original's clients keep idle connections alive the same way.
			grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 120 * time.Second, PermitWithoutStream: true}),
		)
		if err != nil {
			u.Close()
			return nil, fmt.Errorf("upstream %s: %w", name, err)
		}
		u.resolvers = append(u.resolvers, r)
		u.channels = append(u.channels, cc)
	}
	ctx, cancel := context.WithCancel(context.Background())
	u.stop = cancel
	go u.keepResolving(ctx)
	return u, nil
}

func splitAddrs(addrs string) []string {
	var out []string
	for _, a := range strings.Split(addrs, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// conn is the next channel, round robin.
func (u *upstream) conn() *grpc.ClientConn {
	return u.channels[u.next.Add(1)%uint64(len(u.channels))]
}

// set points the channels at a new address list from their next call on.
func (u *upstream) set(addrs string) {
	u.mu.Lock()
	u.addrs = splitAddrs(addrs)
	u.at = time.Time{}
	u.mu.Unlock()
	u.poke()
}

func (u *upstream) poke() {
	select {
	case u.refresh <- struct{}{}:
	default:
	}
}

// resolve turns the address list into socket addresses: an IP as it is,
// a name by a DNS lookup (every address it has); a name that does not
// resolve yet is left out, and the list stays as it was when none does.
func (u *upstream) resolve() []resolver.Address {
	u.mu.Lock()
	addrs := slices.Clone(u.addrs)
	u.mu.Unlock()
	var out []resolver.Address
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			u.logger.Warn("upstream address is not host:port", "upstream", u.name, "addr", a)
			continue
		}
		if net.ParseIP(host) != nil {
			out = append(out, resolver.Address{Addr: a})
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		ips, err := u.lookup(ctx, host)
		cancel()
		if err != nil {
			u.logger.Debug("upstream name does not resolve yet", "upstream", u.name, "name", host, "error", err)
			continue
		}
		slices.Sort(ips)
		for _, ip := range ips {
			out = append(out, resolver.Address{Addr: net.JoinHostPort(ip, port)})
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(out) == 0 && len(u.resolved) > 0 {
		return u.resolved
	}
	u.resolved, u.at = out, time.Now()
	return out
}

// keepResolving updates the channels when the resolution changes: every
// reresolveEvery, or at once after a failed connection or a new list.
func (u *upstream) keepResolving(ctx context.Context) {
	ticker := time.NewTicker(reresolveEvery)
	defer ticker.Stop()
	last := u.resolvedNow()
	for {
		var soon <-chan time.Time
		if len(last) == 0 {
			soon = time.After(unresolvedRetry)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		case <-soon:
		case <-u.refresh:
			// A burst of failing calls asks many times; one lookup a second is enough.
			u.mu.Lock()
			recent := time.Since(u.at) < time.Second
			u.mu.Unlock()
			if recent {
				continue
			}
		}
		now := u.resolve()
		if slices.Equal(now, last) {
			continue
		}
		last = now
		u.logger.Info("upstream addresses changed", "upstream", u.name, "addrs", now)
		for _, r := range u.resolvers {
			r.UpdateState(resolver.State{Addresses: now})
		}
	}
}

func (u *upstream) resolvedNow() []resolver.Address {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.resolved)
}

// Close closes every channel.
func (u *upstream) Close() {
	if u.stop != nil {
		u.stop()
	}
	for _, cc := range u.channels {
		cc.Close()
	}
}

// upstreamSet holds the upstreams of the services in one process.
type upstreamSet struct {
	settings Settings

	mu     sync.Mutex
	byName map[string]*upstream
}

// get returns (making it once) the channels to upstream service name.
func (s *upstreamSet) get(name string) (*upstream, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u, ok := s.byName[name]; ok {
		return u, nil
	}
	u, err := newUpstream(name, s.settings.Addrs[name], s.settings.GRPCChannels, s.settings.Logger)
	if err != nil {
		return nil, err
	}
	if s.byName == nil {
		s.byName = map[string]*upstream{}
	}
	s.byName[name] = u
	return u, nil
}

// set re-points upstream name; false when this process calls no such service.
func (s *upstreamSet) set(name, addrs string) bool {
	s.mu.Lock()
	u, ok := s.byName[name]
	s.mu.Unlock()
	if ok {
		u.set(addrs)
	}
	return ok
}

func (s *upstreamSet) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.byName {
		u.Close()
	}
}
